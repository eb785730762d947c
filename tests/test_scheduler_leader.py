"""Several ``pbm scheduler`` processes on PostgreSQL: one leads (it holds an
advisory lock on a connection of its own) and runs the jobs, the others stand
by; when the leader dies one of them takes over, and a leader whose session
ends stops and asks again. And the outbox sweep of one process skips the
mails another is claiming instead of waiting for them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from sqlalchemy import text

from pbm.config import load_settings
from pbm.db import make_engine
from pbm.models import OutboxMail, utcnow
from pbm.outbox import deliver_due
from pbm.scheduler import LEADER_LOCK
from pbm.service import Service

from .conftest import Outbox, make_mail, wait_until

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture
def postgres(database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite runs one scheduler process; leadership is PostgreSQL's")
    return database_url


class Scheduler:
    """A ``pbm scheduler`` process whose output (log included) is read as it comes."""

    def __init__(self, database_url: str, maildir: str):
        env = {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_MAILDIR": maildir,
               "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_LOG_LEVEL": "INFO"}
        self.process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "scheduler"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    def said(self, words: str) -> bool:
        return any(words in line for line in self.lines)

    def leads(self) -> bool:
        return self.said(f"pbm scheduler {self.process.pid} leads")

    def stands_by(self) -> bool:
        return self.said(f"pbm scheduler {self.process.pid} stands by")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        code = self.process.wait(timeout=60)
        self.reader.join(10)
        return code


def lock_holders(engine) -> list[str]:
    """The application names of the sessions holding the scheduler's advisory lock."""
    with engine.connect() as conn:
        return list(conn.execute(text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :high AND l.objid = :low"),
            {"high": LEADER_LOCK >> 32, "low": LEADER_LOCK & 0xFFFFFFFF}).scalars())


def reminders(outbox: Outbox, board: int) -> list[str]:
    return [str(m["To"]) for m in outbox.all() if m["Subject"] == f"Great Kingdom Board {board} reminder"]


def test_one_scheduler_leads_and_a_standby_takes_over_when_it_dies(postgres, tmp_path):
    maildir = str(tmp_path / "maildir")
    service = Service(load_settings({"database_url": postgres, "instance_path": str(tmp_path / "setup"),
                                     "maildir": maildir, "server_address": "pbm@pbm.test"}))
    outbox = Outbox(maildir)
    for sender, command in ((ALICE, "signup alice alicepw"), (BOB, "signup bob bobpw"),
                            (ALICE, "greatkingdom challenge alice bob"),
                            (ALICE, "greatkingdom challenge alice bob")):
        assert service.handle_raw(make_mail(sender, command)).status == "applied"

    def fall_due(board: int) -> None:  # the board has waited for alice for days
        with service.engine.begin() as conn:
            conn.execute(text("UPDATE board SET nag_due_at = :past WHERE id = :board"),
                         {"past": utcnow() - timedelta(days=1), "board": board})

    fall_due(101)
    first = Scheduler(postgres, maildir)
    second = None
    try:
        wait_until(first.leads, "the first scheduler to lead")
        wait_until(lambda: reminders(outbox, 101), "the leader to send board 101's reminder")
        fall_due(102)
        second = Scheduler(postgres, maildir)
        wait_until(second.stands_by, "the second scheduler to stand by")
        assert lock_holders(service.engine) == [f"pbm scheduler {first.process.pid}"]
        assert not second.leads() and not reminders(outbox, 102)  # it runs no job

        first.process.send_signal(signal.SIGKILL)  # the leader dies without a word
        wait_until(second.leads, "the second scheduler to take over")
        wait_until(lambda: reminders(outbox, 102), "the new leader to send board 102's reminder")
        assert lock_holders(service.engine) == [f"pbm scheduler {second.process.pid}"]

        with service.engine.begin() as conn:  # the leader's session ends under it (a database restart)
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = :name"), {"name": f"pbm scheduler {second.process.pid}"})
        wait_until(lambda: second.said("no longer leads"), "the leader to notice it lost the lock")
        wait_until(lambda: lock_holders(service.engine) == [f"pbm scheduler {second.process.pid}"],
                   "the only scheduler left to lead again")
        assert second.stop() == 0  # SIGTERM: it stops quietly and lets the lock go
        assert lock_holders(service.engine) == []
    finally:
        first.stop()
        if second:
            second.stop()
        service.engine.dispose()
    assert reminders(outbox, 101) == [ALICE] and reminders(outbox, 102) == [ALICE]
    assert first.said("send_reminders: 1") and second.said("send_reminders: 1")


def test_a_sweep_skips_the_mails_another_process_is_claiming(postgres, tmp_path):
    settings = load_settings({"database_url": postgres, "instance_path": str(tmp_path),
                              "maildir": str(tmp_path / "maildir"), "server_address": "pbm@pbm.test"})
    engine = make_engine(postgres)
    now = utcnow()
    with engine.begin() as conn:  # three mails whose first attempt failed, due again now
        for n in range(3):
            conn.execute(OutboxMail.__table__.insert().values(
                message_id=f"<m{n}@pbm.test>", recipient=f"p{n}@players.test", subject="s",
                raw=make_mail("pbm@pbm.test", "s", to=f"p{n}@players.test"), status="pending",
                attempts=1, next_attempt_at=now - timedelta(minutes=1), created_at=now))
    other = engine.connect()  # another sweep, in the middle of claiming the first mail
    other.begin()
    other.execute(text("SELECT id FROM outbox WHERE message_id = '<m0@pbm.test>' FOR UPDATE"))
    swept: list[int] = []
    sweep = threading.Thread(target=lambda: swept.append(deliver_due(engine, settings, now)))
    try:
        sweep.start()
        sweep.join(60)  # a sweep that waited for the locked row would still be waiting
        assert swept == [2]
    finally:
        other.rollback()
        other.close()
        sweep.join(60)
    with engine.connect() as conn:
        status = dict(conn.execute(text("SELECT message_id, status FROM outbox")).all())
    assert status == {"<m0@pbm.test>": "pending", "<m1@pbm.test>": "sent", "<m2@pbm.test>": "sent"}
    assert deliver_due(engine, settings, now) == 1  # once free, the next sweep takes it
    engine.dispose()
