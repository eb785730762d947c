"""A board as text and JSON, shared by the board mails and the web pages.

``replay`` rebuilds a position from the move log (the truth); the web's
``?move=k`` and the ``show <board>#n`` command use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from sqlmodel import Session, select

from functools import partial

from .games import Game, GameError, GameText, Outcome, get_game
from .i18n import N_, LazyText, gettext, knows
from .models import Board, MoveRecord, Player

# The words the games declare in English (side names, option descriptions), marked
# for the catalogues; pages and mails show them through ``gettext``.
GAME_WORDS = (
    N_("Black"), N_("White"), N_("Blue"), N_("Orange"), N_("Goats"), N_("Tigers"), N_("O"), N_("X"),
    N_("board size"), N_("points White receives"), N_("board size, odd"),
    N_("territory Blue needs beyond Orange's"), N_("how many of each side's biggest dragons count"),
    N_("tiles in the pool (default 50; 40 with -tantrix)"), N_("score the best dragon as in Tantrix"),
    # the games' outcome reasons that are whole sentences (those with numbers stay English)
    N_("area scoring"), N_("area scoring: equal"), N_("both tigers are trapped"), N_("the goats cannot move"),
    N_("the same position occurred a third time"), N_("Tantrix scoring, equal best dragons"),
    N_("Tantrix scoring, the best dragon"),
)


def game_sentence(said) -> str:
    """What a game said, in the current language: a game's error (``GameError``) or
    text (``GameText``) through the catalogue, with the sentences it quotes and the
    sides it names (GAME_WORDS) translated too; anything else as it says itself."""
    if not isinstance(said, (GameError, GameText)) or not said.message:
        return str(said)
    params = {name: game_sentence(value) if isinstance(value, (GameError, GameText))
              else gettext(value) if isinstance(value, str) and value in GAME_WORDS else value
              for name, value in said.params.items()}
    return gettext(said.message, **params)


def speaks_current_language(said) -> bool:
    """Whether ``game_sentence(said)`` has every part of ``said`` in the current
    language's catalogue (a game module added without its translations has not)."""
    if not isinstance(said, (GameError, GameText)) or not said.message:
        return True
    return ((getattr(said, "joined", False) or knows(said.message))
            and all(speaks_current_language(value) for value in said.params.values()))


def lazy_sentence(error: Exception) -> LazyText:
    """``game_sentence(error)`` when it becomes text: for a PlayerError that passes a
    game's sentence on before anyone knows who reads it."""
    return LazyText(partial(game_sentence, error))


def side_name(game: Game, seat: int) -> str:
    """The name of the game's side ``seat`` (Black, White, ...) in the current language."""
    return gettext(game.sides[seat])


@dataclass(frozen=True)
class LogEntry:
    """What the pure replay needs of one move record."""

    kind: str
    seat: int | None
    text: str


# An outcome's reason is stored in English (the board's data); ``reason_text`` shows
# it in the reader's language.
RESIGNED = N_("%(side)s resigned")
OUT_OF_TIME = N_("%(side)s ran out of time")
DECLINED = N_("%(side)s declined the game before moving")


def reason_text(game: Game, outcome: Outcome) -> str:
    """The outcome's reason in the current language: the server's own reasons (above)
    translated; a game's own reason as the catalogue has it, else as the game wrote it."""
    for seat, side in enumerate(game.sides):
        for reason in (RESIGNED, OUT_OF_TIME, DECLINED):
            if outcome.reason == reason % {"side": side}:
                return gettext(reason, side=side_name(game, seat))
    return gettext(outcome.reason)


def ending(game: Game, kind: str, seat: int | None) -> Outcome:
    """How a log entry that is not a move ends the game (its reason in English)."""
    if kind == "resign":
        return Outcome(1 - seat, RESIGNED % {"side": game.sides[seat]}, kind="resignation")
    if kind == "forfeit":
        return Outcome(1 - seat, OUT_OF_TIME % {"side": game.sides[seat]}, kind="time")
    if kind == "decline":
        return Outcome(None, DECLINED % {"side": game.sides[seat]}, kind="cancellation")
    if kind == "cancel":
        return Outcome(None, N_("the game expired before both players had moved"), kind="cancellation")
    if kind == "expire":
        return Outcome(None, N_("it expired while both players could act (scoring was not finished)"),
                       kind="expiry")
    raise ValueError(f"unknown log entry kind {kind!r}")


MOVES = ("move", "auto")  # log kinds that are moves: a player's, or one the server played (forced)


def replay(game: Game, options: dict, log: Sequence[LogEntry]):
    """The game state and outcome after the given log entries."""
    state = game.initial_state(options)
    ended: Outcome | None = None
    for entry in log:
        if entry.kind in MOVES:
            state = game.apply(state, entry.seat, game.parse_move(entry.text, state))
        else:
            ended = ending(game, entry.kind, entry.seat)
    return state, ended or game.outcome(state)


def load_players(session: Session, board: Board) -> tuple[Player, Player]:
    return session.get(Player, board.seat0_id), session.get(Player, board.seat1_id)


def load_records(session: Session, board: Board, last: int | None = None) -> list[MoveRecord]:
    """The board's log in order; with ``last``, only its final entries."""
    query = select(MoveRecord).where(MoveRecord.board_id == board.id)
    if last is None:
        return list(session.exec(query.order_by(MoveRecord.number)).all())
    return list(reversed(session.exec(query.order_by(MoveRecord.number.desc()).limit(last)).all()))


