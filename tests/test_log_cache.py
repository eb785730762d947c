"""A process keeps the committed log entries of the boards it read last
(``boardview.load_records``): a board's log is append-only, so a move, page or
mail reads only the entries after those it keeps. What it keeps is what was
committed: never an entry of a unit that may still roll back, and when what it
keeps does not fit the database (one replaced under a running process), the
whole log is read again."""

import pytest
from sqlalchemy import event, text

from pbm import boardview, driver_sql
from pbm.boardview import LOG_INSERT, entry_written, load_records
from pbm.db import reading, transaction, write, writing
from pbm.models import Board, utcnow

from .conftest import body, make_mail

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture
def board(players, outbox):
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    return players


def read_log(server) -> list[str]:
    with reading(server.engine) as session:
        return [record.text for record in load_records(session, session.get(Board, 101))]


def log_reads(server) -> list[int]:
    """The ``after`` of every read of board 101's log from now on: the entries it skipped."""
    reads = []

    @event.listens_for(server.engine, "before_cursor_execute")
    def seen(_connection, _cursor, statement, parameters, *_):
        if statement.startswith("SELECT move.number") and "move.number >" in statement:
            reads.append(parameters["after"] if isinstance(parameters, dict) else parameters[1])
    return reads


def another_process_logs(server, number: int, move: str) -> None:
    """Entry ``number`` of board 101 committed as another process writes it (this one reads nothing)."""
    with writing(server.engine) as connection:
        driver_sql.execute(connection, LOG_INSERT, {
            "board_id": 101, "number": number, "seat": 1, "kind": "move", "text": move, "comment": "",
            "created_at": utcnow()})
        connection.execute(text("UPDATE board SET move_count = :n WHERE id = 101"), {"n": number})


def test_a_move_reads_only_the_log_entries_after_those_kept(server, board):
    assert board.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert board.send(BOB, "greatkingdom move 101 bob bobpw E4").status == "applied"
    reads = log_reads(server)
    assert board.send(ALICE, "greatkingdom move 101 alice alicepw D5").status == "applied"
    # D4 was kept; E4, which Bob's move read before it was committed, and D5 were read
    assert reads == [1]
    assert read_log(server) == ["D4", "E4", "D5"]
    assert reads == [1, 2]  # D5 was the move's own, not yet committed when it read it
    assert read_log(server) == ["D4", "E4", "D5"]
    assert reads == [1, 2, 3]
    another_process_logs(server, 4, "E5")
    assert read_log(server) == ["D4", "E4", "D5", "E5"]


def test_an_entry_of_a_unit_that_rolled_back_is_never_kept(server, board):
    """A unit logs X9 as entry 2, reads its log (X9 in it), and rolls back; then
    another process commits E4 as entry 2. The log reads E4: what the unit read of
    its own entry was not kept as committed."""
    assert board.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert read_log(server) == ["D4"]
    with pytest.raises(RuntimeError):
        with transaction(server.engine) as session:
            row = session.get(Board, 101)
            write(session, LOG_INSERT, {"board_id": 101, "number": 2, "seat": 1, "kind": "move", "text": "X9",
                                        "comment": "", "created_at": utcnow()})
            entry_written(session, 101, 2)
            row.move_count = 2
            assert [record.text for record in load_records(session, row)] == ["D4", "X9"]
            raise RuntimeError("the unit fails")
    another_process_logs(server, 2, "E4")
    assert read_log(server) == ["D4", "E4"]


def test_a_log_that_does_not_fit_what_was_kept_is_read_whole(server, board):
    """The database replaced under the process by an older copy: board 101's log is
    one entry long again, and reads so."""
    for sender, move in ((ALICE, "D4"), (BOB, "E4"), (ALICE, "D5")):
        user = sender.split("@")[0]
        assert board.send(sender, f"greatkingdom move 101 {user} {user}pw {move}").status == "applied"
    assert read_log(server) == ["D4", "E4", "D5"]
    with writing(server.engine) as connection:
        connection.execute(text("DELETE FROM move WHERE board_id = 101 AND number > 1"))
        connection.execute(text("UPDATE board SET move_count = 1 WHERE id = 101"))
    assert read_log(server) == ["D4"]
    another_process_logs(server, 2, "F6")
    assert read_log(server) == ["D4", "F6"]


def test_the_logs_of_the_boards_read_last_are_kept(server, board, monkeypatch):
    monkeypatch.setattr(boardview, "LOG_CACHE_BOARDS", 1)
    assert board.send(ALICE, "greatkingdom challenge alice bob").status == "applied"  # board 102
    with reading(server.engine) as session:
        for number in (101, 102):
            load_records(session, session.get(Board, number))
        assert list(boardview._committed_logs(session.connection()).boards) == [102]


def test_two_processes_playing_one_board_list_every_move(server, board, outbox):
    """Alice's moves reach one process, Bob's another (each keeps its own logs): every
    board mail lists every move so far, in order."""
    from pbm.service import Service

    other = Service(server.settings)  # its own engine: what a second worker process keeps is its own
    try:
        moves = ["D4", "E4", "D5", "F4", "D6", "F6", "C3"]
        for number, move in enumerate(moves, start=1):
            sender, process = ((ALICE, server), (BOB, other))[(number - 1) % 2]
            user = sender.split("@")[0]
            result = process.handle_raw(make_mail(sender, f"greatkingdom move 101 {user} {user}pw {move}"))
            assert result.status == "applied", (move, result.error)
            listed = body(outbox.to(ALICE)[-1])
            for shown, (earlier, move_shown) in enumerate(zip(("alice", "bob") * 4, moves[:number]), start=1):
                assert f"{shown:>4}. {earlier:<12} {move_shown}" in listed, (number, listed)
    finally:
        other.engine.dispose()
