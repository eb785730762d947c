"""Read an inbound mail into the few facts the server acts on.

Handles multipart, HTML-only, quoted-printable, base64 and non-UTF-8 mail,
recognises auto-replies and bounces, finds the per-player reply tag, and
separates the command line from the comment (quotes, attributions in
English, German and French, signatures and the server's own board mail
removed).
The addresses of its header fields are read by ``pbm.mail.addresses``.

Every step is linear in its input and reads a bounded part of it, so any
mail up to the server's size limit is read in a fraction of a second:

- the header section is read up to ``MAX_HEADER_BYTES``;
- the MIME parser sees the first ``MAX_MIME_BYTES`` of the body (the text
  parts come first in real mail; attachments behind them are never read);
- the text kept is at most ``MAX_BODY_CHARS``;
- the reply parser sees the first ``MAX_REPLY_CHARS`` of unquoted text, and
  a stand-in for each line over ``MAX_PARSED_LINE`` characters.

A mail that goes over the first or third bound, or whose text is not within
the part read, is still parsed (sender, Message-ID, auto-reply flags) but
carries ``InboundMail.too_large``: the sentence to answer it with.
"""

from __future__ import annotations

import codecs
import email
import hashlib
import secrets
import re
from dataclasses import dataclass, field
from email.errors import HeaderParseError
from email.header import decode_header
from email.message import Message
from email.policy import Compat32

from ..linetext import without_invisible
from ..i18n import LazyText, gettext, lazy_gettext, number
from .addresses import MAX_ADDRESS_LIST, header_addresses, sender_address, usable_address
from .htmltext import html_to_text
from .outbound import safe_message_id

MAX_HEADER_BYTES = 64 * 1024  # the header section; real mail with every relay's stamps is under 30 KiB
MAX_MIME_BYTES = 128 * 1024  # of the body, given to the MIME parser
MAX_CONTAINERS = 100  # multipart and message parts; real mail has a handful
MAX_BODY_CHARS = 100_000  # of text; longer text makes the mail too large
MAX_COMMAND_LINE = 1_000  # characters: a subject or command line is never longer
MAX_REPLY_CHARS = 10_000  # of unquoted text the reply parser sees: over twice the 4,000-character comment
MAX_PARSED_LINE = 300  # longer lines can be no attribution or signature: the reply parser sees a stand-in
REPLY_LANGUAGES = ["en", "de", "fr"]


class MalformedMail(ValueError):
    """The bytes hold no usable message (no sender, nothing readable)."""


# The words mail programs put before a reply's or a forward's subject: English, German
# (AW, WG), Nordic (SV, VS), Dutch (Antw), French (TR), Spanish and Portuguese (RV,
# ENC), Italian (R, RIF, I), Polish (Odp); a count may follow (Re[2]:, Re^2:, Re(2):).
_REPLY_SUBJECT = re.compile(r"^\s*(\[[^\]]{0,80}\]\s*)*(re|aw|sv|vs|antw|odp|rif|r|fwd?|wg|tr|rv|enc|i)"
                            r"\s*(\[[0-9]{1,4}\]|\^[0-9]{1,4}|\([0-9]{1,4}\))?\s*:", re.I)


@dataclass
class InboundMail:
    message_id: str  # no whitespace or control characters, at most 255 characters
    sender: str  # the bare address, lower case
    subject: str  # decoded, whitespace collapsed, at most MAX_COMMAND_LINE characters
    body: str  # plain text, LF line endings, at most MAX_BODY_CHARS characters
    recipients: list[str] = field(default_factory=list)
    automatic: str | None = None  # why this is an auto-reply or bounce, if it is one
    too_large: LazyText | None = None  # the sentence to answer a mail too large to read with, else None
    sealed: bool = False  # encrypted or signed as a whole (S/MIME, PGP), with no text to read

    @property
    def is_reply_subject(self) -> bool:
        """Whether the subject is a reply's or a forward's (``Re:``, ``AW:``, ``Fwd:``,
        ``WG:``, counted as ``Re[2]:`` or ``Re^2:``), also behind a mailing list's tag
        (``[pbm-list] Re: ...``)."""
        return bool(_REPLY_SUBJECT.match(self.subject))


