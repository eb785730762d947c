"""Hostile mail over MIME structure, the doors it goes in by, and the figures kept.

Hypothesis builds raw messages over MIME structure (nested multiparts, charsets
real and bogus, RFC 2047 words, HTML-only, base64 and quoted-printable bodies,
huge headers, NUL and CR bytes, missing and duplicate headers). Each mail goes in
by one door, as a sender would see it:

* ``ingest``: ``Service.handle_raw``, answered with the exit code ``pbm ingest``
  gives for its status (``ANSWERS``; a process per mail would measure Python's
  start-up, not the server);
* ``webhook``: ``POST /inbound/email``, answered with an HTTP code;
* ``smtp``: the real ``pbm smtpd`` listener over a socket, answered with an SMTP code.

A "retry" answer (HTTP 5xx, SMTP 4xx, exit 75) makes senders and MTAs try again
for days while the player never hears: the figures count them, and every log
record at ERROR or carrying a traceback.
"""

from __future__ import annotations

import base64
import gc
import logging
import quopri
import smtplib
import time
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import strategies as st

from pbm.service.errors import EX_TEMPFAIL

CHARSETS = ["utf-8", "us-ascii", "iso-8859-1", "windows-1252", "utf-16", "utf-7", "shift_jis", "koi8-r",
            "x-no-such-charset", "zlib", "base64", "idna", ""]
ENCODINGS = ["7bit", "8bit", "base64", "quoted-printable", "x-uuencode", "binary", "bogus"]
SUBJECTS = ["help", "go show 101", "Re: Go Board 101 bob", "multiple", "go move 101 alice alicepw D5",
            "go challenge alice bob", "signup zed zedpw", "=?utf-8?q?go_show_101?=", "=?x-bogus?b?aGVscA==?=",
            "AW: Go Board 101 bob", ""]
LINES = ["D5", "pass", "resign", "help", "show", "go show 101", "-- ", "Sent from my iPhone", "> quoted",
         "On Sun, Nov 29, 2026 at 10:00 AM pbm <pbm@pbm.test> wrote:", "Von: pbm", "Gesendet: heute",
         "http://pbm.test/play/abc", "<blockquote>", "</blockquote>", "<br>", "&amp;", "\x00", "\r", "²", ""]

text = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(LINES), max_size=30).map("\n".join))


@st.composite
def leaf(draw):
    kind = draw(st.sampled_from(["text/plain", "text/html", "application/octet-stream", "message/rfc822",
                                 "text/plain; format=flowed", "image/png"]))
    charset = draw(st.sampled_from(CHARSETS))
    cte = draw(st.sampled_from(ENCODINGS))
    payload = draw(text)
    try:
        data = payload.encode(charset or "utf-8")
    except (LookupError, UnicodeError):
        data = payload.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = draw(st.binary(max_size=100))
    if cte == "base64" and draw(st.booleans()):
        data = base64.encodebytes(data)
    elif cte == "quoted-printable" and draw(st.booleans()):
        data = quopri.encodestring(data)
    disposition = draw(st.sampled_from([b"", b"Content-Disposition: attachment\r\n", b"Content-Disposition: inline\r\n"]))
    return (f"Content-Type: {kind}; charset=\"{charset}\"\r\nContent-Transfer-Encoding: {cte}\r\n".encode()
            + disposition + b"\r\n" + data)


def multipart(children):
    return st.tuples(st.sampled_from(["mixed", "alternative", "related", "report"]),
                     st.lists(children, min_size=0, max_size=4), st.booleans()).map(_join_parts)


def _join_parts(spec):
    subtype, parts, closed = spec
    boundary = b"b%d" % (sum(len(p) for p in parts) % 997)
    body = b"".join(b"--" + boundary + b"\r\n" + part + b"\r\n" for part in parts)
    return (b"Content-Type: multipart/" + subtype.encode() + b"; boundary=\"" + boundary + b"\"\r\n\r\n"
            + body + (b"--" + boundary + b"--\r\n" if closed else b""))


structure = st.recursive(leaf(), multipart, max_leaves=8)
header_value = st.one_of(st.text(max_size=80).map(lambda t: t.replace("\n", " ").encode("utf-8", "surrogatepass")),
                         st.binary(max_size=80),
                         st.sampled_from([b"x" * 70_000, b"=?utf-8?b?AAAA?=" * 50, b"(" * 2000, b"\"", b".:",
                                          b"a\r\n\tfolded", b"\x00"]))
SENDERS = [b"alice@players.test", b"Bob <bob@players.test>", b"carol@players.test", b"MAILER-DAEMON@mx.test",
           b"=?utf-8?q?Alice?= <alice@players.test>"]
ODD_SENDERS = [b"a@b@c", b"x\x00@y.test", b"<>", b"alice@players.test (\xff)", b"\"\"@players.test"]


