"""A board as text and JSON, shared by the board mails and the web pages (the
positions come from ``movelog``: the web's ``?move=k`` and ``show <board>#n``
replay the log there)."""

from __future__ import annotations

import threading
from collections import OrderedDict, namedtuple
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Sequence
from weakref import WeakKeyDictionary

from sqlalchemy import bindparam, insert
from sqlalchemy.orm.util import identity_key
from sqlmodel import Session, select

from . import driver_sql
from .db import flush, written_later
from .games import Consequences, Game, Outcome, get_game
from .gamewords import LOG_WORDS, game_sentence, reason_text, score_text, side_name
from .i18n import LANGUAGES, N_, LazyText, current, gettext, language
from .models import Board, MoveRecord, Player
from .movelog import MOVES, log_entries, in_force, move_consequences, replay, taken_back, undo_target

RECENT_MOVES = 10  # moves listed in a board mail (their text shows all)
LOG_CACHE_BOARDS = 1000  # boards whose committed log a process keeps (``load_records``), the latest used


def load_players(session: Session, board: Board) -> tuple[Player, Player]:
    """The board's two players (one query for those the session does not hold yet)."""
    ids = (board.seat0_id, board.seat1_id)
    held = {i: session.identity_map.get(identity_key(Player, i)) for i in ids}
    missing = [i for i, player in held.items() if player is None]
    if missing:
        held.update((p.id, p) for p in session.exec(_PLAYERS, params={"ids": missing}).all())
    return held[ids[0]], held[ids[1]]


# What the views read of a log entry: plain tuples, not ORM objects (a page or mail of
# a long game reads hundreds, and building tracked objects cost most of its time),
# and not the rows SQLAlchemy returns, whose attributes cost a lookup each. The time
# of each entry, which only the JSON of a board shows, is read apart (``entry_times``).
RECORD_COLUMNS = (MoveRecord.number, MoveRecord.seat, MoveRecord.kind, MoveRecord.text, MoveRecord.comment)
Record = namedtuple("Record", [column.key for column in RECORD_COLUMNS])


# Built once: a statement made per call costs more Python than its round trip.
_PLAYERS = select(Player).where(Player.id.in_(bindparam("ids", expanding=True)))
_RECORDS = select(*RECORD_COLUMNS).where(MoveRecord.board_id == bindparam("board")).order_by(MoveRecord.number)
_RECORDS_AFTER = select(*RECORD_COLUMNS).where(MoveRecord.board_id == bindparam("board"),
                                               MoveRecord.number > bindparam("after")).order_by(MoveRecord.number)
_TIMES = select(MoveRecord.number, MoveRecord.created_at).where(MoveRecord.board_id == bindparam("board"))


LOG_INSERT = insert(MoveRecord)  # how ``boards.append`` writes an entry (the log's only writer)


_OWN_ENTRIES = "pbm_own_entries"  # Session.info key: board id -> the lowest log number the session wrote


def entry_written(session: Session, board_id: int, number: int) -> None:
    """``session`` wrote (or keeps, to write at its end) the board's log entry
    ``number``: from there on, what it reads of the board's log may never be
    committed, so no process keeps it (``load_records``)."""
    own = session.info.setdefault(_OWN_ENTRIES, {})
    own[board_id] = min(number, own.get(board_id, number))


