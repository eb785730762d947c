"""Render the mails the server sends: board mails, error mails, notices.

Every mail is an ``EmailMessage`` with its own Message-ID and Date, threaded
per board (``In-Reply-To``/``References`` point at the board's thread id),
marked ``Auto-Submitted``, in one ``text/plain`` UTF-8 part whose lines stay
within 78 characters so boards arrive unwrapped.
"""

from __future__ import annotations

import functools
import re
import secrets
import textwrap
from dataclasses import dataclass
from datetime import datetime
from email.errors import NonASCIILocalPartDefect
from email.headerregistry import HeaderRegistry
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import format_datetime, formataddr

from ..config import Settings
from .transport import ascii_address

MAX_LINE = 78


class _RememberedHeaders(HeaderRegistry):
    """``email``'s header registry, remembering what it parsed: the server writes the
    same few header values again and again (its From, a player's To and Reply-To, a
    board's References), and parsing them was most of the cost of a mail. Header
    objects are immutable strings, so sharing them is safe."""

    @functools.lru_cache(maxsize=64)
    def __getitem__(self, name: str):  # the stdlib builds a new class on every call
        return super().__getitem__(name)

    @functools.lru_cache(maxsize=4096)
    def __call__(self, name: str, value: str):
        return super().__call__(name, value)


class _RememberedFolding(EmailPolicy):
    """``email.policy.default`` that folds each distinct header once (same output).
    Keyed by the header object itself, not by its text: two headers with one text
    may fold differently (every address ``email`` cannot parse reads as ``<>``). The
    registry above hands out one object per raw value, so repeats still hit."""

    def _fold(self, name, value, refold_binary=False):
        return self._fold_once(name, value, id(value), refold_binary)

    @functools.lru_cache(maxsize=4096)
    def _fold_once(self, name, value, identity, refold_binary):  # the key holds ``value``: its id stays its own
        return super()._fold(name, value, refold_binary)


# The policies of the mails the server writes: as ``email.policy.default`` (composing),
# ``SMTP`` and ``SMTPUTF8`` (the bytes on the wire), with the work above remembered.
COMPOSING = _RememberedFolding(header_factory=_RememberedHeaders())
WIRE = COMPOSING.clone(linesep="\r\n")
WIRE_UTF8 = WIRE.clone(utf8=True)


@functools.lru_cache(maxsize=4096)
def writable_address(address: str) -> bool:
    """Whether ``address`` can stand in a mail's ``To`` as it is: one address that
    ``email`` writes back unchanged. It decodes RFC 2047 words even inside an address
    (``=?utf-8?q?v=40x.example=2C?=w@y.example`` would be two recipients), and writes
    some deliverable addresses (``a@example.org.``) as ``<>``."""
    if "=?" in address or any(c.isspace() for c in address):
        return False
    try:
        header = COMPOSING.header_factory("To", address)
    except Exception:  # the address parser fails on some malformed input instead of noting a defect
        return False
    return all(isinstance(defect, NonASCIILocalPartDefect) for defect in header.defects) \
        and [a.addr_spec for a in header.addresses] == [address]  # (a UTF-8 local part goes by SMTPUTF8)


# A message id as the server writes it in In-Reply-To: printable ASCII, one @, no
# encoded word (``email`` would decode it, line breaks and all, into the header).
_MESSAGE_ID = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]+@[\x21-\x3b\x3d\x3f-\x7e]+>\Z")


def safe_message_id(message_id: str | None) -> str | None:
    """``message_id`` when it can be written into a header as it is, else None."""
    return message_id if message_id and _MESSAGE_ID.match(message_id) and "=?" not in message_id else None


def thread_id(settings: Settings, board_id: int) -> str:
    return f"<board-{board_id}@{settings.server_domain}>"


def reply_address(settings: Settings, board_id: int, token: str) -> str:
    return f"{settings.server_local_part}+{board_id}.{token}@{settings.server_domain}"