@st.composite
def raw_mail(draw, reply_tag: str):
    """A raw message: mostly from a plausible sender (so it goes deep), one in five with odd headers."""
    odd = draw(st.integers(0, 4)) == 0
    pick = (lambda plausible: st.sampled_from(plausible) | header_value) if odd else st.sampled_from
    recipients = [reply_tag.encode(), b"pbm@pbm.test", b"pbm+101.wrongtoken@pbm.test",
                  b"pbm+" + b"9" * 30 + b".x@pbm.test"]
    headers = [b"From: " + draw(pick(SENDERS + ODD_SENDERS if odd else SENDERS)) for _ in range(draw(st.integers(1 - odd, 1 + odd)))]
    headers += [b"To: " + draw(pick(recipients)) for _ in range(draw(st.integers(1 - odd, 1 + odd)))]
    headers.append(b"Subject: " + draw(pick([s.encode() for s in SUBJECTS])))
    if draw(st.booleans()):
        headers.append(b"Message-ID: " + draw(pick([b"<m@x>", b"<a\rb@x>", b"", b"<" + b"i" * 600 + b">"])))
    for name in draw(st.lists(st.sampled_from([b"Auto-Submitted", b"Precedence", b"Return-Path", b"Cc",
                                               b"MIME-Version", b"X-Junk"]), max_size=3)):
        headers.append(name + b": " + draw(header_value))
    draw(st.randoms()).shuffle(headers)
    newline = draw(st.sampled_from([b"\r\n", b"\n", b"\r"]))
    raw = b"\r\n".join(headers) + b"\r\n" + draw(structure)
    return raw.replace(b"\r\n", newline)


DOORS = ("ingest", "webhook", "smtp")


class Doors:
    """One server's three doors; ``send`` returns the answer a sender would see."""

    def __init__(self, server, client, smtp_port: int):
        self.server, self.client, self.smtp_port = server, client, smtp_port

    def send(self, door: str, raw: bytes) -> int:
        if door == "ingest":
            return self.server.handle_raw(raw).answer.exit_code
        if door == "webhook":
            return self.client.post("/inbound/email", data=raw, content_type="message/rfc822").status_code
        # a fixed EHLO name: smtplib's default looks up this host's FQDN, which can wait on DNS
        with smtplib.SMTP("127.0.0.1", self.smtp_port, local_hostname="fuzz.players.test",
                          timeout=60) as smtp:
            try:
                smtp.sendmail("fuzz@players.test", ["pbm@pbm.test"], raw)
            except smtplib.SMTPResponseException as refused:
                return refused.smtp_code
            return 250


def is_retry(door: str, answer: int) -> bool:
    """Whether this answer asks the sender to try again later."""
    return {"ingest": answer == EX_TEMPFAIL, "webhook": answer >= 500, "smtp": 400 <= answer < 500}[door]


class ErrorLog(logging.Handler):
    """Keeps every log record at ERROR or above, or carrying a traceback."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(record)

    def __enter__(self):
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *_):
        logging.getLogger().removeHandler(self)


@dataclass
class Slowest:
    seconds: float = 0.0
    door: str = ""
    mail: bytes = b""
    collecting: float = 0.0  # of the seconds, in Python's garbage collector


class CollectorClock:
    """The CPU time Python's garbage collector has spent since this was made (a full
    collection walks every object of the process, the run's own included)."""

    def __init__(self):
        self.total, self._started = 0.0, 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, _info: dict) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.total += time.process_time() - self._started


@dataclass
class Figures:
    """What a run of hostile mails got: answers by door, retries, and each mail's time,
    both on the clock and in CPU (the CPU time of this whole process, server threads
    included, while the mail was handled: what the mail cost, whatever else the
    machine was doing)."""

    answers: Counter = field(default_factory=Counter)  # (door, answer) -> mails
    clock: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    slowest: Slowest = field(default_factory=Slowest)  # by CPU time
    collector: CollectorClock = field(default_factory=CollectorClock)

    def send(self, doors: Doors, door: str, raw: bytes) -> int:
        started, started_cpu, collected = time.perf_counter(), time.process_time(), self.collector.total
        answer = doors.send(door, raw)
        self.clock.append(time.perf_counter() - started)
        self.cpu.append(time.process_time() - started_cpu)
        self.answers[door, answer] += 1
        if self.cpu[-1] > self.slowest.seconds:
            self.slowest = Slowest(self.cpu[-1], door, raw, self.collector.total - collected)
        return answer

    @property
    def mails(self) -> int:
        return sum(self.answers.values())

    @property
    def retries(self) -> int:
        return sum(n for (door, answer), n in self.answers.items() if is_retry(door, answer))

    def lines(self) -> list[str]:
        return [f"{door:8} {answer:4}  {n:6} mails" for (door, answer), n in sorted(self.answers.items())]
