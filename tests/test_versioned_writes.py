"""A changed board is written by ``versioned_writes.write_changes``: one Core UPDATE with the
board's version check, as the ORM's flush writes it, without the flush's
machinery. It must leave the same row, the same version, the same clean session,
the same StaleDataError for a stale board, and the same rollback of a savepoint."""

import pytest
from datetime import timedelta
from sqlalchemy import text
from sqlalchemy.orm.attributes import flag_modified
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import select

from pbm.db import reading, transaction
from pbm.versioned_writes import write_changes
from pbm.models import Board, Player, utcnow

ALICE = "alice@players.test"


@pytest.fixture
def two_boards(players):
    for _ in range(2):
        assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    return 101, 102


def row(server, board_id: int) -> dict:
    with reading(server.engine) as session:
        board = session.get(Board, board_id)
        return board.model_dump(exclude={"id", "token0", "token1", "created_at"})


def change(board: Board, now) -> None:
    """What a move does to a board row, and what ``Unit.board_changed`` flags."""
    board.state = {**board.state, "played": ["D4"]}
    board.move_count += 1
    board.to_move = 1
    board.last_move_at = now
    board.nag_due_at = now + timedelta(days=3)
    board.expire_due_at = now + timedelta(days=7)
    board.outcome = {"winner": 0, "reason": "a test"}
    board.queued_move = "E5"
    flag_modified(board, "status")


def test_a_changed_board_is_written_as_the_orm_flush_writes_it(server, two_boards):
    by_orm, by_core = two_boards
    now = utcnow()
    with transaction(server.engine) as session:
        for board_id, flush in ((by_orm, session.flush), (by_core, lambda: write_changes(session))):
            board = session.get(Board, board_id)
            change(board, now)
            flush()
            assert board not in session.dirty  # nothing left for the commit's flush to write
    assert row(server, by_core) == row(server, by_orm)
    assert row(server, by_core)["move_count"] == 1


def test_a_board_changed_by_another_writer_meanwhile_is_stale_and_nothing_is_written(server, two_boards):
    board_id, _ = two_boards
    version = row(server, board_id)["version"]
    with pytest.raises(StaleDataError):
        with transaction(server.engine) as session:
            board = session.get(Board, board_id)
            session.connection().execute(text("UPDATE board SET version = version + 1 WHERE id = :id"),
                                         {"id": board_id})  # as a commit in between would
            board.move_count = 5
            write_changes(session)
    assert row(server, board_id)["move_count"] == 0 and row(server, board_id)["version"] == version


def test_a_board_left_as_it_was_is_not_written_and_keeps_its_version(server, two_boards):
    board_id, _ = two_boards
    version = row(server, board_id)["version"]
    with transaction(server.engine) as session:
        board = session.get(Board, board_id)
        board.move_count = board.move_count  # set, but no different
        write_changes(session)
    assert row(server, board_id)["version"] == version


def test_a_savepoint_rolled_back_over_the_write_takes_the_board_back(server, two_boards):
    board_id, _ = two_boards
    version = row(server, board_id)["version"]
    with transaction(server.engine) as session:
        board = session.get(Board, board_id)
        try:
            with session.begin_nested():
                board.move_count = 9
                write_changes(session)
                raise ValueError("a refused command")
        except ValueError:
            pass
        assert board.move_count == 0  # reloaded: the savepoint's write is gone
        board.to_move = 1
        write_changes(session)
    assert row(server, board_id)["move_count"] == 0 and row(server, board_id)["to_move"] == 1
    assert row(server, board_id)["version"] == version + 1


def test_other_pending_changes_go_to_the_orm_flush(server, two_boards):
    board_id, _ = two_boards
    version = row(server, board_id)["version"]
    with transaction(server.engine) as session:
        board = session.get(Board, board_id)
        board.move_count = 3
        alice = session.exec(select(Player).where(Player.userid == "alice")).one()
        alice.language = "de"  # a player has no version: the ORM writes both
        write_changes(session)
        assert not session.dirty
    assert row(server, board_id)["move_count"] == 3 and row(server, board_id)["version"] == version + 1
    with reading(server.engine) as session:
        assert session.exec(select(Player.language).where(Player.userid == "alice")).one() == "de"