class _CommittedLogs:
    """The committed log entries of the LOG_CACHE_BOARDS boards a process read last,
    for one database. A board's log is append-only (``LOG_INSERT`` is its only
    writer, and no entry is changed or deleted): entries once committed stay as
    they are, so a move's read of its board's log need only fetch those after the
    ones kept here (a long game's log is hundreds of rows, read for every move,
    page and mail)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.boards: OrderedDict[int, tuple[datetime, tuple[Record, ...]]] = OrderedDict()

    def get(self, board: Board) -> tuple[Record, ...]:
        """The entries kept of ``board`` (none for another board of the same number)."""
        with self.lock:
            known = self.boards.get(board.id)
            if known is None or known[0] != board.created_at:
                return ()
            self.boards.move_to_end(board.id)
            return known[1]

    def keep(self, board: Board, committed: tuple[Record, ...]) -> None:
        with self.lock:
            known = self.boards.get(board.id)
            if known is None or known[0] != board.created_at or len(known[1]) < len(committed):
                self.boards[board.id] = (board.created_at, committed)
            self.boards.move_to_end(board.id)
            while len(self.boards) > LOG_CACHE_BOARDS:
                self.boards.popitem(last=False)

    def forget(self, board: Board) -> None:
        with self.lock:
            self.boards.pop(board.id, None)


_logs: WeakKeyDictionary = WeakKeyDictionary()  # an engine's pool (one database) -> its _CommittedLogs
_logs_lock = threading.Lock()


def _committed_logs(connection) -> _CommittedLogs:
    pool = connection.engine.pool  # shared by the engine's copies with other execution options
    with _logs_lock:
        logs = _logs.get(pool)
        if logs is None:
            logs = _logs[pool] = _CommittedLogs()
        return logs


def load_records(session: Session, board: Board) -> list[Record]:
    """The board's log in order (the session's pending changes written first, as a
    query of the session would, and the entries an optimistic unit keeps until it
    writes, last). Read are only the entries after those this process keeps
    (``_CommittedLogs``); should the two not fit together (a database replaced under
    a running process), the whole log is read."""
    flush(session, later=(Board,))  # the log's read reads no board
    # On the connection: plain rows need none of the ORM's query machinery, which cost
    # as much as reading them.
    connection, logs = session.connection(), _committed_logs(session.connection())
    known = logs.get(board)
    read = list(map(Record._make, driver_sql.rows(connection, _RECORDS_AFTER, {"board": board.id,
                                                                             "after": len(known)})))
    kept = [Record._make(entry[field] for field in Record._fields)
            for entry in written_later(session, LOG_INSERT) if entry["board_id"] == board.id]
    records = [*known, *read, *kept]
    if known and not (len(records) == board.move_count and records[-1].number == len(records)
                      and (not read or read[0].number == len(known) + 1)):
        logs.forget(board)
        records = list(map(Record._make, driver_sql.rows(connection, _RECORDS, {"board": board.id}))) + kept
    own = session.info.get(_OWN_ENTRIES, {}).get(board.id)
    committed = tuple(record for record in records[:len(records) - len(kept)] if own is None or record.number < own)
    if not committed or committed[-1].number == len(committed):  # numbered by their place, from 1
        logs.keep(board, committed)
    return records


def entry_times(session: Session, board: Board) -> dict[int, datetime]:
    """When each entry of the board's log was made, by its number."""
    return dict(session.connection().execute(_TIMES, {"board": board.id}).all())


_decoded = threading.local()  # ``last``: the Board.state this thread last decoded or stored, and its position


def board_state(game: Game, data: dict):
    """The position of a board's cached state (``Board.state``), decoded once: a move
    reads its board's state several times (the reply, the move, the board mail) and
    a long Go game's (with its superko history) costs to decode. This thread's last
    state is kept with its position (positions are immutable; the state object is
    the board's until it is stored anew, see ``remember_state``)."""
    last = getattr(_decoded, "last", None)
    if last is not None and last[0] is data:
        return last[1]
    state = game.from_json(data)
    _decoded.last = (data, state)
    return state


def remember_state(data: dict, state) -> None:
    """``data`` is what was just stored for ``state``: ``board_state`` need not decode it."""
    _decoded.last = (data, state)


# The names of browser seats whose person chose none (``rooms.start``), kept as these
# words and shown in the reader's language.
UNNAMED = (N_("Host"), N_("Guest"), N_("Player"))


def player_name(player: Player) -> str:
    """How a player is named to others, in the reader's language: the userid, or a
    browser seat's chosen name (its userid, ``guest-...``, is an internal key)."""
    if player.display_name is None:
        return player.userid
    return gettext(player.display_name) if player.display_name in UNNAMED and player.email is None \
        else player.display_name


def game_record(game: Game, board: Board, players, records: Sequence[Record]):
    """The game's record file (filename, mime type, bytes), for games that have one (Go: SGF)."""
    log = [(e.seat, "move" if e.kind in MOVES else e.kind, e.text) for _, e in in_force(log_entries(records))]
    return game.game_record(board.options, log, (player_name(players[0]), player_name(players[1])),
                            Outcome.from_json(board.outcome), board.created_at.strftime("%Y-%m-%d"))