def wrap(text: str, width: int = MAX_LINE) -> str:
    """Wrap long prose lines; lines that already fit (boards) are kept as they are. A
    long line that stops mid-sentence hands its overflow to the line that goes on with
    the sentence, so a paragraph whose names came out long reads "...no reminders and
    no / expiry" rather than leaving "no" alone on a line."""
    out: list[str] = []
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if len(line) <= width:
            out.append(line)
            continue
        wrapped = list(_wrapped(line, width))
        if n + 1 < len(lines) and _goes_on(line, lines[n + 1]) and len(wrapped) > 1:
            lines[n + 1] = wrapped.pop() + " " + lines[n + 1]  # wrapped again in its turn if too long
        out.extend(wrapped)
    return "\n".join(out)


def _goes_on(line: str, following: str) -> bool:
    """Whether ``following`` continues the sentence ``line`` left open: plain prose at
    the margin (no quote, comment, board or list), after no full stop."""
    return line[:1].isalpha() and following[:1].isalpha() and line.rstrip()[-1:] not in ".:!?)"


@functools.lru_cache(maxsize=256)
def _wrapped(line: str, width: int) -> tuple[str, ...]:
    """One long line wrapped; remembered, since the mails of one change (the two
    players', the watchers') share their long lines (a game's status line). At
    most 256 lines, of a few thousand characters at most (a comment's)."""
    stripped = line.lstrip()
    # a quote (">") or a history's comment ("|") goes on marked as it began
    prefix = line[:len(line) - len(stripped)] + (stripped[0] + " " if stripped[:1] in (">", "|") else "")
    return tuple(textwrap.wrap(line, width, subsequent_indent=prefix,
                               break_long_words=True, break_on_hyphens=False) or [""])


def quote(text: str, limit: int = 60) -> str:
    """``text`` quoted (``> ``), its long lines wrapped as a mail shows them; at most
    ``limit`` of those lines, then ``[...]`` (what one quote can add to a mail is bounded)."""
    width, shown = MAX_LINE - 2, []
    for line in text.rstrip("\n").split("\n"):
        if len(line) > width:  # wrapped here, so the limit counts the lines a reader sees
            shown += textwrap.wrap(line[:(limit + 1) * width], width, break_long_words=True,
                                   break_on_hyphens=False) or [""]
        else:
            shown.append(line)
        if len(shown) > limit:
            shown = shown[:limit] + ["[...]"]
            break
    return "\n".join(("> " + line).rstrip() for line in shown)


@dataclass(frozen=True)
class Composed:
    """A mail ready for the outbox: its bytes as they go on the wire (CRLF line
    ends) and what the outbox keeps beside them."""

    recipient: str
    message_id: str
    subject: str
    raw: bytes


