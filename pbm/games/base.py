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
import math
import re
from typing import Any, Hashable, Protocol, Sequence

from .said import (  # noqa: F401  (the errors are re-exported)
    GameError, GameText, IllegalMoveError, InvalidMoveError, MoveError, OptionError, as_typed)

Move = Hashable
State = Any


TERMINATIONS = (
    "score",         # counted at the end (area, territory, dragons)
    "siege",         # Great Kingdom: a castle group destroyed
    "loop",          # Dragons: a closed loop
    "exhaustion",    # Dragons: the pool ran out without a winning loop
    "repetition",    # Two Tigers: a position occurred a third time
    "capture",       # Two Tigers: too few goats left
    "blocked",       # Two Tigers: a side cannot move
    "resignation",   # a player resigned
    "time",          # the player to move ran out of time (forfeit at expiry)
    "expiry",        # expired while both players could act (Go's scoring)
    "cancellation",  # expired before both players had moved
    "agreement",     # both players agreed (a draw offer accepted)
)


def plain_number(text: str) -> bool:
    """Whether ``text`` is a number as players write one: ASCII digits, perhaps a sign,
    a point and an exponent (Python's int() and float() also take other scripts'
    digits, ``1_0``, ``nan`` and ``inf``)."""
    return re.fullmatch(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*", text) is not None


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is a side index (0 or 1), or None for a draw.

    ``kind`` is one of TERMINATIONS; ``reason`` the sentence shown to players;
    ``score`` a short count (``B+2.5 (Black 41, White 38.5)``); ``margin`` the
    winner's lead in points where the game counts them (SGF's ``W+2.5``)."""

    winner: int | None
    reason: str
    score: str | None = None
    kind: str = "score"
    margin: float | None = None

    def __post_init__(self):
        if self.kind not in TERMINATIONS:
            raise ValueError(f"unknown termination kind {self.kind!r}")

    def to_json(self) -> dict:
        data = {"winner": self.winner, "reason": str(self.reason), "score": self.score, "kind": self.kind}
        if isinstance(self.reason, GameText) and self.reason.params:  # kept, to say it in another language
            data["reason_text"] = {"message": self.reason.message, "params": self.reason.params}
        if self.margin is not None:
            data["margin"] = self.margin
        return data

    @classmethod
    def from_json(cls, data: dict | None) -> "Outcome | None":
        if data is None:
            return None
        said = data.get("reason_text")
        reason = GameText(said["message"], **said["params"]) if said else data["reason"]
        return cls(data["winner"], reason, data.get("score"),
                   data.get("kind") or _legacy_kind(data["reason"]), data.get("margin"))


def _legacy_kind(reason: str) -> str:
    """The kind of an outcome stored before outcomes carried one (state version 1)."""
    for words, kind in (("resigned", "resignation"), ("out of time", "time"), ("cancelled", "cancellation"),
                        ("expired", "expiry"), ("siege", "siege"), ("loop", "loop"),
                        ("without a winning loop", "exhaustion"), ("third time", "repetition"),
                        ("too few", "capture"), ("trapped", "blocked"), ("cannot move", "blocked")):
        if words in reason:
            return kind
    return "score"


@dataclass(frozen=True)
class Consequences:
    """What a move did besides itself, for the move lists: the stones or goats it
    captured, and the moves the rules then made on their own (Dragons' automatic
    tiles, in move notation, listed as ``(Auto)``)."""

    captures: int = 0
    auto: tuple[str, ...] = ()


@dataclass(frozen=True)
class OptionSpec:
    """One challenge option (``-size=9``): its type, default and bounds.

    ``kind`` is ``int``, ``half`` (a whole or half number), ``bool`` or ``choice``
    (one of ``choices``). ``default`` None means the game derives it from the
    other options (``GameInfo.parse_options`` leaves it out)."""

    name: str
    kind: str
    default: object
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    odd: bool = False

    def parse(self, text: str):
        """Read the option's value from its text (empty when the option was written
        bare: ``-tantrix`` is true); raise OptionError with the reason."""
        if self.kind == "bool":
            word = text.strip().lower()
            if word in ("", "true", "1", "yes", "on"):
                return True
            if word in ("false", "0", "no", "off"):
                return False
            raise OptionError("-%(name)s must be true or false, not \"%(text)s\".", name=self.name, text=as_typed(text))
        if not text.strip():
            example = self.default if self.default is not None else self.choices[0] if self.choices else self.low
            raise OptionError("-%(name)s needs a value, like -%(name)s=%(example)s.", name=self.name,
                              example=format(example, "g") if isinstance(example, float) else example)
        if self.kind == "half":
            value = float(text) if plain_number(text) else float("nan")
            # the range first: int() of a huge finite value's double (1e308 * 2) overflows
            if not math.isfinite(value) or not self.low <= value <= self.high or value * 2 != int(value * 2):
                raise OptionError("-%(name)s must be a whole or half number from %(low)s to %(high)s, "
                                  "like %(default)s, not \"%(text)s\".", name=self.name, low=format(self.low, "g"),
                                  high=format(self.high, "g"), default=self.default, text=as_typed(text))
            return value
        digits = re.fullmatch(r"\s*([+-]?[0-9]{1,100})\s*", text)  # ASCII only: int() takes other scripts' digits
        value = int(digits.group(1)) if digits else None
        if self.kind == "choice":
            if value not in self.choices:
                allowed = GameText("%(values)s or %(last)s", values=", ".join(str(c) for c in self.choices[:-1]),
                                   last=self.choices[-1])
                raise OptionError("-%(name)s must be %(allowed)s, not \"%(text)s\".", name=self.name, allowed=allowed,
                                  text=as_typed(text))
            return value
        if value is None:
            raise OptionError("-%(name)s must be a whole number, not \"%(text)s\".", name=self.name,
                              text=as_typed(text))
        if not self.low <= value <= self.high or (self.odd and value % 2 == 0):
            bounds = {"name": self.name, "low": format(self.low, "g"), "high": format(self.high, "g"),
                      "value": value}
            if self.odd:
                raise OptionError("-%(name)s must be an odd number from %(low)s to %(high)s, not %(value)s.",
                                  **bounds)
            raise OptionError("-%(name)s must be a number from %(low)s to %(high)s, not %(value)s.", **bounds)
        return value

    def describe(self) -> "GameText":
        """One line for the help: ``-size: board size, 9 13 19 (default 9)``, its words
        translatable (the values stay as they are typed)."""
        if self.kind == "choice":
            values = " ".join(str(c) for c in self.choices)
        elif self.kind == "bool":
            values = GameText("true or false")
        else:
            values = GameText("%(low)s to %(high)s", low=format(self.low, "g"), high=format(self.high, "g"))
        if self.default is None:
            return GameText("-%(name)s: %(help)s, %(values)s", name=self.name, help=self.help, values=values)
        return GameText("-%(name)s: %(help)s, %(values)s (default %(default)s)", name=self.name, help=self.help,
                        values=values, default=str(self.default).lower())


@dataclass(frozen=True)
class GameInfo:
    """What a game declares about itself, once: read by the command parser, the help,
    the web pages and the tests.

    ``passing``: ``pass`` is a move; ``words``: the other moves written as one word
    (Go's ``done``, ``resume``); ``record_format``: the game-record file it writes
    (``sgf``) or None; ``forced_moves``: the rules can leave a player exactly one
    move, which the server then plays at once (pbmserv's ForcedMove)."""

    name: str
    title: str
    sides: tuple[str, str]
    options: tuple[OptionSpec, ...] = ()
    passing: bool = False
    words: tuple[str, ...] = ()
    record_format: str | None = None
    forced_moves: bool = False

    @property
    def word_moves(self) -> tuple[str, ...]:
        """Every move of the game written as one word (a player may abbreviate them)."""
        return ("pass",) * self.passing + self.words

    def defaults(self) -> dict:
        return {o.name: o.default for o in self.options if o.default is not None}

    def parse_options(self, raw: dict[str, str]) -> dict:
        """Validate challenge options (``-size=9`` arrives as ``{"size": "9"}``): every
        known option with its value or its default; OptionError names what is wrong."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            allowed = ", ".join(f"-{k}" for k in sorted(known)) or GameText("none")
            raise OptionError("%(game)s has no option -%(option)s (options: %(allowed)s).", game=self.title,
                              option=as_typed(unknown[0]), allowed=allowed)
        values = self.defaults()
        values.update({name: known[name].parse(text) for name, text in raw.items()})
        return values


class Game(Protocol):
    """What the server needs from a game's rules.

    ``sides`` names the two sides in seat order: seat 0 is the challenger's
    ``<user1>`` and moves first.
    """

    info: GameInfo
    name: str  # info.name, info.title and info.sides, for brevity
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

    def awaited(self, state: State) -> int | None:
        """The side the game waits for, which is reminded and forfeits at expiry: the side
        to move, or where both may act the one that has not yet done its part (Go's
        scoring once one side confirmed); None when it waits for both or is over."""

    def outcome(self, state: State) -> Outcome | None: ...

    def legal_moves(self, state: State) -> Sequence[Move]:
        """Every legal move for the sides that may act (used for random playouts)."""

    def only_move(self, state: State) -> Move | None:
        """The one legal move when the rules leave the side to act exactly one, else
        None (``Declared`` answers from ``legal_moves``; a game may answer sooner)."""

    def diagram(self, state: State, legal: bool = False, over: bool = False) -> str:
        """The ASCII board, lines of at most 78 characters; with ``legal``, also mark
        where the player to move may play (for games that can). ``over``: the game
        ended outside the rules (resignation, agreement, time), so nothing is shown
        as still to be done (Dragons' compulsory gaps, Go's unconfirmed areas). The English text, made
        with ``GameText.join`` of the drawing (plain text, the same in every language)
        and its legend lines (``GameText``), so the server shows the legend in the
        reader's language."""

    def status(self, state: State, over: bool = False) -> str:
        """A short line about the position (score, captures, stock), or ''. ``over``: the
        game has ended although the position does not say so (a resignation, a forfeit,
        an agreed draw), so the line says nothing of what is still to be done."""

    def point_contents(self, state: State) -> dict[str, str]:
        """What stands on each occupied point, by the point's name (``GameText``: "a
        black stone"), for the keyboard cursor's spoken description; {} for a game
        whose moves go on empty cells only (Dragons)."""
        return {}

    def help_text(self, language: str = "en") -> str:
        """The rules, notation and an example board, in ``language`` (``en`` or ``de``);
        made with ``GameText.fill``, so the example's legend can follow ``language`` too."""
        ...

    def consequences(self, before: State, after: State) -> Consequences:
        """What the move from ``before`` to ``after`` did besides itself (captures,
        automatic moves); ``Declared`` answers nothing for games without either."""

    def to_json(self, state: State) -> dict: ...

    # Optional: ``game_record(options, log, players, outcome, date)`` returns a
    # game record file (filename, mime type, bytes), served on the web and
    # attached to the final board mail (Go: SGF).

    def from_json(self, data: dict) -> State: ...


class Declared:
    """Name, title, sides and option parsing, read from the game's one ``info`` value."""

    info: GameInfo

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def sides(self) -> tuple[str, str]:
        return self.info.sides

    def parse_options(self, raw: dict[str, str]) -> dict:
        return self.info.parse_options(raw)

    def with_defaults(self, options: dict) -> dict:
        """Stored options completed by the declared defaults."""
        return {**self.info.defaults(), **options}

    def only_move(self, state):
        """The one legal move, from ``legal_moves``, or None."""
        moves = self.legal_moves(state)
        return moves[0] if len(moves) == 1 else None

    def consequences(self, before, after) -> Consequences:
        return Consequences()

    def awaited(self, state):
        return self.to_move(state)


class TurnBased(Declared):
    """For games whose state has ``turn`` (the side to move) and ``outcome``: the
    sides simply alternate (or the game says otherwise in ``apply``)."""

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
            raise IllegalMoveError("It is %(turn)s's turn, not %(side)s's.", turn=self.sides[state.turn],
                                   side=self.sides[side])


REGISTRY: dict[str, Game] = {}


def register(game: Game) -> Game:
    REGISTRY[game.name] = game
    return game


def get_game(name: str) -> Game | None:
    """The game registered under ``name`` (case-insensitive), or None."""
    return REGISTRY.get(name.lower())


def game_names() -> list[str]:
    return sorted(REGISTRY)
