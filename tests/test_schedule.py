"""Reminders and expiry, by moving the clock (freezegun), never by sleeping."""

import threading
from datetime import datetime, timedelta

import apscheduler.executors.base as apscheduler_executors
import apscheduler.schedulers.base as apscheduler_base
from freezegun import freeze_time
from sqlmodel import select

from pbm.boardview import BoardView
from pbm.db import reading
from pbm import scheduler
from pbm.models import Board, MoveRecord, Player
from pbm.scheduler import sweep

from .conftest import body, wait_until

ALICE, BOB = "alice@players.test", "bob@players.test"
T0 = "2026-11-01 12:00:00"


def board(server):
    with reading(server.engine) as s:
        return s.get(Board, 101)


def test_reminder_once_then_expiry_forfeits_the_player_to_move(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
    with freeze_time("2026-11-02 12:00:00"):
        assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    with freeze_time("2026-11-03 12:00:00"):
        assert players.send(BOB, "greatkingdom move 101 bob bobpw F6").status == "applied"  # started
    outbox.new()
    with freeze_time("2026-11-07 11:59:00"):  # alice to move; 4 days not yet over
        assert sweep(server) == {"reminders": 0, "expired": 0, "computer": 0, "delivered": 0}
    with freeze_time("2026-11-07 12:01:00"):
        assert sweep(server)["reminders"] == 1
        assert sweep(server)["reminders"] == 0  # never twice
    mails = outbox.new()
    assert len(mails) == 1
    reminder = mails[0]
    assert reminder["To"].addresses[0].addr_spec == ALICE
    assert reminder["Subject"] == "Great Kingdom Board 101 reminder"
    assert reminder["Auto-Submitted"] == "auto-generated"
    assert "If no move arrives by 2026-11-10 12:00 UTC, the game ends and you forfeit." in \
        " ".join(body(reminder).split())
    with freeze_time("2026-11-10 12:00:01"):
        assert sweep(server) == {"reminders": 0, "expired": 1, "computer": 0, "delivered": 0}
        assert sweep(server)["expired"] == 0
    mails = outbox.new()
    assert sorted(m["To"].addresses[0].addr_spec for m in mails) == [ALICE, BOB]
    for m in mails:
        assert m["Auto-Submitted"] == "auto-generated"
        text = " ".join(body(m).split())
        assert "Board 101 has expired: no move arrived in 7 days." in text
        assert "Game won by bob. Blue ran out of time." in text
    b = board(server)
    assert b.status == "finished" and b.outcome["winner"] == 1
    with reading(server.engine) as s:
        records = s.exec(select(MoveRecord).order_by(MoveRecord.number)).all()
        assert [(r.kind, r.seat) for r in records] == [("move", 0), ("move", 1), ("forfeit", 0)]
        # The log is the truth: replaying it gives the stored result.
        players_ = (s.get(Player, b.seat0_id), s.get(Player, b.seat1_id))
        assert BoardView.at(b, players_, records, 3).outcome.to_json() == b.outcome


def test_a_sweep_that_comes_after_the_expiry_expires_without_a_reminder_for_a_past_deadline(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
        assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
        assert players.send(BOB, "greatkingdom move 101 bob bobpw F6").status == "applied"
    outbox.new()
    with freeze_time("2026-11-09 12:00:00"):  # the server was down past both times
        assert sweep(server) == {"reminders": 0, "expired": 1, "computer": 0, "delivered": 0}
    assert not [m for m in outbox.new() if m["Subject"] == "Great Kingdom Board 101 reminder"]


def test_a_move_resets_the_reminder_clock(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
    with freeze_time("2026-11-05 13:00:00"):
        assert sweep(server)["reminders"] == 1  # alice reminded
        assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    with freeze_time("2026-11-09 12:00:00"):  # 3 days 23 hours since alice's move
        assert sweep(server)["reminders"] == 0
    with freeze_time("2026-11-09 13:01:00"):
        assert sweep(server)["reminders"] == 1  # now bob
    assert outbox.to(BOB)[-1]["Subject"] == "Great Kingdom Board 101 reminder"


def test_an_unstarted_game_is_cancelled_and_both_are_told(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob --nagtime=1 --expiretime=2")
        players.send(ALICE, "greatkingdom move 101 alice alicepw D4")  # bob never answers
    outbox.new()
    with freeze_time("2026-11-02 12:00:01"):
        assert sweep(server)["reminders"] == 1
    with freeze_time("2026-11-03 12:00:01"):
        assert sweep(server)["expired"] == 1
    mails = outbox.new()
    assert [m["To"].addresses[0].addr_spec for m in mails][0] == BOB  # the reminder
    ends = mails[1:]
    assert sorted(m["To"].addresses[0].addr_spec for m in ends) == [ALICE, BOB]
    assert all("Game cancelled: the game expired before both players had moved." in
               " ".join(body(m).split()) for m in ends)
    assert not any("drawn" in body(m) for m in ends)
    assert board(server).outcome == {"winner": None, "reason": "the game expired before both players had moved",
                                     "score": None, "kind": "cancellation"}


def test_sweeps_from_two_processes_at_once_send_one_reminder(server, players, outbox, app):
    from pbm import create_app

    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
    outbox.new()
    settings = {k: v for k, v in vars(app.config["PBM_SETTINGS"]).items() if k != "configured"}
    other = create_app(settings).extensions["pbm"]  # a second "process"
    results = []
    barrier = threading.Barrier(4)

    def run(srv):
        barrier.wait()
        results.append(srv.send_reminders())

    with freeze_time("2026-11-06 00:00:00"):
        threads = [threading.Thread(target=run, args=(s,)) for s in (server, other, server, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    other.engine.dispose()
    assert sum(results) == 1
    assert len(outbox.new()) == 1


def test_finished_games_are_never_reminded(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
        players.send(ALICE, "greatkingdom resign 101 alice alicepw")
    with freeze_time("2026-12-30 00:00:00"):
        assert sweep(server) == {"reminders": 0, "expired": 0, "computer": 0, "delivered": 0}


def test_an_expiry_alone_shorter_than_the_usual_reminder_brings_the_reminder_to_half_of_it(players):
    assert players.send(ALICE, "greatkingdom challenge alice bob --expiretime=2").status == "applied"
    assert players.send(ALICE, "greatkingdom challenge alice bob --expiretime=6").status == "applied"
    with reading(players.server.engine) as session:
        timings = [(b.nag_days, b.expire_days) for b in session.exec(select(Board).order_by(Board.id)).all()]
    assert timings[-2:] == [(1.0, 2.0), (4.0, 6.0)]


def test_one_day_is_one_day_in_the_expiry_notice(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob --expiretime=1")
        assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
        assert players.send(BOB, "greatkingdom move 101 bob bobpw F6").status == "applied"
    outbox.new()
    with freeze_time("2026-11-02 12:00:01"):
        assert sweep(server)["expired"] == 1
    assert all("Board 101 has expired: no move arrived in 1 day." in " ".join(body(m).split()) for m in outbox.new())


class SteppedClock(datetime):
    """The wall clock as the machine reads it: the real time plus ``offset``."""

    offset = timedelta(0)

    @classmethod
    def now(cls, tz=None):
        return datetime.now(tz) + cls.offset


def test_a_clock_stepped_back_does_not_hold_the_jobs_back(server, monkeypatch):
    """NTP correcting a clock that ran fast, a virtual machine restored from a snapshot:
    the wall clock goes back an hour, and the jobs, timed by it, would wait an hour."""
    runs = []
    monkeypatch.setattr(scheduler, "deliver_due", lambda *_: runs.append(len(runs)) or 0)
    monkeypatch.setattr(scheduler, "OUTBOX_SECONDS", 1)
    monkeypatch.setattr(scheduler, "CLOCK_CHECK_SECONDS", 0.2)
    for module in (apscheduler_base, apscheduler_executors, scheduler):  # every reader of the clock
        monkeypatch.setattr(module, "datetime", SteppedClock)
    jobs = scheduler.build(server)
    jobs.start()
    try:
        wait_until(lambda: len(runs) >= 2, "the outbox sweep every second")
        SteppedClock.offset = -timedelta(hours=1)
        stepped = len(runs)
        wait_until(lambda: len(runs) >= stepped + 3, "the outbox sweep every second after the step")
    finally:
        SteppedClock.offset = timedelta(0)
        jobs.shutdown(wait=False)