# -- MIME --------------------------------------------------------------------------

class _RawHeaders(Compat32):
    """Header values as the raw strings they are: the ``email.policy.default``
    header objects take quadratic time on long values, so values are
    decoded here, after they have been cut to size."""

    def header_fetch_parse(self, name, value):
        return value


_POLICY = _RawHeaders()
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _clean(text: str) -> str:
    """Valid Unicode without control characters (NUL breaks PostgreSQL; 8-bit bytes become UTF-8).

    Each control character (the C0 controls but tab and line breaks, DEL, the two
    non-characters) becomes a space, in headers and text alike: it separates words as
    it did on the sender's screen. Dropped, it would glue two words into another one
    (``show 1<NUL>1`` into ``show 11``, a different board). Characters that show
    nothing are dropped (``linetext.without_invisible``): ``E2<ZWSP>`` is ``E2``."""
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return without_invisible(_CONTROL.sub(" ", text))


def _header(message: Message, name: str, limit: int) -> tuple[str, bool]:
    """The first ``name`` header, RFC 2047 words decoded, cut to ``limit``; and whether it was cut."""
    value = message.get(name)
    if value is None:
        return "", False
    cut = len(value) > 4 * limit  # encoded words take up to four characters per character
    words = []
    try:
        chunks = decode_header(_clean(value[:4 * limit]))
    except HeaderParseError:  # an encoded word that is no encoding (base64 of a length 1 mod 4)
        chunks = [(_clean(value[:4 * limit]), None)]
    for chunk, charset in chunks:
        if isinstance(chunk, str):
            words.append(chunk)
            continue
        try:
            words.append(chunk.decode(charset or "raw-unicode-escape", "replace"))
        except (LookupError, UnicodeError):  # an unknown charset, or a codec without "replace" (idna)
            words.append(chunk.decode("utf-8", "replace"))
    text = " ".join(_clean("".join(words)).split())
    return text[:limit], cut or len(text) > limit


def _decode_part(part: Message) -> str:
    """The part's text. Windows mail programs label text ISO-8859-1 or US-ASCII (or not
    at all) and write Windows-1252, whose curly quotes, dashes and euro sign (bytes
    0x80-0x9f) are control characters in ISO-8859-1: such a label is read as browsers
    read it (WHATWG Encoding), as UTF-8 when the bytes are UTF-8, else as Windows-1252."""
    payload = part.get_payload(decode=True) or b""
    charset = part.get_content_charset() or "us-ascii"
    try:
        codec = codecs.lookup(charset).name
    except LookupError:  # an unknown charset
        codec = "utf-8"
    if codec in ("ascii", "iso8859-1"):
        if codec == "ascii":
            try:
                return payload.decode("utf-8")
            except UnicodeDecodeError:
                pass
        codec = "cp1252"
    try:
        return payload.decode(codec, "replace")
    except (LookupError, UnicodeError):  # a lying or non-text charset
        return payload.decode("utf-8", "replace")


def _unflowed(text: str, delete_space: bool) -> str:
    """``format=flowed`` text (RFC 3676, as Thunderbird and Apple Mail send it) as its
    writer typed it: a line ending in a space goes on in the next line of the same quote
    depth (a long command wrapped at 72 columns is one line again), space-stuffing is
    removed, and with ``DelSp=yes`` the space of each soft break too. The signature
    separator ``-- `` is a line of its own."""
    lines: list[list[str]] = []  # each line as its pieces (joined once: linear in the text)
    open_depth = None  # the quote depth of a line still going on, else None
    for line in text.split("\n"):
        content = line.lstrip(">")
        depth = len(line) - len(content)
        if content.startswith(" "):
            content = content[1:]
        soft = content.endswith(" ") and content != "-- "
        if soft and delete_space:
            content = content[:-1]
        if open_depth == depth:
            lines[-1].append(content)
        else:
            lines.append([">" * depth + " " * bool(depth), content])
        open_depth = depth if soft else None
    return "\n".join("".join(pieces) for pieces in lines)


