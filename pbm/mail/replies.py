"""What a reply says: the text its sender wrote (quotes, attributions, signatures and
the server's own board mail removed), and its command line. Bounded: the reply
parser sees at most MAX_REPLY_CHARS of unquoted text."""

from __future__ import annotations

import re

from mailparser_reply.parser import EmailMessage as ReplyText

from .inbound import MAX_BODY_CHARS, MAX_PARSED_LINE, MAX_REPLY_CHARS, REPLY_LANGUAGES

# What the reply parser misses: wrapped or French attributions, Outlook's and
# Gmail's separator lines in German and French, and the default signatures of phone
# and web mail programs.
_ATTRIBUTION = re.compile(r"^(?:On|Am|Le)\s.{0,300}?(?:wrote|schrieb|a\s+écrit)\s*:$", re.I)
_SEPARATOR = re.compile(r"^_{20,}$|^-{3,}\s*(?:original message|forwarded message|ursprüngliche nachricht|"
                        r"weitergeleitete nachricht|message d'origine|message transféré)\s*-{3,}$", re.I)
_SIGNATURE = re.compile(r"^(?:--|sent from my .{1,60}|von meinem .{1,60} gesendet\.?|gesendet von meinem .{1,60}|"
                        r"gesendet von outlook.{0,80}|envoyé de mon .{1,60}|envoyé depuis mon .{1,60}|"
                        r"get outlook for .{1,80}|outlook für .{1,60} beziehen.*|obtenir outlook pour .{1,80}|"
                        r"sent from (?:yahoo mail|mail for windows|outlook|proton mail)\b.{0,60}|"
                        r"sent with proton mail.{0,60}|gesendet mit der .{1,40} app|"
                        r"diese nachricht wurde von meinem .{1,80} gesendet\.?|envoyé à partir de outlook.{0,60})$", re.I)
_STAND_IN = "\ue000"  # a private-use character: marks a long line hidden from the reply parser


_PGP_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"


def _without_pgp_armor(lines: list[str]) -> list[str]:
    """Clearsigned text (inline PGP, RFC 4880 7, as Mailvelope and older Enigmail
    sign a reply) as its writer wrote it: the armor line and its headers (``Hash:``),
    the signature block and what follows it removed, dash escapes (``- --``) undone."""
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if start == len(lines) or lines[start].strip() != _PGP_SIGNED:
        return lines
    text = start + 1
    while text < len(lines) and lines[text].strip():  # the armor headers, up to a blank line
        text += 1
    kept = []
    for line in lines[text + 1:]:
        if line.strip() == _PGP_SIGNATURE:
            break
        kept.append(line[2:] if line.startswith("- ") else line)
    return kept


def _unquoted_lines(body: str) -> list[str]:
    """The lines that are not quoted, blank runs collapsed, up to MAX_REPLY_CHARS in all."""
    lines: list[str] = []
    size = 0
    for line in _without_pgp_armor(body[:MAX_BODY_CHARS].replace("\r\n", "\n").replace("\r", "\n").split("\n")):
        line = line.rstrip().replace(_STAND_IN, "\ufffd")
        if line.lstrip().startswith(">") or (not line and (not lines or not lines[-1])):
            continue
        lines.append(line[:MAX_REPLY_CHARS - size])
        size += len(line) + 1
        if size >= MAX_REPLY_CHARS:
            break
    return lines


def _marker(lines: list[str], i: int) -> int:
    """How many lines from ``lines[i]`` form a separator, signature or attribution (0: none)."""
    line = lines[i].strip()
    if len(line) > MAX_PARSED_LINE:
        return 0
    if _SEPARATOR.match(line) or _SIGNATURE.match(line) or _ATTRIBUTION.match(line):
        return 1
    joined = f"{line} {lines[i + 1].strip()}" if i + 1 < len(lines) else ""
    return 2 if len(joined) <= MAX_PARSED_LINE and _ATTRIBUTION.match(joined) else 0


