"""Read an inbound mail into the few facts the server acts on.

Handles multipart, HTML-only, quoted-printable, base64 and non-UTF-8 mail
through the standard library's ``email`` package, recognises auto-replies
and bounces, finds the per-player reply tag, and separates the command
line from the comment (quoted text and signatures removed).
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser

from email_reply_parser import EmailReplyParser


class MalformedMail(ValueError):
    """The bytes hold no usable message (no sender, nothing readable)."""


@dataclass
class InboundMail:
    message_id: str
    sender: str  # the bare address, lower case
    subject: str
    body: str  # plain text, LF line endings
    recipients: list[str] = field(default_factory=list)
    automatic: str | None = None  # why this is an auto-reply or bounce, if it is one
    raw_text: str = ""  # the original, for quoting in error mails

    @property
    def is_reply_subject(self) -> bool:
        return bool(re.match(r"^\s*(re|aw|sv|antw|fwd?)\s*:", self.subject, re.I))


def _decode_part(part) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeDecodeError):  # unknown or lying charset
        payload = part.get_payload(decode=True) or b""
        return payload.decode("latin-1")


class _HtmlText(HTMLParser):
    """HTML to plain text, keeping line breaks and marking blockquotes as quoted."""

    BREAKS = {"br", "p", "div", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.depth = 0  # blockquote nesting
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script", "head"):
            self.skip += 1
        elif tag == "blockquote":
            self.depth += 1
            self._newline()
        elif tag in self.BREAKS:
            self._newline()

    def handle_endtag(self, tag):
        if tag in ("style", "script", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag == "blockquote":
            self.depth = max(0, self.depth - 1)
            self._newline()
        elif tag in self.BREAKS:
            self._newline()

    def _newline(self):
        self.lines.append("")

    def handle_data(self, data):
        if self.skip:
            return
        for i, piece in enumerate(data.split("\n")):
            if i:
                self._newline()
            if piece.strip():
                if not self.lines[-1]:
                    self.lines[-1] = "> " * self.depth
                self.lines[-1] += re.sub(r"\s+", " ", piece)


def html_to_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "\n".join(line.rstrip() for line in parser.lines).strip("\n")


def _text_body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    text = _decode_part(part)
    if part.get_content_type() == "text/html":
        text = html_to_text(text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def automatic_reason(message: EmailMessage, sender: str) -> str | None:
    """Why this mail must never be answered (auto-reply, bounce, list), or None."""
    auto = str(message.get("Auto-Submitted", "")).strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = str(message.get("Precedence", "")).strip().lower()
    if precedence in ("bulk", "junk", "list"):
        return f"Precedence: {precedence}"
    if message.get("X-Autoreply") or message.get("X-Autorespond"):
        return "X-Autoreply"
    return_path = message.get("Return-Path")
    if return_path is not None and parseaddr(str(return_path))[1] == "" and "<>" in str(return_path):
        return "empty return path"
    local = sender.split("@")[0]
    if local in ("mailer-daemon", "postmaster"):
        return f"sent by {local}"
    if message.get_content_type() == "multipart/report":
        return "delivery report"
    return None


def synthetic_message_id(raw: bytes) -> str:
    """A stable id for a mail that came without a Message-ID (so repeats still match)."""
    return f"<sha256-{hashlib.sha256(raw).hexdigest()[:40]}@pbm.invalid>"


def parse_mail(raw: bytes, envelope_recipients: list[str] | None = None) -> InboundMail:
    """Parse raw RFC 5322 bytes. Raise MalformedMail when there is no sender."""
    try:
        message = email.message_from_bytes(raw, policy=email.policy.default)
        sender = parseaddr(str(message.get("From", "")))[1].strip().lower()
    except Exception as error:  # the parser is lenient; this is truly broken input
        raise MalformedMail(f"the message could not be read ({error.__class__.__name__})") from None
    if not sender or "@" not in sender:
        raise MalformedMail("the message has no sender address (From:)")
    headers = [str(v) for name in ("To", "Cc", "Delivered-To", "X-Original-To")
               for v in message.get_all(name, [])]
    recipients = [addr.lower() for _, addr in getaddresses(headers) if addr]
    recipients = [r.lower() for r in (envelope_recipients or [])] + recipients
    try:
        subject = str(message.get("Subject", "") or "")
        body = _text_body(message)
    except Exception as error:
        raise MalformedMail(f"the message could not be read ({error.__class__.__name__})") from None
    message_id = str(message.get("Message-ID", "") or "").strip() or synthetic_message_id(raw)
    return InboundMail(
        message_id=message_id[:255],
        sender=sender,
        subject=" ".join(subject.split()),
        body=body,
        recipients=recipients,
        automatic=automatic_reason(message, sender),
        raw_text=raw.decode("utf-8", "replace").replace("\r\n", "\n"),
    )


def visible_reply(body: str) -> str:
    """The text the sender wrote: quoted lines, attributions and signature removed."""
    text = EmailReplyParser.parse_reply(body.replace("\r\n", "\n"))
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">")).strip()


def split_command(text: str) -> tuple[str, str]:
    """The first non-blank line, and the rest (trimmed) as the comment."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            return line.strip(), "\n".join(lines[i + 1:]).strip()
    return "", ""


def find_reply_tag(recipients: list[str], local_part: str) -> tuple[int, str] | None:
    """The ``(board, token)`` of a ``<local>+<board>.<token>@...`` recipient, if any."""
    pattern = re.compile(rf"^{re.escape(local_part.lower())}\+(\d+)\.([a-z0-9]+)@", re.I)
    for address in recipients:
        match = pattern.match(address)
        if match:
            return int(match.group(1)), match.group(2).lower()
    return None
