"""The server's own player, userid ``computer``.

It thinks outside any transaction (in a small pool of threads, started after
the commit that made it the computer's turn), then moves through the unit of
work like a person, asserting the move number it thought about: a board that
changed meanwhile is left alone, never half-applied. An engine that fails or
is too slow leaves the game waiting; the human is told (once per position), and the scheduler's
``sweep`` tries again.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

from sqlalchemy.engine import Engine
from sqlalchemy import func
from sqlmodel import select

from ..config import Settings
from ..db import reading
from ..boardview import load_records
from ..movelog import MOVES, in_force, log_entries
from ..games import get_game
from ..i18n import lazy_gettext
from ..models import Board, Player
from . import boards, letters, unit as units
from .errors import PlayerError
from .unit import Unit, run

log = logging.getLogger(__name__)

USERID = "computer"

_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="pbm-computer")
_pending: dict[int, Future] = {}  # board id -> its thinking job
_pending_lock = threading.Lock()
_again: set[int] = set()  # boards changed while their job was running
_computer_ids: dict[str, int] = {}  # database URL -> the computer's player id
_looked_up: dict[str, tuple[float, int]] = {}  # database URL -> when it was looked for in vain, and the
# largest player id then: a seat with a larger id may be a computer made since, by another process
_told: dict[tuple[str, int], tuple] = {}  # (database URL, board id) -> the position (move number and time
# of the last move) whose failure the players were told of: retries (every 2 minutes) that fail too tell nobody
LOOK_AGAIN = 5.0  # seconds a lookup in vain stands for the players it saw (a guard for the rare
# race where the computer's row, made by another process, commits after a newer player's)


def player(unit: Unit) -> Player:
    """The computer's account (made on first use; it has no address and no password)."""
    found = unit.session.exec(select(Player).where(Player.userid == USERID)).first()
    if found is None:
        found = Player(userid=USERID, email=None, invited=False, created_at=unit.now)
        unit.session.add(found)
        unit.session.flush()
    _computer_ids[str(unit.session.get_bind().url)] = found.id
    return found


def check_can_play(game, settings: Settings) -> None:
    """PlayerError when the computer cannot play ``game`` here (Go needs GNU Go)."""
    from ..players import available

    if game.name == "go" and not available(settings.gnugo_path):
        raise PlayerError(lazy_gettext("GNU Go is not installed on this server (it is looked for at %(path)s), "
                                       "so the computer cannot play Go here; it plays the other games.",
                                       path=settings.gnugo_path),
                          lazy_gettext("a challenge of computer at another game, or of another player at Go"))


def seat_to_act(session, board: Board) -> int | None:
    """The computer's seat if it should act now on ``board``, else None."""
    if board.status != "active":
        return None
    ids = {p.id: p.userid for p in session.exec(select(Player).where(
        Player.id.in_((board.seat0_id, board.seat1_id)))).all()}
    seats = [s for s in (0, 1) if ids.get(board.player_id(s)) == USERID]
    if not seats:
        return None
    from ..players import computer_can_act

    state = boards.current_state(get_game(board.game), board)
    return next((s for s in seats if computer_can_act(board.game, state, s)), None)


def think_and_move(engine: Engine, settings: Settings, board_id: int) -> bool:
    """Play the computer's move on ``board_id`` if it is to act; True if it moved."""
    from ..players import EngineError, computer_move

    with reading(engine) as session:
        board = session.get(Board, board_id)
        seat = seat_to_act(session, board) if board is not None else None
        if seat is None:
            return False
        game = get_game(board.game)
        state, number = boards.current_state(game, board), board.move_count + 1
        position = (number, board.last_move_at)
        moves = [(entry.seat, entry.text) for _, entry in in_force(log_entries(load_records(session, board)))
                 if entry.kind in MOVES] if board.game == "go" else []  # the moves that stand (undo)
    try:  # outside any transaction: thinking may take a second or two
        text = computer_move(board.game, state, seat, seed=board_id * 1009 + number, moves=moves,
                             gnugo_path=settings.gnugo_path, gnugo_level=settings.gnugo_level,
                             search_seconds=settings.computer_seconds)
    except EngineError as error:
        log.warning("the computer could not move on board %s: %s", board_id, error)
        told = (str(engine.url), board_id)
        if _told.get(told) != position:  # once per position, not at every retry
            reason = str(error)
            run(engine, settings, lambda unit: _tell_failure(unit, board_id, number, reason))
            _told[told] = position
        return False
    _told.pop((str(engine.url), board_id), None)

    def move(unit: Unit) -> bool:
        locked = boards.lock(unit, board_id)
        if locked.move_count + 1 != number:
            return False  # the board changed while the computer thought; it thinks again
        boards.play(unit, locked, seat, text, "", number)
        return True

    try:
        return run(engine, settings, move)
    except PlayerError as error:
        log.error("the computer's move %r on board %s was refused: %s", text, board_id, error)
        return False


