"""Hostile mail through the whole path: ``Service.handle_raw`` and the webhook.

Hypothesis builds raw messages over MIME structure (nested multiparts,
charsets real and bogus, RFC 2047 words, HTML-only, base64 and
quoted-printable bodies, huge headers, NUL and CR bytes, missing and
duplicate headers); tests/mail_samples/oddities/ holds a corpus of real
oddities. Whatever arrives: no exception and never "retry" from handle_raw,
the webhook answers 200, 400 or 413 only, and nothing is logged at ERROR
(no traceback). Each lane (SQLite, PostgreSQL) reads 650 generated mails.
"""

from __future__ import annotations

import base64
import logging
import quopri
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


ODDITIES = sorted(Path(__file__).parent.joinpath("mail_samples", "oddities").glob("*.eml"))
RUN = settings(max_examples=100, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large])
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


@pytest.fixture
def board(players, outbox):
    """Board 101 between alice and bob; its reply tag for bob."""
    players.send("alice@players.test", "go challenge alice bob")
    return str(outbox.to("bob@players.test")[-1]["Reply-To"])


def _handle(server, raw):
    result = server.handle_raw(raw)  # never raises: what went wrong is the status
    assert result.status in ("applied", "rejected", "duplicate", "ignored", "malformed"), result


def _no_errors_logged(caplog):
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors[0].getMessage()


def test_generated_mail_through_handle_raw(server, board, caplog):
    caplog.set_level(logging.ERROR)

    @settings(RUN, max_examples=450)
    @given(raw_mail(board))
    def check(raw):
        _handle(server, raw)
        _no_errors_logged(caplog)

    check()


def test_generated_mail_through_the_webhook(client, board, caplog):
    caplog.set_level(logging.ERROR)

    @settings(RUN, max_examples=200)
    @given(raw_mail(board))
    def check(raw):
        answer = client.post("/inbound/email", data=raw, content_type="message/rfc822")
        assert answer.status_code in (200, 400, 413), answer.get_data(as_text=True)
        _no_errors_logged(caplog)

    check()


@pytest.mark.parametrize("sample", ODDITIES, ids=[p.stem for p in ODDITIES])
def test_real_oddities(sample, server, client, board, caplog):
    caplog.set_level(logging.ERROR)
    raw = sample.read_bytes()
    _handle(server, raw)
    answer = client.post("/inbound/email", data=raw.replace(b"players.test>", b"players.test.2>"),
                         content_type="message/rfc822")
    assert answer.status_code in (200, 400, 413), answer.get_data(as_text=True)
    _no_errors_logged(caplog)