def _text_part(message: Message) -> Message | None:
    """The part holding the text: the first text/plain that is no attachment, else the first
    text/html. Walks iteratively; attached mails (message/rfc822) are not looked into."""
    html, stack = None, [message]
    while stack:
        part = stack.pop()
        if part.is_multipart():
            if part.get_content_maintype() == "multipart":
                stack.extend(reversed(part.get_payload()))
            continue
        if str(part.get("Content-Disposition", "")).strip().lower().startswith("attachment"):
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            return part
        if kind == "text/html" and html is None:
            html = part
    return html


# The parts that hold a whole mail encrypted, or signed with the text inside the signature.
_SEALED = {"multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}


def _split_head(raw: bytes) -> tuple[bytes, bytes]:
    """The header section and the body of raw bytes (the body may be empty)."""
    ends = [i for i in (raw.find(b"\n\n"), raw.find(b"\n\r\n")) if i >= 0]
    if not ends:
        return raw, b""
    end = min(ends)
    separator = 2 if raw[end:end + 2] == b"\n\n" else 3
    return raw[:end + 1], raw[end + separator:]


def parse_mail(raw: bytes, envelope_recipients: list[str] | None = None) -> InboundMail:
    """Parse raw RFC 5322 bytes in bounded time.

    Raises MalformedMail when there is no usable sender. A mail too large
    to read is returned with ``too_large`` set (and what could be read)."""
    head, body = _split_head(raw)
    too_large = []
    if len(head) > MAX_HEADER_BYTES:
        too_large.append(lazy_gettext("its header section is over %(size)s KiB", size=MAX_HEADER_BYTES // 1024))
        head = head[:head.rfind(b"\n", 0, MAX_HEADER_BYTES) + 1] or head[:MAX_HEADER_BYTES]
    window = body[:MAX_MIME_BYTES]
    lowered = (head + window).lower()
    if lowered.count(b"multipart/") + lowered.count(b"message/") > MAX_CONTAINERS:
        # the MIME parser's time grows with depth times lines, and it recurses per level
        too_large.append(lazy_gettext("it has over %(count)s nested parts", count=MAX_CONTAINERS))
        window = b""
    message = email.message_from_bytes(head + b"\n" + window, policy=_POLICY)
    sender = from_value = ""
    try:
        from_value = " ".join(str(message.get("From", ""))[:MAX_ADDRESS_LIST].split())
        sender = _clean(sender_address(from_value)).strip().lower()
    except RecursionError:
        pass
    if not from_value:
        raise MalformedMail("the message has no sender address (From:)")
    if not sender or "@" not in sender:
        raise MalformedMail("the sender (From:) is not one readable address")
    if not usable_address(sender):
        raise MalformedMail("the sender address (From:) is not a usable address")
    recipients = [_clean(address).lower() for address in header_addresses(
        [v for name in ("To", "Cc", "Delivered-To", "X-Original-To") for v in message.get_all(name, [])])]
    recipients = [_clean(r).lower() for r in (envelope_recipients or [])] + recipients
    subject, long_subject = _header(message, "Subject", MAX_COMMAND_LINE)
    if long_subject:
        too_large.append(lazy_gettext("its subject is over %(count)s characters", count=number(MAX_COMMAND_LINE)))
    text, sealed = "", False
    part = _text_part(message)
    if part is not None:
        text = _decode_part(part)
        if part.get_content_type() == "text/html":
            text = html_to_text(text, MAX_BODY_CHARS)
        text = _clean(text.replace("\r\n", "\n").replace("\r", "\n"))
        if str(part.get_param("format", "")).lower() == "flowed":
            text = _unflowed(text, str(part.get_param("delsp", "")).lower() == "yes")
    elif any(p.get_content_type() in _SEALED for p in message.walk()):
        sealed = True
    elif len(body) > MAX_MIME_BYTES:
        too_large.append(lazy_gettext("its text is not within its first %(size)s KiB", size=number(MAX_MIME_BYTES // 1024)))
    if len(text) > MAX_BODY_CHARS:
        too_large.append(lazy_gettext("its text is over %(count)s characters", count=number(MAX_BODY_CHARS)))
    # In its angle brackets whether or not the sender wrote them: "a@b" repeats "<a@b>". An id
    # the server could not write back into its answer's In-Reply-To is known by the mail's bytes.
    bare = "".join(_clean(str(message.get("Message-ID", ""))[:1000]).split()).strip("<>")[:253]
    message_id = safe_message_id(f"<{bare}>") or synthetic_message_id(as_sent(raw),
                                                                      bool(bare or message.get("Date")))
    return InboundMail(
        message_id=message_id,
        sender=sender,
        subject=subject,
        body=text[:MAX_BODY_CHARS],
        recipients=recipients,
        automatic=automatic_reason(message, sender),
        too_large=_too_large(too_large) if too_large else None,
        sealed=sealed,
    )


def _too_large(reasons: list[LazyText]) -> LazyText:
    """The answer to a mail too large to read, in its reader's language."""
    return LazyText(lambda: gettext("This mail is too large to read: %(reasons)s. Send the command in a short "
                                    "plain mail.", reasons="; ".join(str(reason) for reason in reasons)))


def automatic_reason(message: Message, sender: str) -> str | None:
    """Why this mail must never be answered (auto-reply, bounce, list), or None."""
    def value(name: str) -> str:
        return " ".join(_clean(str(message.get(name, ""))[:200]).split()).lower()

    auto = value("Auto-Submitted")
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = value("Precedence")
    if precedence in ("bulk", "junk", "list", "auto_reply"):
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Autogenerated"):  # helpdesks' and vacation programs' marks
        if message.get(name) is not None:
            return name
    if "all" in value("X-Auto-Response-Suppress").replace(" ", "").split(","):  # Exchange's own automatic mail
        return "X-Auto-Response-Suppress: All"
    return_path = value("Return-Path")
    if message.get("Return-Path") is not None and return_path.replace(" ", "") == "<>":
        return "empty return path"
    local = sender.split("@")[0]
    if local in ("mailer-daemon", "postmaster"):
        return f"sent by {local}"
    if message.get_content_type() == "multipart/report":
        return "delivery report"
    return None


# The trace fields each delivery puts above a mail (RFC 5321 4.4 and the MTAs' own): they
# differ between two deliveries of one mail (by another relay, through another door).
_TRACE_FIELDS = re.compile(
    rb"(?:(?:return-path|received|delivered-to|x-original-to):[^\n]*\n(?:[ \t][^\n]*\n)*)*", re.IGNORECASE)


def as_sent(raw: bytes) -> bytes:
    """The mail as its sender sent it: without the trace fields deliveries put above it."""
    return raw[_TRACE_FIELDS.match(raw).end():]


def synthetic_message_id(raw: bytes, repeatable: bool) -> str:
    """An id for a mail that came without a usable Message-ID. ``repeatable`` (the
    mail has a Date, or an id the server cannot write back): a digest of its bytes,
    so the same mail delivered again is a duplicate. Otherwise (neither, as in a
    hand-made mail: two ``pass`` mails of one player are the same bytes) each mail is
    its own."""
    if repeatable:
        return f"<sha256-{hashlib.sha256(raw).hexdigest()[:40]}@pbm.invalid>"
    return f"<unnamed-{secrets.token_hex(16)}@pbm.invalid>"


def find_reply_tag(recipients: list[str], local_part: str) -> tuple[int, str] | None:
    """The ``(board, token)`` of a ``<local>+<board>.<token>@...`` recipient, if any."""
    pattern = re.compile(rf"^{re.escape(local_part.lower())}\+(\d{{1,9}})\.([a-z0-9]+)@", re.I)
    for address in recipients:
        match = pattern.match(address)
        if match:
            return int(match.group(1)), match.group(2).lower()
    return None


def misshapen_reply_tag(recipients: list[str], local_part: str) -> str | None:
    """A ``<local>+...@`` recipient that is not a reply tag (cut, or changed by hand), if any."""
    pattern = re.compile(rf"^{re.escape(local_part.lower())}\+[^@]*@", re.I)
    return next((address for address in recipients if pattern.match(address)), None)
