"""The game interface every rules module implements, and the registry.

A game is a pure object: no I/O, no clock, no database, no global random
state. Its state is an immutable value that the game can turn into plain
JSON and back. Moves are small hashable values; ``parse_move`` reads what a
player typed (leniently) and ``format_move`` writes the canonical notation,
so that ``parse_move(format_move(m), state) == m``.

Errors a player can cause are exceptions derived from :class:`MoveError`;
their ``str()`` is one plain sentence the player can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Protocol, Sequence

Move = Hashable
State = Any


class MoveError(Exception):
    """A move that cannot be played; ``str(error)`` is a sentence for the player."""


class InvalidMoveError(MoveError):
    """The text is not a move in this game's notation."""


class IllegalMoveError(MoveError):
    """A well-formed move that the rules forbid in this position."""


class OptionError(ValueError):
    """A challenge option that the game does not know or cannot accept."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is a side index (0 or 1), or None for a draw."""

    winner: int | None
    reason: str
    score: str | None = None

    def to_json(self) -> dict:
        return {"winner": self.winner, "reason": self.reason, "score": self.score}

    @classmethod
    def from_json(cls, data: dict | None) -> "Outcome | None":
        return None if data is None else cls(data["winner"], data["reason"], data.get("score"))


class Game(Protocol):
    """What the server needs from a game's rules.

    ``sides`` names the two sides in seat order: seat 0 is the challenger's
    ``<user1>`` and moves first.
    """

    name: str
    title: str
    sides: tuple[str, str]

    def parse_options(self, raw: dict[str, str]) -> dict:
        """Validate challenge options (``-size=9`` arrives as ``{"size": "9"}``)."""

    def initial_state(self, options: dict) -> State: ...

    def parse_move(self, text: str, state: State) -> Move:
        """Read a move leniently; raise InvalidMoveError with the reason."""

    def format_move(self, move: Move) -> str:
        """The canonical notation of a move."""

    def apply(self, state: State, side: int, move: Move) -> State:
        """The state after ``side`` plays ``move``; raise IllegalMoveError otherwise."""

    def to_move(self, state: State) -> int | None:
        """The side whose turn it is; None when the game is over or either side may act."""

    def actors(self, state: State) -> tuple[int, ...]:
        """The sides that may act now (one side in turn; both in Go's scoring; none at the end)."""

    def outcome(self, state: State) -> Outcome | None: ...

    def legal_moves(self, state: State) -> Sequence[Move]:
        """Every legal move for the sides that may act (used for random playouts)."""

    def diagram(self, state: State, legal: bool = False) -> str:
        """The ASCII board, lines of at most 78 characters; with ``legal``, also mark
        where the player to move may play (for games that can)."""

    def status(self, state: State) -> str:
        """A short line about the position (score, captures, stock), or ''."""

    def help_text(self) -> str: ...

    def to_json(self, state: State) -> dict: ...

    # Optional: ``game_record(options, log, players, outcome, date)`` returns a
    # game record file (filename, mime type, bytes), served on the web and
    # attached to the final board mail (Go: SGF).

    def from_json(self, data: dict) -> State: ...


class TurnBased:
    """For games whose state has ``turn`` (the side to move) and ``outcome``: the
    sides simply alternate (or the game says otherwise in ``apply``)."""

    sides: tuple[str, str]

    def to_move(self, state) -> int | None:
        return None if state.outcome else state.turn

    def actors(self, state) -> tuple[int, ...]:
        return () if state.outcome else (state.turn,)

    def outcome(self, state) -> "Outcome | None":
        return state.outcome

    def guard(self, state, side: int) -> None:
        """Refuse any move on a finished game, or by the side not to move."""
        if state.outcome:
            raise IllegalMoveError("This game is over; no more moves can be played.")
        if side != state.turn:
            raise IllegalMoveError(f"It is {self.sides[state.turn]}'s turn, not {self.sides[side]}'s.")


REGISTRY: dict[str, Game] = {}


def register(game: Game) -> Game:
    REGISTRY[game.name] = game
    return game


def get_game(name: str) -> Game | None:
    """The game registered under ``name`` (case-insensitive), or None."""
    return REGISTRY.get(name.lower())


def game_names() -> list[str]:
    return sorted(REGISTRY)


def parse_int_option(raw: dict[str, str], key: str, default: int, low: int, high: int,
                     *, odd: bool = False) -> int:
    """Read one integer option with its bounds, raising OptionError with the reason."""
    if key not in raw:
        return default
    try:
        value = int(raw[key])
    except ValueError:
        raise OptionError(f"-{key} must be a whole number, not {raw[key]!r}.") from None
    if not low <= value <= high or (odd and value % 2 == 0):
        kind = "an odd number" if odd else "a number"
        raise OptionError(f"-{key} must be {kind} from {low} to {high}, not {value}.")
    return value


def reject_unknown_options(raw: dict[str, str], known: set[str], game_name: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        allowed = ", ".join(f"-{k}" for k in sorted(known)) or "none"
        raise OptionError(f"{game_name} has no option -{unknown[0]} (options: {allowed}).")


# ---------------------------------------------------------------------------
# Board coordinates shared by the square-board games (Go/GTP notation).

COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRST"  # no I, as on Go boards


def point_name(x: int, y: int) -> str:
    """``(0, 0)`` is A1, the lower left corner."""
    return f"{COLUMN_LETTERS[x]}{y + 1}"


def parse_point(text: str, size: int) -> tuple[int, int]:
    """Read ``d4``/``D4`` into ``(x, y)``; raise InvalidMoveError naming the problem."""
    t = text.strip().upper()
    if len(t) < 2 or not t[0].isalpha() or not t[1:].isdigit():
        raise InvalidMoveError(f"{text!r} is not a point; write a column letter and a row number, like D4.")
    if t[0] == "I":
        raise InvalidMoveError(f"{text!r} is not a point: column letters skip I (H is followed by J).")
    x = COLUMN_LETTERS.find(t[0])
    y = int(t[1:]) - 1
    if x < 0 or x >= size or not 0 <= y < size:
        last = point_name(size - 1, size - 1)
        raise InvalidMoveError(f"{t} is off the board; points run from A1 to {last}.")
    return x, y


def parse_point_or_pass(text: str, size: int, title: str, example: str):
    """``pass`` (or ``p``), or a point; errors say what a move of this game looks like."""
    t = text.strip().lower()
    if t in ("pass", "p"):
        return "pass"
    if not t:
        raise InvalidMoveError(f"The move is empty; send a point like {example}, or pass.")
    try:
        return parse_point(t, size)
    except InvalidMoveError as error:
        raise InvalidMoveError(f"{error} A {title} move is a point like {example}, or pass.") from None


def square_diagram(size: int, cell, last: tuple[int, int] | None) -> str:
    """Draw a square board with coordinates on all four sides.

    ``cell(x, y)`` returns one character; the last move is shown in
    parentheses. Each column is three characters wide, so 19x19 needs 63.
    """
    letters = "    " + "".join(f" {COLUMN_LETTERS[x]} " for x in range(size))
    lines = [letters]
    for y in range(size - 1, -1, -1):
        row = []
        for x in range(size):
            ch = cell(x, y)
            row.append(f"({ch})" if last == (x, y) else f" {ch} ")
        lines.append(f"{y + 1:>3} " + "".join(row) + f" {y + 1:<3}".rstrip())
    lines.append(letters)
    return "\n".join(line.rstrip() for line in lines)
