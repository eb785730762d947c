"""Playing the computer by mail: `<game> challenge alice computer`. The computer
thinks after the commit, outside any transaction, and moves through the same unit
of work as a person; a failing engine leaves the game waiting, never half-applied."""

import random
import stat
import threading
import time
from types import SimpleNamespace

import pytest
from sqlmodel import select

from pbm import create_app
from pbm.db import reading
from pbm.games import REGISTRY, get_game
from pbm.models import Board, MoveRecord
from pbm.service import computer

from .conftest import Mailer, body

ALICE = "alice@players.test"
OPTIONS = {"go": "-size=9", "greatkingdom": "-size=5", "twodragons": "-size=9", "dragons": "-num_tiles=10",
           "twotigers": ""}


@pytest.fixture
def fast(overrides, outbox):
    """A server whose computer thinks briefly; alice has an account."""
    app = create_app({**overrides, "computer_seconds": 0.05})
    server = app.extensions["pbm"]
    mailer = Mailer(server, outbox)
    assert mailer.send(ALICE, "signup alice alicepw").status == "applied"
    yield server, mailer
    assert computer.wait_idle(60)
    server.engine.dispose()


def board(server, board_id=101) -> Board:
    with reading(server.engine) as session:
        return session.get(Board, board_id)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_whole_game_against_the_computer_by_mail(fast, outbox, name):
    server, mailer = fast
    if name == "go":
        from pbm.players import available
        if not available(server.settings.gnugo_path):
            pytest.skip("GNU Go is not installed (Debian package gnugo; .ci/run installs it)")
    assert mailer.send(ALICE, f"{name} challenge alice computer {OPTIONS[name]}").status == "applied"
    game, rng = get_game(name), random.Random(name)
    for _ in range(400):
        assert computer.wait_idle(60), "the computer is still thinking after a minute"
        current = board(server)
        if current.status != "active":
            break
        state = game.from_json(current.state)
        assert 0 in game.actors(state), "the board waits for the computer, which has moved"
        moves = list(game.legal_moves(state))
        if name == "go" and state.phase != "play":
            move = "done"
        else:
            move = game.format_move(rng.choice(moves))
        result = mailer.send(ALICE, f"{name} move 101 alice alicepw {move}")
        assert result.status == "applied", result.error
    assert board(server).status == "finished"
    with reading(server.engine) as session:
        seats = set(session.exec(select(MoveRecord.seat).where(MoveRecord.kind == "move")).all())
    assert seats == {0, 1}  # both alice and the computer moved
    assert not [m for m in outbox.all() if "computer" in str(m["To"])]  # the computer gets no mail
    assert server.rebuild() == []


def test_a_failing_engine_leaves_the_game_waiting_and_the_human_told(overrides, outbox, tmp_path):
    crashing = tmp_path / "gnugo"
    crashing.write_text("#!/bin/sh\nexit 3\n")
    crashing.chmod(crashing.stat().st_mode | stat.S_IEXEC)
    app = create_app({**overrides, "gnugo_path": str(crashing)})
    server = app.extensions["pbm"]
    mailer = Mailer(server, outbox)
    mailer.send(ALICE, "signup alice alicepw")
    assert mailer.send(ALICE, "go challenge alice computer").status == "applied"
    assert mailer.send(ALICE, "go move 101 alice alicepw D4").status == "applied"
    assert computer.wait_idle(60)
    assert board(server).move_count == 1 and board(server).status == "active"
    told = outbox.to(ALICE)[-1]
    assert told["Subject"] == "Go Board 101 waiting for the computer"
    assert "The game waits; the server tries again in a few minutes." in " ".join(body(told).split())
    server.engine.dispose()


def test_an_engine_failing_at_every_retry_tells_the_human_once(overrides, outbox, tmp_path):
    # the scheduler retries every 2 minutes; a mail each time would be 30 an hour until expiry
    crashing = tmp_path / "gnugo"
    crashing.write_text("#!/bin/sh\nexit 3\n")
    crashing.chmod(crashing.stat().st_mode | stat.S_IEXEC)
    server = create_app({**overrides, "gnugo_path": str(crashing)}).extensions["pbm"]
    mailer = Mailer(server, outbox)
    mailer.send(ALICE, "signup alice alicepw")
    assert mailer.send(ALICE, "go challenge alice computer").status == "applied"
    assert mailer.send(ALICE, "go move 101 alice alicepw D4").status == "applied"
    assert computer.wait_idle(60)
    assert server.computer_moves() == 0 and server.computer_moves() == 0  # two retries, failing too
    waiting = [m for m in outbox.to(ALICE) if m["Subject"] == "Go Board 101 waiting for the computer"]
    assert len(waiting) == 1
    assert board(server).move_count == 1 and board(server).status == "active"
    server.engine.dispose()