def _tell_failure(unit: Unit, board_id: int, number: int, reason: str) -> None:
    board = boards.lock(unit, board_id)
    if board.move_count + 1 != number:
        return
    for player in boards.load_players(unit.session, board):
        letters.send(unit, player.email, "computer_failed", board=board, reason=reason,
                     game=get_game(board.game))


def _computer_id(engine: Engine, seated: set[int]) -> int | None:
    """The computer's player id in this database (remembered once it exists), or None.
    A lookup in vain is asked again when one of the ``seated`` player ids is newer than
    every player it saw (another process may have made the computer since), and
    after LOOK_AGAIN seconds in any case."""
    url = str(engine.url)
    if url in _computer_ids:
        return _computer_ids[url]
    when, largest = _looked_up.get(url, (-LOOK_AGAIN, -1))
    if time.monotonic() - when < LOOK_AGAIN and max(seated, default=-1) <= largest:
        return None
    with reading(engine) as session:
        known = session.exec(select(Player.id).where(Player.userid == USERID)).first()
        if known is None:
            _looked_up[url] = (time.monotonic(), session.exec(select(func.max(Player.id))).one() or 0)
    if known is not None:
        _computer_ids[url] = known
    return known


def schedule(engine: Engine, unit: Unit) -> None:
    """After a commit: think about every changed board the computer plays on."""
    if not any(unit.seated.values()):
        return
    computer = _computer_id(engine, {player for seats in unit.seated.values() for player in seats})
    for board_id, seats in unit.seated.items():
        if computer not in seats:
            continue
        with _pending_lock:
            if board_id in _pending and not _pending[board_id].done():
                _again.add(board_id)  # the running job looks once more before it ends
                continue
            _pending[board_id] = _pool.submit(_safely, engine, unit.settings, board_id)


MAX_MOVES_IN_A_ROW = 500  # a guard: the computer keeps the turn at most this often (2 Dragons after a pass)


def _safely(engine: Engine, settings: Settings, board_id: int) -> None:
    """Think and move while the computer is to act: it may keep the turn (2 Dragons
    after the other side passed), and the commit of its own move finds this job
    still running, so it does not start another."""
    try:
        for _ in range(MAX_MOVES_IN_A_ROW):
            if think_and_move(engine, settings, board_id):
                continue
            with _pending_lock:  # a commit while this job ran asked for one more look
                if board_id not in _again:
                    del _pending[board_id]  # ending: a commit from now on starts a job of its own
                    break
                _again.discard(board_id)
    except Exception:  # the scheduler's sweep tries again
        log.exception("the computer failed on board %s", board_id)


def wait_idle(timeout: float) -> bool:
    """Wait until no thinking is pending (tests, and ``pbm ingest`` before it exits)."""
    with _pending_lock:
        jobs = list(_pending.values())
    done, not_done = wait(jobs, timeout=timeout)
    return not not_done


def sweep(engine: Engine, settings: Settings) -> int:
    """The scheduler's job: the computer moves wherever it is to act (after a failed
    engine, a restart, or a process that exited before it thought)."""
    with reading(engine) as session:
        computer = session.exec(select(Player.id).where(Player.userid == USERID)).first()
        if computer is None:
            return 0
        ids = session.exec(select(Board.id).where(Board.status == "active", (Board.seat0_id == computer)
                                                  | (Board.seat1_id == computer))).all()
    return sum(think_and_move(engine, settings, board_id) for board_id in ids)


units.AFTER_COMMIT.append(schedule)
