"""Deadlines: reminders to the player to move, expiry of idle boards, and the
end of vacations.

Each sweep finds the due boards, then claims each one in its own unit of work
with a conditional UPDATE, so running a sweep twice, late, or from two
processes at once sends nothing twice. A board with a player on vacation is
neither reminded nor expired; both sweeps first end the vacations whose days
have run out (which moves those players' deadlines on, see ``social``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import select

from ..boardview import board_state, load_players
from ..movelog import OWN_MOVES
from ..config import Settings
from ..db import reading
from ..games import get_game
from ..models import Board, MoveRecord, Vacation, utcnow
from . import boards, computer, letters, social
from .unit import Unit, run


def _started(unit: Unit, board: Board) -> bool:
    """Both players have made a move of their own."""
    movers = set(unit.session.exec(select(MoveRecord.seat).where(
        MoveRecord.board_id == board.id, MoveRecord.kind.in_(OWN_MOVES))).all())
    return movers >= {0, 1}


def _claim(unit: Unit, board_id: int, condition, values: dict) -> Board | None:
    """The board, claimed for this sweep when it still meets ``condition``; None otherwise.

    On PostgreSQL the row is locked first, in a statement of its own: a conditional
    UPDATE that waits for a row another transaction holds judges the row as that
    one left it, but its subqueries (nobody on vacation) as they stood when the
    UPDATE began, so a vacation committed meanwhile would go unseen and its board
    be reminded or expired after all. The UPDATE after the lock begins after that
    commit and sees it. (SQLite has one writer at a time: no lock to take.)"""
    unit.session.execute(select(Board.id).where(Board.id == board_id).with_for_update())
    claimed = unit.session.execute(
        Board.__table__.update().where(Board.id == board_id, Board.status == "active", condition)
        .values(version=Board.version + 1, **values))
    if claimed.rowcount != 1:
        return None
    board = unit.session.get(Board, board_id)
    unit.session.refresh(board)
    unit.board = board
    return board


def _due(engine: Engine, condition) -> list[int]:
    with reading(engine) as session:
        return list(session.exec(select(Board.id).where(Board.status == "active", condition)).all())


def _nobody_away(before=None):
    """The condition that neither player of a board is on vacation (``before``: on a
    vacation begun before that time of the board's, its deadline: a vacation begun after
    the deadline passed, the sweep being late, does not hold it)."""
    away = select(Vacation.player_id).where(Vacation.ended_at.is_(None),
                                            *([Vacation.started_at < before] if before is not None else []))
    return Board.seat0_id.not_in(away) & Board.seat1_id.not_in(away)


def end_vacations(engine: Engine, settings: Settings, now: datetime) -> int:
    """End every vacation whose days have run out."""
    with reading(engine) as session:
        due = session.exec(select(Vacation.id).where(Vacation.ended_at.is_(None), Vacation.until <= now)).all()
    return sum(run(engine, settings, lambda unit, i=i: social.end_vacation(unit, i), now=now) for i in due)


def _awaited(board: Board) -> int | None:
    """The seat the board waits for (``Game.awaited``): the player to move, or in Go's
    scoring the one who has not confirmed the marking the other confirmed."""
    if board.to_move is not None:
        return board.to_move
    game = get_game(board.game)
    return game.awaited(board_state(game, board.state)) if board.status == "active" else None


def send_reminders(engine: Engine, settings: Settings, now: datetime | None = None) -> int:
    """Remind the player to move on every board past its nag time, once per idle spell;
    not on a board past its expiry too (a sweep that comes late: it only expires)."""
    now = now or utcnow()
    end_vacations(engine, settings, now)
    due = (Board.nag_due_at <= now) & (Board.expire_due_at > now) & Board.nagged_at.is_(None) & _nobody_away()

    def remind(unit: Unit, board_id: int) -> bool:
        board = _claim(unit, board_id, due, {"nagged_at": now})
        if board is None:
            return False
        deadline = board.expire_due_at.strftime("%Y-%m-%d %H:%M UTC")
        started = _started(unit, board)
        if board.request_kind == "draw" and started:  # accepted at expiry: either may still move or answer
            seats, occasion = (0, 1), "reminder-draw"
        elif (awaited := _awaited(board)) is not None:
            seats, occasion = (awaited,), "reminder" if started else "reminder-unstarted"
        else:  # both may act (Go's scoring, nobody has confirmed): remind both
            seats, occasion = (0, 1), "reminder-both"
        letters.board_mails(unit, board, load_players(unit.session, board), seats=seats, occasion=occasion,
                            deadline=deadline, auto="auto-generated")
        return True

    return sum(run(engine, settings, lambda unit, i=i: remind(unit, i), now=now) for i in _due(engine, due))


def expire_boards(engine: Engine, settings: Settings, now: datetime | None = None) -> int:
    """End every board past its expiry: a game that never started (not both players have
    moved) is cancelled, even with a draw offer open (the opponent may never have seen the
    board: no rated draw); on a started one a draw offer still open is accepted (as pbmserv
    does), otherwise the player to move forfeits."""
    now = now or utcnow()
    end_vacations(engine, settings, now)
    due = (Board.expire_due_at <= now) & _nobody_away(before=Board.expire_due_at)

    def expire(unit: Unit, board_id: int) -> bool:
        board = _claim(unit, board_id, due, {})
        if board is None:
            return False
        seat = _awaited(board)
        if not _started(unit, board):
            kind = "cancel"
        elif board.request_kind == "draw":
            kind = "draw"
        else:
            kind = "forfeit" if seat is not None else "expire"
        boards.end(unit, board, kind, seat if kind == "forfeit" else None)
        letters.board_mails(unit, board, load_players(unit.session, board), occasion="expired",
                            auto="auto-generated")
        return True

    ids = _due(engine, due)
    _computer_first(engine, settings, ids)
    return sum(run(engine, settings, lambda unit, i=i: expire(unit, i), now=now) for i in ids)


def _computer_first(engine: Engine, settings: Settings, board_ids: list[int]) -> None:
    """Let the computer move on the due boards that wait for it, before they expire: a
    sweep after the server was down (it stopped before the computer thought) must not
    forfeit the computer, which never had its turn. Only an engine that fails still
    leaves the board to expire (its players were told the game waits)."""
    with reading(engine) as session:
        waiting = [i for i in board_ids if computer.seat_to_act(session, session.get(Board, i)) is not None]
    for board_id in waiting:  # outside any transaction, as the computer always thinks
        computer.think_and_move(engine, settings, board_id)
