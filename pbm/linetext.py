"""A line as a player wrote it, made plain before it is read: the invisible
characters mail programs slip in, quotation marks around all of it, and the
move number a move may assert (``D4#12``)."""

from __future__ import annotations

import re


# Characters that show nothing (zero-width spaces and joiners, the byte-order mark,
# the soft hyphen) that mail programs, phone keyboards and copied text slip in.
_INVISIBLE = re.compile(r"(?<![^\x00-\x7f])[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]+"
                        r"|[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]+(?![^\x00-\x7f])")


def without_invisible(text: str) -> str:
    """``text`` as its reader sees it: the invisible characters next to plain (ASCII)
    text or a line's end removed (``\\ufeffE2`` is ``E2``). Between two other
    characters they stay: a joiner there makes one emoji of two."""
    return _INVISIBLE.sub("", text)


# A quotation mark and the mark that closes it: straight, English and German curly, guillemets.
_QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u201d": "\u201d", "\u201e": "\u201c",
                "\u2018": "\u2019", "\u2019": "\u2019", "\u201a": "\u2018", "\u00ab": "\u00bb", "\u00bb": "\u00ab"}


def without_enclosing_quotes(text: str) -> str:
    """``text`` without one pair of quotation marks around all of it, as a player
    copies a command from a help text that quotes it (send "help") or a phone quotes
    a move with curly marks; unchanged when a mark of the pair is also inside, or none encloses it."""
    inner = text.strip()
    if len(inner) > 2 and _QUOTE_PAIRS.get(inner[0]) == inner[-1] and not {inner[0], inner[-1]} & set(inner[1:-1]):
        return inner[1:-1].strip()
    return text


def split_move_number(text: str) -> tuple[str, int | None]:
    """A move and the move number a player asserts after it (``D4#12``: the move is
    to be move 12, refused if the board has moved on), or None; the move without
    quotation marks around it (``"D4"``, ``"D4#12"``, ``"D4"#12``)."""
    text = without_enclosing_quotes(text)
    check = re.search(r"\s*#\s*([0-9]{1,9})\s*$", text)
    return (without_enclosing_quotes(text[:check.start()]), int(check.group(1))) if check else (text, None)
