"""A board as text and JSON, shared by the board mails and the web pages.

``replay`` rebuilds a position from the move log (the truth), from the nearest
position it remembers; the web's ``?move=k`` and the ``show <board>#n`` command
use it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

from sqlalchemy.orm.util import identity_key
from sqlmodel import Session, select

from .games import Consequences, Game, Outcome, get_game
from .models import Board, MoveRecord, Player


@dataclass(frozen=True)
class LogEntry:
    """What the pure replay needs of one move record."""

    kind: str
    seat: int | None
    text: str


def ending(game: Game, kind: str, seat: int | None) -> Outcome:
    """How a log entry that is not a move ends the game."""
    if kind == "resign":
        return Outcome(1 - seat, f"{game.sides[seat]} resigned", kind="resignation")
    if kind == "forfeit":
        return Outcome(1 - seat, f"{game.sides[seat]} ran out of time", kind="time")
    if kind == "decline":
        return Outcome(None, f"{game.sides[seat]} declined the game before moving", kind="cancellation")
    if kind == "cancel":
        return Outcome(None, "the game expired before both players had moved", kind="cancellation")
    if kind == "expire":
        return Outcome(None, "it expired while both players could act (scoring was not finished)",
                       kind="expiry")
    if kind == "draw":
        reason = "the players agreed" if seat is not None else "a draw offer was still open at expiry"
        return Outcome(None, reason, kind="agreement")
    raise ValueError(f"unknown log entry kind {kind!r}")


RECENT_MOVES = 10  # moves listed in a board mail (their text shows all)
OWN_MOVES = ("move", "queued")  # log kinds that are moves a player chose (queued: played when its turn came)
MOVES = (*OWN_MOVES, "auto")  # log kinds that are moves, the ones the server played (forced) included


def undo_target(text: str) -> int:
    """The first log number an ``undo N`` entry takes back."""
    return int(text.split()[1])


def in_force(log: Sequence[LogEntry]) -> list[tuple[int, LogEntry]]:
    """The (number, entry) pairs of the log that stand: every ``undo N`` entry
    removes, with itself, the entries from number N on that stood before it."""
    standing: list[tuple[int, LogEntry]] = []
    for number, entry in enumerate(log, 1):
        if entry.kind == "undo":
            first = undo_target(entry.text)
            standing = [(n, e) for n, e in standing if n < first]
        else:
            standing.append((number, entry))
    return standing


def taken_back(records: Sequence[MoveRecord]) -> set[int]:
    """The numbers of the given records that an ``undo`` among them took back."""
    gone: set[int] = set()
    for r in records:
        if r.kind == "undo":
            gone.update(range(undo_target(r.text), r.number))
    return gone


CHECKPOINT_EVERY = 25  # log entries between the positions ``replay`` remembers
MAX_CHECKPOINTS = 1000  # remembered positions per process (a 19x19 Go position is ~10 kB)
_checkpoints: OrderedDict[bytes, tuple[dict, Outcome | None]] = OrderedDict()
_checkpoints_lock = threading.Lock()


def move_consequences(game: Game, options: dict, log: Sequence[LogEntry]) -> list[Consequences | None]:
    """What each log entry did besides itself when it was played (captures, automatic
    moves), taken back since or not; None for an entry that is not a move. The log is
    replayed in order: an ``undo N`` entry returns to the position before entry N."""
    after = [game.initial_state(options)]  # after[n]: the position after entry n
    done: list[Consequences | None] = []
    for entry in log:
        state, did = after[-1], None
        if entry.kind in MOVES:
            state = game.apply(state, entry.seat, game.parse_move(entry.text, state))
            did = game.consequences(after[-1], state)
        elif entry.kind == "undo":
            state = after[undo_target(entry.text) - 1]
        after.append(state)
        done.append(did)
    return done


def replay(game: Game, options: dict, log: Sequence[LogEntry]):
    """The game state and outcome after the given log entries (those taken back
    by an ``undo`` entry left out).

    Every ``CHECKPOINT_EVERY`` standing entries the position is remembered in this
    process (least recently used first forgotten), keyed by a digest of the game,
    its options and every standing entry up to there, so a replay of a long log
    starts from the latest position seen before and costs at most
    ``CHECKPOINT_EVERY`` moves, never the whole game; a log that differs anywhere
    has other keys. Positions are kept as the game's JSON, so each replay works
    on a state of its own."""
    log = [entry for _, entry in in_force(log)]
    digest = hashlib.blake2b(json.dumps([game.name, options], sort_keys=True).encode(), digest_size=16)
    keys: list[bytes] = []  # the key of the position after entry CHECKPOINT_EVERY * (i + 1)
    for count, entry in enumerate(log, 1):
        digest.update(f"{len(entry.kind)}:{entry.kind}:{entry.seat}:{len(entry.text)}:{entry.text};".encode())
        if count % CHECKPOINT_EVERY == 0:
            keys.append(digest.copy().digest())
    start, state, ended = 0, None, None
    with _checkpoints_lock:
        for index in range(len(keys) - 1, -1, -1):
            if keys[index] in _checkpoints:
                _checkpoints.move_to_end(keys[index])
                (data, ended), start = _checkpoints[keys[index]], (index + 1) * CHECKPOINT_EVERY
                state = game.from_json(data)
                break
    if state is None:
        state = game.initial_state(options)
    for count in range(start + 1, len(log) + 1):
        entry = log[count - 1]
        if entry.kind in MOVES:
            state = game.apply(state, entry.seat, game.parse_move(entry.text, state))
        else:
            ended = ending(game, entry.kind, entry.seat)
        if count % CHECKPOINT_EVERY == 0:
            _remember(keys[count // CHECKPOINT_EVERY - 1], game.to_json(state), ended)
    return state, ended or game.outcome(state)


def _remember(key: bytes, data: dict, ended: Outcome | None) -> None:
    with _checkpoints_lock:
        _checkpoints[key] = (data, ended)
        if len(_checkpoints) > MAX_CHECKPOINTS:
            _checkpoints.popitem(last=False)


def load_players(session: Session, board: Board) -> tuple[Player, Player]:
    """The board's two players (one query for those the session does not hold yet)."""
    ids = (board.seat0_id, board.seat1_id)
    held = {i: session.identity_map.get(identity_key(Player, i)) for i in ids}
    missing = [i for i, player in held.items() if player is None]
    if missing:
        held.update((p.id, p) for p in session.exec(select(Player).where(Player.id.in_(missing))).all())
    return held[ids[0]], held[ids[1]]


