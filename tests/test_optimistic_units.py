"""On SQLite a mail's unit of work is worked out before it takes the write lock
and written at its end (``db.transaction(optimistic=True)``): while one move is
written, the next are worked out. A board that changed meanwhile fails its
version check, and the mail is answered again under the lock, against the new
position; nothing is written twice. (PostgreSQL locks the board's row instead;
there a mail's commands take no savepoint unless one of them is refused.)"""

import threading

import pytest
from sqlalchemy import event
from sqlmodel import select

from pbm.db import reading, transaction
from pbm.models import Board, MoveRecord
from pbm.service import boards, letters

from .conftest import body, make_mail, wait_until

ALICE, BOB = "alice@players.test", "bob@players.test"
sqlite_only = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture
def board(players, outbox):
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    outbox.new()
    return players


def logged(server) -> list[str]:
    with reading(server.engine) as s:
        return [m.text for m in s.exec(select(MoveRecord).order_by(MoveRecord.number)).all()]


@sqlite_only
def test_a_move_is_worked_out_while_another_writer_holds_the_lock(server, outbox, board, monkeypatch):
    composing = threading.Event()
    real_render = letters.render

    def render(*args, **kwargs):
        composing.set()
        return real_render(*args, **kwargs)

    monkeypatch.setattr(letters, "render", render)
    results = []
    mover = threading.Thread(target=lambda: results.append(
        server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4"))))
    with transaction(server.engine):  # another writer holds the write lock
        mover.start()
        assert composing.wait(30), "the move's board mails were not composed while another writer held the lock"
        assert results == []  # written only once the lock is free
    mover.join(30)
    assert [r.status for r in results] == ["applied"]
    assert logged(server) == ["D4"]
    assert sorted(m["To"].addresses[0].addr_spec for m in outbox.new()) == [ALICE, BOB]


@sqlite_only
def test_a_board_changed_while_a_move_was_worked_out_is_answered_against_the_new_position(
        server, outbox, board, monkeypatch):
    """Alice's D4 by mail is being worked out when her D5 from her private page lands:
    the mail is answered again, under the lock, and refused (it is Bob's turn now)."""
    with reading(server.engine) as s:
        alice_token = s.get(Board, 101).token0
    real_render = letters.render
    played, landing = [], threading.Event()

    def render(*args, **kwargs):
        if not landing.is_set():  # the mail's first board mail: her page's move lands now
            landing.set()
            page = threading.Thread(target=lambda: played.append(server.play_by_token(alice_token, "D5")))
            page.start()
            page.join(30)  # at once, unless the mail's unit held the write lock while it was worked out
        return real_render(*args, **kwargs)

    monkeypatch.setattr(letters, "render", render)
    result = server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4"))
    assert [r.status for r in played] == ["applied"]
    assert result.status == "rejected" and "It is not your turn on board 101" in result.error
    assert logged(server) == ["D5"]
    with reading(server.engine) as s:
        assert s.get(Board, 101).move_count == 1
    mails = outbox.new()
    board_mails = [m for m in mails if "D5" in body(m) and "not your turn" not in body(m)]
    assert sorted(m["To"].addresses[0].addr_spec for m in board_mails) == [ALICE, BOB]
    refusals = [m for m in mails if "It is not your turn on board 101" in body(m)]
    assert [m["To"].addresses[0].addr_spec for m in refusals] == [ALICE]
    assert len(mails) == 3  # D4's board mails, composed before the conflict, were never sent


@sqlite_only
def test_a_page_move_whose_reads_straddle_another_moves_commit_is_refused_with_a_sentence(
        server, outbox, board, monkeypatch):
    """Alice's page reads her board (her turn), then her D4 by mail commits, then the
    page's unit reads the move log: outside a transaction the two reads disagree (the
    rules saw Blue move twice and raised). The page's move is decided again under the
    lock: refused in a sentence, never a server failure."""
    with reading(server.engine) as s:
        alice_token = s.get(Board, 101).token0
    real_by_token = boards.by_token

    def by_token_then_her_mail_lands(session, token, **kwargs):
        found = real_by_token(session, token, **kwargs)
        if logged(server) == []:
            assert server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4")).status == "applied"
        return found

    monkeypatch.setattr(boards, "by_token", by_token_then_her_mail_lands)
    result = server.play_by_token(alice_token, "D5")
    assert result.status == "rejected" and "It is not your turn on board 101" in result.error
    assert logged(server) == ["D4"]


def test_a_mail_takes_savepoints_only_for_a_refused_line(server, outbox, board):
    """A command runs on a savepoint only so that a refusal rolls back that command
    alone: a mail none of whose lines is refused takes none (on PostgreSQL two
    round trips a command; on SQLite there is no transaction yet while it is worked
    out); a refused line makes the mail run again with them, and the good lines are
    done once."""
    savepoints = []

    @event.listens_for(server.engine, "before_cursor_execute")
    def seen(_connection, _cursor, statement, *_):
        if statement.lstrip().upper().startswith("SAVEPOINT"):
            savepoints.append(statement)

    assert board.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert savepoints == []
    outbox.new()
    result = board.send(BOB, "multiple", "greatkingdom move 101 bob bobpw E4\nfrobnicate\n")
    assert result.status == "rejected"
    assert savepoints != []
    assert logged(server) == ["D4", "E4"]
    assert sorted(m["Subject"] for m in outbox.new()) == [
        "Great Kingdom Board 101 alice", "Great Kingdom Board 101 alice", "pbm error"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_commands_changing_one_account_take_turns(server, players, outbox):
    """PostgreSQL: two vacation mails of one player at once must not both pass "one
    vacation at a time" (each read none before either wrote): the command locks the
    account's row first. Here the row is held while both mails arrive; once free,
    one is applied and the other refused."""
    from sqlalchemy import text

    from pbm.models import Vacation

    results = []
    with server.engine.connect() as holder:
        holder.execute(text("SELECT id FROM player WHERE userid = 'alice' FOR UPDATE"))
        senders = [threading.Thread(target=lambda: results.append(players.send(ALICE, "vacation alice alicepw 5")))
                   for _ in range(2)]
        for sender in senders:
            sender.start()
        with reading(server.engine) as s:  # neither got past the lock while it is held
            assert s.exec(select(Vacation)).all() == [] and results == []
        holder.rollback()
    for sender in senders:
        sender.join(30)
    assert sorted(r.status for r in results) == ["applied", "rejected"]
    with reading(server.engine) as s:
        assert len(s.exec(select(Vacation)).all()) == 1


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_row_made_by_another_mail_meanwhile_is_answered_as_after_it(server, players, outbox):
    """PostgreSQL: zed's signup is written, not yet committed, when another signup of
    zed reads the userid free; its INSERT waits, then fails on the unique index. The
    mail runs once more and is refused as taken, not answered "try again later"."""
    from sqlalchemy import text

    results = []
    with server.engine.connect() as holder:
        holder.execute(text("INSERT INTO player (userid, email, invited, language, created_at) "
                            "VALUES ('zed', 'zed@players.test', false, 'en', now())"))
        other = threading.Thread(target=lambda: results.append(players.send("eve@players.test", "signup zed pw")))
        other.start()
        def blocked():  # the other signup waits on the uncommitted userid
            with server.engine.connect() as look:
                return look.execute(text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                         "AND query LIKE 'INSERT INTO player%'")).scalar()
        wait_until(blocked, "the second signup to wait on the first one's userid")
        holder.commit()
    other.join(30)
    assert [r.status for r in results] == ["rejected"]
    assert "The userid zed is taken" in results[0].error
