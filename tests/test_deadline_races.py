"""Reminders and expiry racing the commands that change a board's deadlines, on
PostgreSQL, where a sweep's conditional UPDATE waits for the row another
transaction holds and then judges it: the outcome must be one a serial order
of the two would give."""

import threading
from datetime import timedelta

import pytest
from sqlalchemy import event, text
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, Vacation

from .conftest import make_mail, wait_until

ALICE, BOB = "alice@players.test", "bob@players.test"

# A race between row locks: PostgreSQL only (on SQLite the writers take turns on one
# lock, so no sweep is ever inside another's transaction).
pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


@pytest.fixture
def started(server, players, outbox):
    """Board 101 started by both players, alice to move."""
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert players.send(BOB, "greatkingdom move 101 bob bobpw F6").status == "applied"
    outbox.new()
    with reading(server.engine) as session:
        return session.get(Board, 101)


@pytest.fixture
def held_vacation(server):
    """The commit of the next transaction that starts a vacation waits, its
    statements all done, until the test sets the event this returns (``reached``
    is set once it waits)."""
    release, reached, starting = threading.Event(), threading.Event(), set()

    def before_execute(_connection, _cursor, statement, *_):
        if statement.lstrip().upper().startswith("INSERT INTO VACATION"):
            starting.add(threading.get_ident())

    def before_commit(_connection):
        if threading.get_ident() in starting:
            starting.discard(threading.get_ident())
            reached.set()
            assert release.wait(30), "the test never released the commit"

    event.listen(server.engine, "before_cursor_execute", before_execute)
    event.listen(server.engine, "commit", before_commit)
    release.reached = reached
    yield release
    release.set()
    event.remove(server.engine, "before_cursor_execute", before_execute)
    event.remove(server.engine, "commit", before_commit)


def waiting_for_a_lock(server) -> bool:
    """Whether some session of this database waits for a row lock."""
    with server.engine.connect() as connection:
        return connection.execute(text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'")).scalar() > 0


def in_thread(action) -> tuple[threading.Thread, list]:
    """``action()`` running in a thread of its own; its result lands in the list."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(action()))
    thread.start()
    return thread, results


@pytest.mark.parametrize("sweep", ["expire_boards", "send_reminders"])
def test_a_vacation_committed_while_a_sweep_waits_for_its_board_keeps_the_board(
        server, players, outbox, started, held_vacation, sweep):
    """alice goes on vacation just before the deadline; the sweep that falls due waits
    for her board's row, which the vacation's transaction holds. Once the vacation
    commits, the board is hers on vacation: no expiry, no reminder (the vacation's
    mail told her the board waits)."""
    due = (started.expire_due_at if sweep == "expire_boards" else started.nag_due_at) + timedelta(seconds=1)
    vacation, answered = in_thread(lambda: server.handle_raw(make_mail(ALICE, "vacation alice alicepw 5"),
                                                             now=due - timedelta(seconds=2)))
    assert held_vacation.reached.wait(30), "the vacation never came to its commit"
    swept, counted = in_thread(lambda: getattr(server, sweep)(now=due))
    wait_until(lambda: waiting_for_a_lock(server), "the sweep to wait for the board the vacation holds")
    held_vacation.set()
    vacation.join(30)
    swept.join(30)
    assert answered[0].status == "applied"
    with reading(server.engine) as session:
        board = session.get(Board, 101)
        assert session.exec(select(Vacation).where(Vacation.ended_at.is_(None))).all()
    assert board.status == "active" and board.nagged_at is None
    assert counted == [0]
    subjects = [mail["Subject"] for mail in outbox.new()]
    assert sorted(subjects) == ["pbm vacation begins", "pbm: alice is on vacation"]  # nothing else


def test_a_vacation_whose_boards_change_while_it_is_worked_out_still_starts(server, players, outbox, started):
    """Each time alice's vacation has read her running boards, bob chats on one of them
    (a write of the board) before the vacation writes them: the vacation must win its
    boards, not lose every try to a stale version and answer 'busy'."""
    chats, vacations = [], set()

    def after_execute(_connection, _cursor, statement, *_):
        words = " ".join(statement.split()).upper()
        if words.startswith("INSERT INTO VACATION"):
            vacations.add(threading.get_ident())
        elif threading.get_ident() in vacations and words.startswith("SELECT") and "FROM BOARD" in words \
                and "SEAT0_ID" in words.split("WHERE", 1)[-1] and len(chats) < 3:
            vacations.discard(threading.get_ident())  # once for each try of the unit
            chat, said = in_thread(lambda: server.handle_raw(make_mail(BOB, "greatkingdom chat 101 bob bobpw",
                                                                       f"hello {len(chats)}")))
            chats.append((chat, said))
            wait_until(lambda: said or waiting_for_a_lock(server), "the chat to commit, or to wait for the board")

    event.listen(server.engine, "after_cursor_execute", after_execute)
    try:
        result = server.handle_raw(make_mail(ALICE, "vacation alice alicepw 5"))
    finally:
        event.remove(server.engine, "after_cursor_execute", after_execute)
    for chat, _ in chats:
        chat.join(30)
    assert result.status == "applied", result.error
    assert chats and all(said[0].status == "applied" for _, said in chats)
    with reading(server.engine) as session:
        assert session.exec(select(Vacation).where(Vacation.ended_at.is_(None))).all()
