"""``pbm db rebuild``: every board's log replayed into its cached state, and what differed corrected."""

from __future__ import annotations

import json

from sqlalchemy.engine import Engine
from sqlmodel import select

from ..boardview import load_records
from ..config import Settings
from ..db import reading
from ..games import Outcome, get_game
from ..models import Board
from ..movelog import log_entries, replay
from .boards import STATE_VERSION, stored
from .unit import Unit, run


def rebuild(engine: Engine, settings: Settings) -> list[str]:
    """Replay every board's log into its cached state; returns a line for each board
    whose cache differed (and was corrected)."""
    with reading(engine) as session:
        ids = session.exec(select(Board.id).order_by(Board.id)).all()
    report: list[str] = []

    def one(unit: Unit, board_id: int) -> None:
        board = unit.session.exec(select(Board).where(Board.id == board_id).with_for_update()).one()
        game = get_game(board.game)
        records = load_records(unit.session, board)
        state, outcome = replay(game, board.options, log_entries(records))
        right = {"state": json.loads(json.dumps(stored(game, state))),
                 "move_count": len(records),
                 "status": "finished" if outcome is not None else "active",
                 "to_move": None if outcome is not None else game.to_move(state),
                 "outcome": outcome.to_json() if outcome is not None else None}
        cached = {"state": {**board.state, "version": board.state.get("version", STATE_VERSION)},
                  "move_count": board.move_count, "status": board.status, "to_move": board.to_move,
                  "outcome": Outcome.from_json(board.outcome).to_json() if board.outcome else None}
        wrong = [name for name in right if right[name] != cached[name]]
        if wrong:
            for name in wrong:
                setattr(board, name, right[name])
            unit.session.add(board)
            unit.board_changed(board)
            report.append(f"board {board.id}: {', '.join(wrong)} differed from the log; corrected")

    for board_id in ids:
        run(engine, settings, lambda unit, board_id=board_id: one(unit, board_id))
    return report
