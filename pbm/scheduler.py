"""Periodic jobs: outbox delivery, reminders, expiry.

Each job is an idempotent sweep over deadlines kept in the database (rows
are claimed with conditional UPDATEs), so running it twice, late, or from
two processes at once does no harm and sends nothing twice.

The jobs are timed by the wall clock (APScheduler 3's interval triggers); a
clock stepped back re-times them (``Jobs``), so it never holds them back.

``pbm scheduler`` may run in several processes (on several machines) for
availability: on PostgreSQL exactly one of them leads and runs the jobs, the
others stand by and one takes over when the leader dies (``Leadership``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.engine import make_url

from .outbox import deliver_due
from .service import Service
from .service.events import conninfo_of

log = logging.getLogger(__name__)

OUTBOX_SECONDS = 30
DEADLINE_SECONDS = 300
COMPUTER_SECONDS = 120  # retries of computer moves that failed or were never started
# The key of the PostgreSQL advisory lock whose holder runs the jobs ("pbm_jobs" in ASCII).
LEADER_LOCK = 0x70626D5F6A6F6273
LEADER_POLL_SECONDS = 2.0   # how often a standby asks for the lock: how soon it takes over
LEADER_CHECK_SECONDS = 5.0  # how often the leader checks the connection that holds the lock
CLOCK_CHECK_SECONDS = 10.0  # how often the wall clock is compared with the monotonic one
CLOCK_STEP_SECONDS = 5.0  # a step back of more than this re-times the jobs


def sweep(server: Service, now: datetime | None = None) -> dict[str, int]:
    """Run every job once (``pbm sweep``); returns what each did."""
    return {
        "reminders": server.send_reminders(now),
        "expired": server.expire_boards(now),
        "computer": server.computer_moves(),
        "delivered": deliver_due(server.engine, server.settings, now),
    }


def _safe(job, *args):
    def run():
        try:
            done = job(*args)
        except Exception:  # keep the scheduler alive; the next run tries again
            log.exception("scheduled job %s failed", job.__name__)
            return
        if done:
            log.info("%s: %d", job.__name__, done)
    run.__name__ = job.__name__
    return run


class Jobs(BackgroundScheduler):
    """The periodic jobs, and a watch on the wall clock they are timed by: stepped back
    (NTP correcting a clock that ran fast, a virtual machine restored from a
    snapshot), it would hold every job back for as long as the step, with no mail
    retried and no reminder sent. Then every job runs at once, and its interval
    counts from there. (A step forward only makes them due sooner.)"""

    def start(self, *args, **kwargs) -> None:
        super().start(*args, **kwargs)
        self._stopping = threading.Event()
        threading.Thread(target=self._watch_clock, name="pbm-clock-watch", daemon=True).start()

    def shutdown(self, wait: bool = True) -> None:
        self._stopping.set()
        super().shutdown(wait)

    def _watch_clock(self) -> None:
        wall, steady = datetime.now(timezone.utc), time.monotonic()
        while not self._stopping.wait(CLOCK_CHECK_SECONDS):
            now_wall, now_steady = datetime.now(timezone.utc), time.monotonic()
            behind = (now_steady - steady) - (now_wall - wall).total_seconds()
            if behind > CLOCK_STEP_SECONDS:
                log.warning("the clock went back by about %d s; the periodic jobs run now", behind)
                for job in self.get_jobs():
                    job.modify(next_run_time=now_wall)
            wall, steady = now_wall, now_steady


def build(server: Service) -> Jobs:
    """The sweeps on intervals, in background threads (not started); each also runs
    once at start, to catch up on whatever fell due while nothing was running."""
    scheduler = Jobs(timezone="UTC")
    defaults = {"max_instances": 1, "coalesce": True, "next_run_time": datetime.now(timezone.utc)}
    scheduler.add_job(_safe(deliver_due, server.engine, server.settings), "interval",
                      seconds=OUTBOX_SECONDS, id="outbox", **defaults)
    scheduler.add_job(_safe(server.send_reminders), "interval", seconds=DEADLINE_SECONDS,
                      id="reminders", **defaults)
    scheduler.add_job(_safe(server.expire_boards), "interval", seconds=DEADLINE_SECONDS,
                      id="expiry", **defaults)
    scheduler.add_job(_safe(server.computer_moves), "interval", seconds=COMPUTER_SECONDS,
                      id="computer", **defaults)
    return scheduler


class Leadership:
    """Which of several ``pbm scheduler`` processes on one database runs the jobs.

    On PostgreSQL the leader holds a session advisory lock
    (``pg_try_advisory_lock(LEADER_LOCK)``) on a connection of its own, open for
    as long as it leads. The others ask for the lock every LEADER_POLL_SECONDS;
    when the leader's session ends (its process stopped or died: the kernel
    closes the socket and PostgreSQL releases the lock with the session) the
    next one to ask takes over. A leader whose connection fails stops leading
    and asks again like the others. On SQLite the server is one process (the
    database is a local file): the one scheduler leads at once.

    The lock saves work; it is not what keeps mails single. Every job claims its
    rows with conditional UPDATEs, so two processes that both run the jobs (an old
    leader cut off by the network, until PostgreSQL drops its session) send
    nothing twice."""

    def __init__(self, database_url: str):
        self.conninfo = conninfo_of(database_url) if make_url(database_url).get_backend_name() == "postgresql" else None
        self.connection = None

    def acquire(self, stopping: threading.Event) -> bool:
        """Block until this process leads (True) or ``stopping`` is set (False)."""
        if self.conninfo is None:
            return not stopping.is_set()
        import psycopg

        told = False
        while not stopping.is_set():
            try:
                if self.connection is None:
                    self.connection = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10,
                                                      application_name=f"pbm scheduler {os.getpid()}")
                if self.connection.execute("SELECT pg_try_advisory_lock(%s)", (LEADER_LOCK,)).fetchone()[0]:
                    log.info("pbm scheduler %d leads: it runs the periodic jobs", os.getpid())
                    return True
                if not told:
                    log.info("pbm scheduler %d stands by: another scheduler leads", os.getpid())
                    told = True
            except psycopg.Error as error:
                log.warning("pbm scheduler %d cannot reach the database to lead (%s); trying again",
                            os.getpid(), error.__class__.__name__)
                self.release()
            stopping.wait(LEADER_POLL_SECONDS)
        return False

    def hold(self, stopping: threading.Event) -> None:
        """Block while this process leads: until ``stopping`` is set, or the connection
        that holds the lock fails (then it no longer leads)."""
        if self.conninfo is None:
            stopping.wait()
            return
        import psycopg

        while not stopping.wait(LEADER_CHECK_SECONDS):
            try:
                self.connection.execute("SELECT 1")
            except psycopg.Error as error:
                log.error("pbm scheduler %d lost its connection to the database (%s): it no longer leads",
                          os.getpid(), error.__class__.__name__)
                self.release()
                return

    def release(self) -> None:
        """Close the lock's connection: the lock goes with it."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def run_leading(server: Service, stopping: threading.Event) -> None:
    """``pbm scheduler``: run the jobs whenever this process leads, until ``stopping``
    is set. Jobs start afresh at each start of leadership (catching up on what fell
    due meanwhile) and are stopped, waiting for a running one, when it ends."""
    leadership = Leadership(server.settings.database_url)
    try:
        while leadership.acquire(stopping):
            jobs = build(server)
            jobs.start()
            try:
                leadership.hold(stopping)
            finally:
                jobs.shutdown(wait=True)
    finally:
        leadership.release()