def _cut_at_own_rules(lines: list[str]) -> list[str]:
    """The lines above the first separator, signature or attribution; a marker with
    nothing written above it (a reply below the quote) is dropped instead."""
    kept: list[str] = []
    written = False
    i = 0
    while i < len(lines):
        marker = _marker(lines, i)
        if marker and written:
            break
        if not marker:
            kept.append(lines[i])
            written = written or bool(lines[i].strip())
        i += marker or 1
    return kept


def _reply_parser(lines: list[str]) -> str:
    """mail-parser-reply's latest reply (the quoted mail's headers removed); long
    lines pass through it as stand-ins, since its patterns are quadratic in a line's length."""
    long_lines = [line for line in lines if len(line) > MAX_PARSED_LINE]
    shown, n = [], 0
    for line in lines:
        if len(line) > MAX_PARSED_LINE:
            shown.append(f"{_STAND_IN}{n}{_STAND_IN}")
            n += 1
        else:
            shown.append(line)
    message = ReplyText(text="\n".join(shown), languages=list(REPLY_LANGUAGES), keep_hyphen_lists=True).read()
    # full_body: without the quoted mail's headers but with what the parser takes for a
    # signature, since its sign-off list ("Thanks,", "Best,", "Grüße") eats real comments
    text = message.replies[0].full_body if message.replies else ""
    return re.sub(f"{_STAND_IN}(\\d+){_STAND_IN}", lambda m: long_lines[int(m.group(1))], text)


def visible_reply(body: str, *, base_url: str = "", server_address: str = "") -> str:
    """The text the sender wrote: quoted lines, attributions and header blocks of
    the quoted mail (English, German, French), and signatures removed.

    With ``base_url`` and ``server_address`` (the settings of the same names),
    the server's own board mail pasted in unquoted is removed too, and any link
    to a private play page or reply-tag address left in the text is replaced by
    a note, so the opponent never receives them. Time is linear in the body."""
    text = _reply_parser(_cut_at_own_rules(_unquoted_lines(body)))
    if base_url or server_address:
        text = _without_server_mail(text, base_url, server_address)
    return text.strip()


# -- the server's own mail in a reply ----------------------------------------------------

# The lines that open the board mails of pbm/play.py (intro, board header, status)
# and their footer; a block is cut only when a footer line follows its start.
_BOARD_START = re.compile(r"^(?:.{1,60} has challenged you to a game of .{1,60} \(board \d+\)\.|"
                          r"New game of .{1,60} on board \d+, started by .{1,60}\.|Reminder: .{0,60}board \d+.*|"
                          r".{1,60} Board \d+: .{1,60} vs .{1,60})$")
_BOARD_FOOTER = re.compile(r"^(?:To move, reply to this mail|Your private page: |Board page: )")


def _without_server_mail(text: str, base_url: str, server_address: str) -> str:
    lines = text.split("\n")
    footer = next((i for i, line in enumerate(lines) if _BOARD_FOOTER.match(line.strip())), None)
    if footer is not None:
        start = next((i for i, line in enumerate(lines[:footer])
                      if len(line) <= MAX_PARSED_LINE and _BOARD_START.match(line.strip())), footer)
        lines = lines[:start]
    text = "\n".join(lines)
    if base_url:
        site = re.escape(re.sub(r"^https?://", "", base_url.rstrip("/")))
        text = re.sub(rf"(?:https?://)?{site}/play/[^\s<>\"')\]]*", "[private link removed]", text, flags=re.I)
    local, _, domain = server_address.rpartition("@")
    if local and domain:
        text = re.sub(rf"(?:mailto:)?{re.escape(local)}\+[^\s@<>]*@{re.escape(domain)}",
                      "[reply address removed]", text, flags=re.I)
    return text


def split_command(text: str) -> tuple[str, str]:
    """The first non-blank line, and the rest (trimmed) as the comment. The line is
    returned whole: a caller refuses one over MAX_COMMAND_LINE characters."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            return line.strip(), "\n".join(lines[i + 1:]).strip()
    return "", ""
