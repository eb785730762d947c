"""What a game says to players: the sentences of its errors (``GameError`` and the
kinds of it a move or an option raises) and of its texts (``GameText``), each kept as
an English ``%(name)s`` template with its values, so the server can say it in the
reader's language while the games never translate."""

from __future__ import annotations

import unicodedata
from string import Formatter

# Characters that show nothing or move the text around them: controls, format
# characters (U+202E turns the line right to left), line and paragraph separators.
_UNSHOWN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def as_typed(text: str) -> str:
    """A player's words as a sentence repeats them (between double quotes): as typed,
    but each character of _UNSHOWN shown as U+FFFD, so that the sentence reads as it
    is written and says that something was there."""
    return "".join("\ufffd" if unicodedata.category(c) in _UNSHOWN else c for c in text)


class GameError(Exception):
    """A player's mistake that a game finds: ``str(error)`` is the sentence, in English.

    The sentence is kept as ``message`` (a ``%(name)s`` template, written as a literal
    where the error is raised, so the translation catalogues find it) and ``params``,
    so the server can show it in the reader's language; the games never translate."""

    def __init__(self, message: str, **params):
        super().__init__(message % params if params else message)
        self.message, self.params = message, params


class GameText(str):
    """A sentence a game writes about a position (``status``): the English text
    itself, keeping its ``message`` template and ``params`` as a GameError does, so
    the server can show it in the reader's language. ``join`` makes one text of
    several, each still translatable."""

    joined = False  # made by ``join``: its message is only the parts' places

    def __new__(cls, message: str, **params):
        # a figure (float) reads 7.5 or 45 in English; the server writes it as its reader does
        shown = {name: format(value, "g") if isinstance(value, float) else value for name, value in params.items()}
        text = super().__new__(cls, message % shown if params else message)
        text.message, text.params = message, params
        return text

    @classmethod
    def join(cls, parts, separator: str = " ") -> str:
        if not parts:
            return ""
        names = [f"part{i}" for i in range(len(parts))]
        text = cls(separator.join(f"%({name})s" for name in names), **dict(zip(names, parts)))
        text.joined = True
        return text

    @classmethod
    def fill(cls, template: str, **values) -> str:
        """``template.format(**values)`` as one text whose values stay translatable
        (a help text in one language, holding an example ``diagram`` whose legend the
        server shows in the reader's language); the template's own words stay as written."""
        parts: list = []
        for literal, field_name, _, _ in Formatter().parse(template):
            if literal:
                parts.append(literal)
            if field_name is not None:
                parts.append(values[field_name])
        return cls.join(parts, "")


class MoveError(GameError):
    """A move that cannot be played; ``str(error)`` is a sentence for the player."""


class InvalidMoveError(MoveError):
    """The text is not a move in this game's notation."""


class IllegalMoveError(MoveError):
    """A well-formed move that the rules forbid in this position."""


class OptionError(GameError, ValueError):
    """A challenge option that the game does not know or cannot accept."""


# How a game can end: the machine-readable kind of an Outcome. Sentences about the
# end and game-record results (SGF's RE) are derived from it, never parsed from prose.