def game_record(game: Game, board: Board, players, records: Sequence[MoveRecord]):
    """The game's record file (filename, mime type, bytes), for games that have one (Go: SGF)."""
    log = [(r.seat, "move" if r.kind in MOVES else r.kind, r.text) for r in records]
    return game.game_record(board.options, log, (players[0].userid, players[1].userid),
                            Outcome.from_json(board.outcome), board.created_at.strftime("%Y-%m-%d"))


def log_entries(records: Sequence[MoveRecord]) -> list[LogEntry]:
    return [LogEntry(r.kind, r.seat, r.text) for r in records]


@dataclass
class BoardView:
    """Everything a page or a mail shows about one board at one move."""

    board: Board
    game: Game
    players: tuple[Player, Player]
    records: list[MoveRecord]  # the log up to the shown move (or only its tail, for mails)
    state: object
    outcome: Outcome | None
    at_move: int  # number of log entries applied

    @classmethod
    def current(cls, board: Board, players, records) -> "BoardView":
        game = get_game(board.game)
        outcome = Outcome.from_json(board.outcome)
        return cls(board, game, players, list(records), game.from_json(board.state), outcome,
                   board.move_count)

    @classmethod
    def at(cls, board: Board, players, records, move: int) -> "BoardView":
        game = get_game(board.game)
        shown = list(records)[:move]
        state, outcome = replay(game, board.options, log_entries(shown))
        return cls(board, game, players, shown, state, outcome, len(shown))

    @property
    def is_latest(self) -> bool:
        return self.at_move == self.board.move_count

    def name(self, seat: int) -> str:
        """How the seat is named: its userid, or a browser seat's chosen name."""
        return self.players[seat].display_name or self.players[seat].userid

    def side(self, seat: int) -> str:
        return f"{self.name(seat)} ({side_name(self.game, seat)})"

    def to_move(self) -> int | None:
        if self.outcome is not None:
            return None
        return self.game.to_move(self.state)

    def status_line(self) -> str:
        if self.outcome is not None:
            o = self.outcome
            score = f" {o.score}." if o.score else ""
            reason = reason_text(self.game, o)
            if o.kind == "cancellation":
                return gettext("Game cancelled: %(reason)s.", reason=reason)
            if o.kind == "expiry":
                return gettext("Game over without a winner: %(reason)s.", reason=reason)
            if o.winner is None:
                return gettext("Game drawn: %(reason)s.", reason=reason) + score
            return gettext("Game won by %(side)s: %(reason)s.", side=self.side(o.winner), reason=reason) + score
        seat = self.to_move()
        if seat is None:
            return gettext("Either player may act now.")
        return gettext("It is %(name)s's turn (%(side)s).", name=self.name(seat), side=side_name(self.game, seat))

    def move_lines(self, last: int | None = None) -> list[str]:
        records = self.records[-last:] if last else self.records
        lines = []
        for r in records:
            who = self.name(r.seat) if r.seat is not None else gettext("server")
            text = r.text if r.kind == "move" else gettext("%(move)s (forced)", move=r.text) if r.kind == "auto" \
                else r.kind
            lines.append(f"{r.number:>4}. {who:<12} {text}")
        return lines

    def diagram(self, legal: bool = False) -> str:
        return self.game.diagram(self.state, legal=legal and self.is_latest)

    def text(self, recent: int | None = 10, legal: bool = False) -> str:
        """Header, status, recent moves and the diagram, as plain text."""
        b = self.board
        parts = [gettext("%(game)s Board %(board)s: %(first)s vs %(second)s", game=self.game.title, board=b.id,
                         first=self.side(0), second=self.side(1))]
        if not self.is_latest:
            parts.append(gettext("Position after move %(at)s of %(last)s.", at=self.at_move, last=b.move_count))
        parts.append(self.status_line())
        if detail := self.game.status(self.state):
            parts.append(game_sentence(detail))
        parts.append("")
        moves = self.move_lines(recent)
        if moves:
            shown = gettext("Moves (the last %(count)s of %(all)s):", count=len(moves), all=self.at_move) \
                if len(moves) < self.at_move else gettext("Moves:")
            parts += [shown, *moves, ""]
        parts.append(self.diagram(legal))
        return "\n".join(parts).rstrip() + "\n"

    def to_json(self) -> dict:
        b = self.board
        return {
            "board": b.id,
            "game": b.game,
            "options": b.options,
            "players": [{"userid": self.players[s].userid, "name": self.name(s), "side": self.game.sides[s]}
                        for s in (0, 1)],
            "status": b.status if self.is_latest else "history",
            "move": self.at_move,
            "moves": [{"number": r.number, "player": self.name(r.seat) if r.seat is not None else None,
                       "kind": r.kind, "move": r.text, "comment": r.comment,
                       "at": r.created_at.isoformat()} for r in self.records],
            "to_move": self.name(self.to_move()) if self.to_move() is not None else None,
            "outcome": self.outcome.to_json() if self.outcome else None,
            "state": self.game.to_json(self.state),
            "diagram": self.game.diagram(self.state),
            "last_move_at": b.last_move_at.isoformat(),
            "expires_at": b.expire_due_at.isoformat() if b.expire_due_at and b.status == "active" else None,
        }