# What the views read of a log entry. Plain rows, not ORM objects: a page or mail of
# a long game reads hundreds, and building tracked objects cost most of its time.
RECORD_COLUMNS = (MoveRecord.number, MoveRecord.seat, MoveRecord.kind, MoveRecord.text, MoveRecord.comment,
                  MoveRecord.created_at)


def load_records(session: Session, board: Board) -> list:
    """The board's log in order, as read-only rows with ``RECORD_COLUMNS``' names."""
    return list(session.exec(select(*RECORD_COLUMNS).where(MoveRecord.board_id == board.id)
                             .order_by(MoveRecord.number)).all())


def game_record(game: Game, board: Board, players, records: Sequence[MoveRecord]):
    """The game's record file (filename, mime type, bytes), for games that have one (Go: SGF)."""
    log = [(e.seat, "move" if e.kind in MOVES else e.kind, e.text) for _, e in in_force(log_entries(records))]
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
    records: list[MoveRecord]  # the log from its start up to the shown move
    state: object
    outcome: Outcome | None
    at_move: int  # number of log entries applied
    _texts: dict = field(default_factory=dict, repr=False, compare=False)  # (recent, legal) -> text()

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
        return f"{self.name(seat)} ({self.game.sides[seat]})"

    def to_move(self) -> int | None:
        if self.outcome is not None:
            return None
        return self.game.to_move(self.state)

    def status_line(self) -> str:
        if self.outcome is not None:
            o = self.outcome
            score = f" {o.score}." if o.score else ""
            if o.kind == "cancellation":
                return f"Game cancelled: {o.reason}."
            if o.kind == "expiry":
                return f"Game over without a winner: {o.reason}."
            if o.winner is None:
                return f"Game drawn: {o.reason}.{score}"
            return f"Game won by {self.side(o.winner)}: {o.reason}.{score}"
        seat = self.to_move()
        if seat is None:
            return "Either player may act now."
        return f"It is {self.name(seat)}'s turn ({self.game.sides[seat]})."

    @cached_property
    def consequences(self) -> list[Consequences | None]:
        """What each of ``records`` did besides itself (see ``move_consequences``)."""
        return move_consequences(self.game, self.board.options, log_entries(self.records))

    @cached_property
    def taken_back_numbers(self) -> set[int]:
        return taken_back(self.records)

    def move_text(self, record: MoveRecord) -> str:
        """A log entry as a move list shows it: ``D4``, ``c2-c4-e4 (captures 2)``,
        ``pass (forced)``, ``undo accepted (move 7 taken back)``, ``resign``; then
        ``(taken back)`` when an undo took it back."""
        r = record
        if r.kind == "undo":
            first = undo_target(r.text)
            span = f"move {first}" if first == r.number - 1 else f"moves {first}-{r.number - 1}"
            text = f"undo accepted ({span} taken back)"
        elif r.kind == "draw":
            text = "draw agreed" if r.seat is not None else "draw (the offer was open at expiry)"
        elif r.kind in MOVES:
            done = self.consequences[r.number - 1]
            text = (r.text + {"auto": " (forced)", "queued": " (queued)"}.get(r.kind, "")
                    + (f" (captures {done.captures})" if done.captures else ""))
        else:
            text = r.kind
        return text + (" (taken back)" if r.number in self.taken_back_numbers else "")

    def auto_moves(self, record: MoveRecord) -> tuple[str, ...]:
        """The moves the rules made on their own after this entry (Dragons' automatic tiles)."""
        done = self.consequences[record.number - 1]
        return done.auto if done else ()

    def move_entry(self, record: MoveRecord) -> list[str]:
        """One log entry as lines of a text move list: the move, then each automatic
        move it caused, marked (Auto), beneath it."""
        who = self.name(record.seat) if record.seat is not None else "server"
        return ([f"{record.number:>4}. {who:<12} {self.move_text(record)}"]
                + [f"{'':<18} (Auto) {text}" for text in self.auto_moves(record)])

    def move_lines(self, last: int | None = None) -> list[str]:
        """The text move list, of the ``last`` entries only when given."""
        return [line for r in (self.records[-last:] if last else self.records) for line in self.move_entry(r)]

    def pending_line(self) -> str | None:
        """The open request (an undo or a draw offer) on the latest position, as a sentence."""
        b = self.board
        if not self.is_latest or b.status != "active" or b.request_kind is None:
            return None
        asker, other = self.name(b.request_seat), self.name(1 - b.request_seat)
        if b.request_kind == "undo":
            return f"{asker} asks to take back move {b.request_move}; {other} may accept or reject."
        return f"{asker} offers a draw; {other} may accept or reject."

    def diagram(self, legal: bool = False) -> str:
        return self.game.diagram(self.state, legal=legal and self.is_latest)

    def text(self, recent: int | None = RECENT_MOVES, legal: bool = False) -> str:
        """Header, status, recent moves and the diagram, as plain text (worked out once
        per view: both players' board mails show the same)."""
        if (recent, legal) not in self._texts:
            self._texts[(recent, legal)] = self._text(recent, legal)
        return self._texts[(recent, legal)]

    def _text(self, recent: int | None, legal: bool) -> str:
        b = self.board
        parts = [f"{self.game.title} Board {b.id}: {self.side(0)} vs {self.side(1)}"]
        if not self.is_latest:
            parts.append(f"Position after move {self.at_move} of {b.move_count}.")
        parts.append(self.status_line())
        if pending := self.pending_line():
            parts.append(pending)
        if detail := self.game.status(self.state):
            parts.append(detail)
        parts.append("")
        listed = min(recent or self.at_move, self.at_move)
        if listed:
            shown = f" (the last {listed} of {self.at_move})" if listed < self.at_move else ""
            parts += [f"Moves{shown}:", *self.move_lines(listed), ""]
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
                       "kind": r.kind, "move": r.text, "commented": bool(r.comment),
                       "captures": done.captures if done else 0, "auto": list(done.auto) if done else [],
                       "at": r.created_at.isoformat()} for r, done in zip(self.records, self.consequences)],
            "to_move": self.name(self.to_move()) if self.to_move() is not None else None,
            "outcome": self.outcome.to_json() if self.outcome else None,
            "request": self.pending_line(),
            "state": self.game.to_json(self.state),
            "diagram": self.game.diagram(self.state),
            "last_move_at": b.last_move_at.isoformat(),
            "expires_at": b.expire_due_at.isoformat() if b.expire_due_at and b.status == "active" else None,
        }