def compose(settings: Settings, *, to: str, subject: str, body: str, now: datetime,
            auto: str = "auto-replied", reply_to: str | None = None,
            board_id: int | None = None, in_reply_to: str | None = None,
            attachments: list[tuple[str, str, bytes]] = (), unsubscribe: str | None = None) -> Composed:
    """Build one outgoing mail. ``attachments`` are (filename, mime type, data);
    ``unsubscribe``: the address that stops such mails in one click (RFC 8058).

    The bytes are what goes on the wire: a recipient whose domain is
    internationalised but whose local part is ASCII is written with an IDNA
    domain in ``To`` (any relay takes it); a non-ASCII local part keeps UTF-8
    headers (RFC 6532), which only a relay offering SMTPUTF8 accepts."""
    # Not make_msgid: its randomness comes from the global ``random``, which a test tool
    # (or any library) may seed, and the id must stay unique regardless.
    if not writable_address(to) or reply_to is not None and not writable_address(reply_to):
        raise ValueError(f"cannot write a mail to {to!r}")  # the doors let no such address in
    # A subject may hold a player's name or address: never an encoded word for ``email`` to decode.
    subject = subject.replace("=?", "= ?")
    in_reply_to = safe_message_id(in_reply_to)
    headers = [("From", formataddr(("pbm", settings.server_address))), ("To", to), ("Subject", subject),
               ("Date", format_datetime(now)), ("Message-ID", f"<pbm.{secrets.token_hex(12)}@{settings.server_domain}>"),
               ("Auto-Submitted", auto)]
    if reply_to:
        headers.append(("Reply-To", reply_to))
    if unsubscribe:
        headers += [("List-Unsubscribe", f"<{unsubscribe}>"), ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")]
    references = []
    if board_id is not None:
        references.append(thread_id(settings, board_id))
    if in_reply_to and in_reply_to not in references:
        references.append(in_reply_to)
    if references:
        headers += [("In-Reply-To", in_reply_to or references[0]), ("References", " ".join(references))]
    text = wrap(body) + "\n"
    return (None if attachments else _plain(headers, text)) or _through_email(headers, text, attachments)


# What ``_plain`` writes itself: addresses that are dot-atoms, other header values
# of printable ASCII words with single spaces and no encoded words, a body of
# printable ASCII lines within MAX_LINE. ``email`` writes such a mail unchanged but
# for the folding of long unstructured headers, which ``_folded`` does as it does.
_PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\Z")
_PLAIN_TEXT = re.compile(r"[\x21-\x7e]+( [\x21-\x7e]+)*\Z")
_PLAIN_BODY = re.compile(r"[\x20-\x7e\t\n]*\Z")
_STRUCTURED = {"From", "To", "Reply-To", "Date", "Message-ID"}  # parsed by ``email``: written on one line only
_PLAIN_TAIL = 'Content-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: 7bit\r\nMIME-Version: 1.0\r\n\r\n'


def _plain(headers: list[tuple[str, str]], text: str) -> Composed | None:
    """The mail written directly when it is plain (see ``_PLAIN_ADDRESS``): the same
    bytes as ``_through_email`` (``tests/test_composing.py`` holds it to that) for a
    tenth of the work; None for any other mail."""
    lines = []
    for name, value in headers:
        if name in ("To", "Reply-To", "From"):
            plain = _PLAIN_ADDRESS.match(value.removeprefix("pbm <").removesuffix(">") if name == "From" else value)
        else:
            plain = _PLAIN_TEXT.match(value) and "=?" not in value
        line = f"{name}: {value}"
        if len(line) > MAX_LINE and name not in _STRUCTURED:
            line = _folded(name, value)
        if not plain or line is None or len(line) > MAX_LINE and name in _STRUCTURED:
            return None
        lines.append(line)
    if not _PLAIN_BODY.match(text) or max(map(len, text.split("\n"))) > MAX_LINE:
        return None
    values = dict(headers)
    return Composed(values["To"], values["Message-ID"], values["Subject"],
                    ("\r\n".join(lines) + "\r\n" + _PLAIN_TAIL + text.replace("\n", "\r\n")).encode("ascii"))


def _folded(name: str, value: str) -> str | None:
    """A too long unstructured header of plain words, folded as ``email`` folds it: the
    whole value on the next line when it fits there, else as many words a line as
    fit, from the first; None when the first word does not fit beside the name
    (``email`` folds that otherwise)."""
    if 1 + len(value) <= MAX_LINE:
        return f"{name}:\r\n {value}"
    words = value.split(" ")
    lines = [f"{name}: {words[0]}"]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) <= MAX_LINE:
            lines[-1] += " " + word
        elif 1 + len(word) <= MAX_LINE:
            lines.append(" " + word)
        else:
            return None
    return None if len(lines[0]) > MAX_LINE else "\r\n".join(lines)


def _through_email(headers: list[tuple[str, str]], text: str,
                   attachments: list[tuple[str, str, bytes]]) -> Composed:
    """The mail built by ``email`` (one text/plain UTF-8 part, then the attachments)."""
    message = EmailMessage(policy=COMPOSING)
    for name, value in headers:
        message[name] = value
    message.set_content(text, charset="utf-8", cte="7bit" if text.isascii() else "quoted-printable")
    for filename, mime, data in attachments:
        maintype, subtype = mime.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    recipient = str(message["To"])
    wire_policy = WIRE
    if not recipient.isascii():
        ascii_recipient = ascii_address(recipient)
        if ascii_recipient is None:
            wire_policy = WIRE_UTF8
        else:
            message.replace_header("To", ascii_recipient)
    return Composed(recipient, str(message["Message-ID"]), str(message["Subject"]),
                    message.as_bytes(policy=wire_policy))