def test_without_gnu_go_the_computer_declines_go_with_a_sentence(overrides, outbox, tmp_path):
    app = create_app({**overrides, "gnugo_path": str(tmp_path / "no-gnugo")})
    mailer = Mailer(app.extensions["pbm"], outbox)
    mailer.send(ALICE, "signup alice alicepw")
    refused = mailer.send(ALICE, "go challenge alice computer")
    assert refused.status == "rejected" and "GNU Go is not installed on this server" in refused.error
    app.extensions["pbm"].engine.dispose()


def test_a_process_that_looked_for_the_computer_in_vain_sees_one_made_since_by_another(fast, outbox):
    # another worker made the computer (its player id is newer than every player this
    # process saw when it looked in vain, a moment ago): the move is still answered
    server, mailer = fast
    assert mailer.send(ALICE, "greatkingdom challenge alice computer -size=5").status == "applied"
    url = str(server.engine.url)
    made = computer._computer_ids.pop(url)
    computer._looked_up[url] = (time.monotonic(), made - 1)
    try:
        assert mailer.send(ALICE, "greatkingdom move 101 alice alicepw B2").status == "applied"
        assert computer.wait_idle(60)
        assert board(server).move_count == 2  # the computer answered at once, not at the next sweep
    finally:
        computer._looked_up.pop(url, None)


def test_the_computer_agrees_to_a_new_round_at_once(fast, outbox):
    server, mailer = fast
    assert mailer.send(ALICE, "greatkingdom challenge alice computer -size=5").status == "applied"
    assert mailer.send(ALICE, "greatkingdom resign 101 alice alicepw").status == "applied"
    assert mailer.send(ALICE, "greatkingdom move 101 alice alicepw newround").status == "applied"
    assert board(server).next_board_id == 102
    assert computer.wait_idle(60)
    fresh = board(server, 102)
    assert fresh.status == "active" and fresh.options == board(server).options


class _ReleaseHook:
    """``computer._pending_lock`` with a hook run once right after a computer job
    releases it: the instant between a job deciding to stop and its end."""

    def __init__(self, hook):
        self.lock, self.hook = threading.Lock(), hook

    def __enter__(self):
        self.lock.acquire()

    def __exit__(self, *exc):
        self.lock.release()
        hook = self.hook
        if hook is not None and threading.current_thread().name.startswith("pbm-computer"):
            self.hook = None
            hook()


def test_a_commit_as_the_computers_job_ends_starts_another_look(fast, monkeypatch):
    server, mailer = fast
    assert mailer.send(ALICE, "greatkingdom challenge alice computer -size=5").status == "applied"
    assert computer.wait_idle(60)
    with reading(server.engine) as session:
        seated = {101: (session.get(Board, 101).seat0_id, session.get(Board, 101).seat1_id)}
    commit = SimpleNamespace(seated=seated, settings=server.settings)  # what ``schedule`` reads of a unit
    looks = []

    def think_and_move(engine, settings, board_id):
        looks.append(board_id)
        return False  # nothing to play: the job decides to stop

    monkeypatch.setattr(computer, "think_and_move", think_and_move)
    monkeypatch.setattr(computer, "_pending_lock", _ReleaseHook(lambda: computer.schedule(server.engine, commit)))
    computer.schedule(server.engine, commit)
    assert computer.wait_idle(60)
    assert computer.wait_idle(60)  # the job the commit started as the first one ended
    assert looks == [101, 101]


def test_a_late_sweep_lets_the_computer_move_before_it_would_forfeit(fast, outbox, monkeypatch):
    """The server went down right after alice's move, before the computer thought, and
    came back after the expiry: the sweep lets the computer move (the game goes on, the
    deadline is alice's again); it does not forfeit the computer, which never had its turn."""
    from datetime import timedelta

    from freezegun import freeze_time

    from pbm.scheduler import sweep

    server, mailer = fast
    with freeze_time("2026-11-01 12:00:00", tick=True):
        assert mailer.send(ALICE, "greatkingdom challenge alice computer -size=5").status == "applied"
        with monkeypatch.context() as patched:  # the process ends before the computer thinks
            patched.setattr(computer, "think_and_move", lambda *_: False)
            assert mailer.send(ALICE, "greatkingdom move 101 alice alicepw B2").status == "applied"
            assert computer.wait_idle(60)
    assert board(server).move_count == 1
    with freeze_time(board(server).expire_due_at + timedelta(days=3), tick=True):
        done = sweep(server)
        assert computer.wait_idle(60)
    assert done["expired"] == 0
    after = board(server)
    assert after.status == "active" and after.move_count == 2 and after.to_move == 0