@dataclass
class BoardView:
    """Everything a page or a mail shows about one board at one move."""

    board: Board
    game: Game
    players: tuple[Player, Player]
    records: list[Record]  # the log from its start up to the shown move
    state: object
    outcome: Outcome | None
    at_move: int  # number of log entries applied
    _texts: dict = field(default_factory=dict, repr=False, compare=False)  # (recent, legal, language) -> text()
    _did: list = field(default_factory=list, repr=False, compare=False)  # see ``did``
    _did_from: int = field(default=1 << 30, repr=False, compare=False)  # the first entry ``_did`` covers
    known: dict = field(default_factory=dict, repr=False, compare=False)  # log index -> what that move did

    @classmethod
    def current(cls, board: Board, players, records, known: dict | None = None) -> "BoardView":
        """The view of the board as it is; ``known``: what moves just played did, by
        log number (``Unit.played``), so that ``did`` need not replay them."""
        game = get_game(board.game)
        outcome = Outcome.from_json(board.outcome)
        return cls(board, game, players, list(records), board_state(game, board.state), outcome,
                   board.move_count, known={number - 1: done for number, done in (known or {}).items()})

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
        """How the seat is named (``player_name``)."""
        return player_name(self.players[seat])

    def side(self, seat: int) -> str:
        return f"{self.name(seat)} ({side_name(self.game, seat)})"

    def to_move(self) -> int | None:
        if self.outcome is not None:
            return None
        return self.game.to_move(self.state)

    @property
    def signed_off(self) -> list[str]:
        """The names of the board's players who have closed their account (``signoff``)."""
        return [self.name(seat) for seat in (0, 1) if self.players[seat].closed_at is not None]

    @property
    def new_round_open(self) -> bool:
        """Whether a new round may still be asked for: the game was played and is over
        (not declined or cancelled before it began), no new round has begun, and both
        players still have their accounts."""
        return self.board.status != "active" and self.board.next_board_id is None and not self.signed_off \
            and not (self.outcome is not None and self.outcome.kind == "cancellation")

    def status_line(self, sides: bool = True) -> str:
        """The board's state in one line: "It is bob's turn (White).", "Game won by
        alice (Black): siege." (pages, ``data-status``); without ``sides``, as mails
        write it (interface.md: "It is bob's turn." / "Game won by alice."; the mail's
        first line names the sides), the reason as a sentence of its own."""
        if self.outcome is not None:
            o = self.outcome
            score = f" {score_text(self.game, o.score)}." if o.score else ""
            reason = reason_text(self.game, o)
            if o.kind == "cancellation":
                return gettext("Game cancelled: %(reason)s.", reason=reason)
            if o.kind == "expiry":
                return gettext("Game over without a winner: %(reason)s.", reason=reason)
            if o.winner is None:
                return gettext("Game drawn: %(reason)s.", reason=reason) + score
            if sides:
                return gettext("Game won by %(side)s: %(reason)s.", side=self.side(o.winner), reason=reason) + score
            won = gettext("Game won by %(name)s.", name=self.name(o.winner))
            return f"{won} {reason[:1].upper()}{reason[1:]}.{score}"
        seat = self.to_move()
        if seat is None:
            return gettext("Either player may act now.")
        if sides:
            return gettext("It is %(name)s's turn (%(side)s).", name=self.name(seat),
                           side=side_name(self.game, seat))
        return gettext("It is %(name)s's turn.", name=self.name(seat))

    def detail(self) -> str:
        """The game's line about the shown position (``Game.status``), which says nothing
        of what is still to be done once the game is over."""
        return self.game.status(self.state, over=self.outcome is not None)

    def lazy_status_line(self) -> LazyText:
        """The status line for a sentence read later, in its reader's language: made now
        in every language, so reading it needs no database (a refusal is read after
        its transaction has rolled back)."""
        lines = {}
        for code in LANGUAGES:
            with language(code):
                lines[code] = self.status_line(sides=False)
        return LazyText(lambda: lines[current()])

    def did(self, record) -> Consequences | None:
        """What the log entry ``record`` (one of ``records``) did besides itself. Worked
        out from the earliest entry asked about on (a mail lists only the last moves,
        so a long game costs what a short one does), and kept for this view."""
        index = record.number - 1
        if index < self._did_from:
            self._did = move_consequences(self.game, self.board.options, log_entries(self.records), index,
                                          self.known)
            self._did_from = index
        return self._did[index]

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
            text = gettext("undo accepted (move %(first)s taken back)", first=first) if first == r.number - 1 \
                else gettext("undo accepted (moves %(first)s-%(last)s taken back)", first=first, last=r.number - 1)
        elif r.kind == "draw":
            text = gettext("draw agreed") if r.seat is not None else gettext("draw (the offer was open at expiry)")
        elif r.kind in MOVES:
            done = self.did(r)
            text = (r.text + {"auto": " " + gettext("(forced)"), "queued": " " + gettext("(queued)")}.get(r.kind, "")
                    + (" " + gettext("(captures %(count)s)", count=done.captures) if done.captures else ""))
        else:
            text = gettext(LOG_WORDS[r.kind]) if r.kind in LOG_WORDS else r.kind
        return text + (" " + gettext("(taken back)") if r.number in self.taken_back_numbers else "")

    def auto_moves(self, record: MoveRecord) -> tuple[str, ...]:
        """The moves the rules made on their own after this entry (Dragons' automatic tiles)."""
        done = self.did(record)
        return done.auto if done else ()

    def move_entry(self, record: MoveRecord) -> list[str]:
        """One log entry as lines of a text move list: the move, then each automatic
        move it caused, marked (Auto), beneath it."""
        who = self.name(record.seat) if record.seat is not None else gettext("server")
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
            return gettext("%(asker)s asks to take back move %(move)s; %(other)s may accept or reject.",
                           asker=asker, move=b.request_move, other=other)
        return gettext("%(asker)s offers a draw; %(other)s may accept or reject.", asker=asker, other=other)

    def diagram(self, legal: bool = False) -> str:
        """The game's ASCII board with its legend in the current language (the drawing
        itself is the same in every language)."""
        over = self.outcome is not None
        return game_sentence(self.game.diagram(self.state, legal=legal and self.is_latest and not over, over=over))

    def text(self, recent: int | None = RECENT_MOVES, legal: bool = False) -> str:
        """Header, status, recent moves and the diagram, as plain text in the current
        language (worked out once per view and language: the board mails of the
        players and watchers who read one language show the same)."""
        key = (recent, legal, current())
        if key not in self._texts:
            self._texts[key] = self._text(recent, legal)
        return self._texts[key]

    def _text(self, recent: int | None, legal: bool) -> str:
        b = self.board
        parts = [gettext("%(game)s Board %(board)s: %(first)s vs %(second)s", game=self.game.title, board=b.id,
                         first=self.side(0), second=self.side(1))]
        if not self.is_latest:
            parts.append(gettext("Position after move %(at)s of %(last)s.", at=self.at_move, last=b.move_count))
        parts.append(self.status_line(sides=False))
        if pending := self.pending_line():
            parts.append(pending)
        if detail := self.detail():
            parts.append(game_sentence(detail))
        parts.append("")
        listed = min(recent or self.at_move, self.at_move)
        if listed:
            shown = gettext("Moves (the last %(count)s of %(all)s):", count=listed, all=self.at_move) \
                if listed < self.at_move else gettext("Moves:")
            parts += [shown, *self.move_lines(listed), ""]
        parts.append(self.diagram(legal))
        return "\n".join(parts).rstrip() + "\n"

    def to_json(self, times: dict[int, datetime]) -> dict:
        """The view as JSON; ``times``: ``entry_times`` of the board."""
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
                       "taken_back": r.number in self.taken_back_numbers,
                       "at": times[r.number].isoformat()} for r in self.records for done in [self.did(r)]],
            "to_move": self.name(self.to_move()) if self.to_move() is not None else None,
            "outcome": self.outcome.to_json() if self.outcome else None,
            "request": self.pending_line(),
            "state": self.game.to_json(self.state),
            "diagram": self.game.diagram(self.state, over=self.outcome is not None),
            "last_move_at": b.last_move_at.isoformat(),
            "expires_at": b.expire_due_at.isoformat() if b.expire_due_at and b.status == "active" else None,
        }
