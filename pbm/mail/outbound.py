"""Render the mails the server sends: board mails, error mails, notices.

Every mail is an ``EmailMessage`` with its own Message-ID and Date, threaded
per board (``In-Reply-To``/``References`` point at the board's thread id),
marked ``Auto-Submitted``, in one ``text/plain`` UTF-8 part whose lines stay
within 78 characters so boards arrive unwrapped.
"""

from __future__ import annotations

import functools
import secrets
import textwrap
from datetime import datetime
from email.headerregistry import HeaderRegistry
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import format_datetime, formataddr

from ..config import Settings

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
    """``email.policy.default`` that folds each distinct header once (same output)."""

    @functools.lru_cache(maxsize=4096)
    def _fold(self, name, value, refold_binary=False):
        return super()._fold(name, value, refold_binary)


# The policies of the mails the server writes: as ``email.policy.default`` (composing),
# ``SMTP`` and ``SMTPUTF8`` (the bytes on the wire), with the work above remembered.
COMPOSING = _RememberedFolding(header_factory=_RememberedHeaders())
WIRE = COMPOSING.clone(linesep="\r\n")
WIRE_UTF8 = WIRE.clone(utf8=True)


def thread_id(settings: Settings, board_id: int) -> str:
    return f"<board-{board_id}@{settings.server_domain}>"


def reply_address(settings: Settings, board_id: int, token: str) -> str:
    return f"{settings.server_local_part}+{board_id}.{token}@{settings.server_domain}"


def wrap(text: str, width: int = MAX_LINE) -> str:
    """Wrap long prose lines; lines that already fit (boards) are kept as they are."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            indent = line[: len(line) - len(line.lstrip())]
            prefix = indent + ("> " if line.lstrip().startswith(">") else "")
            out.extend(textwrap.wrap(line, width, subsequent_indent=prefix,
                                     break_long_words=True, break_on_hyphens=False) or [""])
    return "\n".join(out)


def quote(text: str, limit: int = 60) -> str:
    lines = text.rstrip("\n").split("\n")
    shown = lines[:limit] + (["[...]"] if len(lines) > limit else [])
    return "\n".join(("> " + line).rstrip() for line in shown)


def compose(settings: Settings, *, to: str, subject: str, body: str, now: datetime,
            auto: str = "auto-replied", reply_to: str | None = None,
            board_id: int | None = None, in_reply_to: str | None = None,
            attachments: list[tuple[str, str, bytes]] = ()) -> EmailMessage:
    """Build one outgoing mail. ``attachments`` are (filename, mime type, data)."""
    message = EmailMessage(policy=COMPOSING)
    message["From"] = formataddr(("pbm", settings.server_address))
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(now)
    # Not make_msgid: its randomness comes from the global ``random``, which a test tool
    # (or any library) may seed, and the id must stay unique regardless.
    message["Message-ID"] = f"<pbm.{secrets.token_hex(12)}@{settings.server_domain}>"
    message["Auto-Submitted"] = auto
    if reply_to:
        message["Reply-To"] = reply_to
    references = []
    if board_id is not None:
        references.append(thread_id(settings, board_id))
    if in_reply_to and in_reply_to not in references:
        references.append(in_reply_to)
    if references:
        message["In-Reply-To"] = in_reply_to or references[0]
        message["References"] = " ".join(references)
    text = wrap(body) + "\n"
    message.set_content(text, charset="utf-8", cte="7bit" if text.isascii() else "quoted-printable")
    for filename, mime, data in attachments:
        maintype, subtype = mime.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return message
