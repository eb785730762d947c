"""This process's delivery thread: the mails a commit put in the outbox
(``pbm.outbox``) are handed to it and sent right after the commit, everything
waiting at once as one batch. With a local transport (``maildir``, ``console``)
the answer waits for its own mails; with ``smtp`` it does not. A local batch's
marks "sent" ride in the transaction of this process's next unit of work
(``carried_marks``: group commit, no write transaction of their own), or are
written by the thread when no commit comes within ``MARK_WAIT_SECONDS``.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from contextlib import contextmanager
from datetime import datetime
from typing import Iterator

from sqlalchemy.engine import Engine
from sqlmodel import Session

from . import outbox  # looked up as outbox.<name> at each use, so a test may stand in for one
from .config import Settings
from .models import utcnow
from .outbox import Marks, Outgoing

log = logging.getLogger(__name__)

# How long a process that is exiting (``pbm ingest``, ``pbm sweep``) waits for its
# background deliveries; what is still unsent then goes with the sweep after the lease.
EXIT_WAIT_SECONDS = 20.0
LOCAL_BACKENDS = ("maildir", "console")  # their mail is delivered before the answer returns
LOCAL_WAIT_SECONDS = 30.0  # longest an answer waits for a local delivery (a stuck disk: the sweep retries)
MARK_WAIT_SECONDS = 0.05  # longest a delivered local batch waits for a commit to carry its mark "sent"


class _Courier:
    """This process's delivery thread: it sends the mails that commits in this process
    hand it, everything waiting at once as one batch (one transport), so the request
    that committed them answers without waiting for the delivery, and deliveries of
    moves committed together share their work. A local batch's marks "sent" wait for
    the next commit in this process to write them in its transaction (``carried_marks``);
    when none comes within ``MARK_WAIT_SECONDS``, or someone waits for the deliveries,
    the thread writes them in one transaction of their own. Started at the first
    mail, anew in a forked child."""

    def __init__(self):
        self._changed = threading.Condition()
        self._waiting: list[tuple[Engine, Settings, list[Outgoing]]] = []
        self._sending = False
        self._handed = 0  # tickets given out, one per hand-over, in order
        self._done = 0  # every hand-over up to this ticket has been sent (or its failure recorded)
        # delivered, not marked yet: engine -> (Message-ID and claim, first delivered at, first kept at)
        self._marks: dict[Engine, tuple[Marks, datetime, float]] = {}
        self._waiters = 0  # callers of ``wait``: the marks are written at once for them
        self._thread: threading.Thread | None = None

    def add_marks(self, engine: Engine, marks: Marks, now: datetime) -> None:
        """Keep the marks "sent" of mails delivered at ``now`` for a commit to carry."""
        if marks:
            with self._changed:
                kept, since, first = self._marks.get(engine, ([], now, time.monotonic()))
                self._marks[engine] = (kept + marks, min(since, now), first)
                self._start()
                self._changed.notify_all()

    def take_marks(self, engine: Engine) -> tuple[Marks, datetime | None]:
        """The marks kept for ``engine`` and when the first of them was delivered, no
        longer kept (``give_back`` returns them when their transaction fails)."""
        with self._changed:
            kept, since, _ = self._marks.pop(engine, ([], None, 0.0))
            return kept, since

    def give_back(self, engine: Engine, marks: Marks, since: datetime | None) -> None:
        if marks:
            self.add_marks(engine, marks, since)

    def hand(self, engine: Engine, settings: Settings, rows: list[Outgoing]) -> int:
        """Queue ``rows`` for the thread; returns the ticket ``wait_for`` takes."""
        with self._changed:
            self._handed += 1
            self._waiting.append((engine, settings, rows))
            self._start()
            self._changed.notify_all()
            return self._handed

    def _due_marks(self) -> dict[Engine, tuple[Marks, datetime, float]]:
        """The kept marks to write now (the caller holds ``_changed``): every one when
        someone waits for the deliveries, else those kept over ``MARK_WAIT_SECONDS``."""
        due = time.monotonic() - MARK_WAIT_SECONDS
        return {engine: kept for engine, kept in self._marks.items() if self._waiters or kept[2] <= due}

    def _start(self) -> None:
        """Start the thread if it does not run yet (the caller holds ``_changed``)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pbm-outbox", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._changed:
                # Marks no commit came to carry in time, or that someone waits for, are
                # written here; under load each commit carries those kept before it.
                while not (self._waiting or self._due_marks()):
                    self._changed.wait(MARK_WAIT_SECONDS if self._marks else None)
                waiting, self._waiting = self._waiting, []
                last = self._handed  # the hand-overs taken are every one up to here
                marks = self._due_marks()
                for engine in marks:
                    del self._marks[engine]
                self._sending = True
            try:
                for engine, (kept, since, _) in marks.items():
                    _mark_alone(engine, kept, since)
                batches: dict[tuple[Engine, Settings], list[Outgoing]] = {}
                for engine, settings, rows in waiting:
                    batches.setdefault((engine, settings), []).extend(rows)
                for (engine, settings), rows in batches.items():
                    _send_committed(engine, settings, rows)
            finally:
                with self._changed:
                    self._sending = False
                    self._done = last
                    self._changed.notify_all()

    def wait_for(self, ticket: int, timeout: float) -> bool:
        """Wait until the hand-over ``ticket`` has been sent, at most ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done >= ticket, timeout)

    def wait(self, timeout: float) -> bool:
        """Wait until nothing handed over is waiting or being sent, and every delivered
        mail is marked sent, at most ``timeout`` seconds; returns whether that happened."""
        with self._changed:
            self._waiters += 1
            self._changed.notify_all()
            try:
                return self._changed.wait_for(lambda: not self._waiting and not self._sending and not self._marks,
                                              timeout)
            finally:
                self._waiters -= 1


_courier = _Courier()
# A child forked while the thread ran would inherit its state but not the thread.
os.register_at_fork(after_in_child=lambda: globals().update(_courier=_Courier()))


def deliver_after_commit(engine: Engine, settings: Settings, rows: list[Outgoing]) -> None:
    """Hand the mails a transaction just committed (``queue`` claimed them) to this
    process's delivery thread. With a local transport (``maildir``, ``console``) wait
    until they are delivered, as the interface promises (the mail is there by the time
    the answer returns); the thread sends what several commits handed it as one batch,
    so concurrent moves share the delivery's work. With ``smtp`` return at once: a slow
    or absent relay never delays the answer, and the outbox rows are the promise. A
    process that exits waits up to ``EXIT_WAIT_SECONDS`` for them (``wait_for_deliveries``)."""
    if rows:
        ticket = _courier.hand(engine, settings, rows)
        if settings.mail_backend in LOCAL_BACKENDS and not _courier.wait_for(ticket, LOCAL_WAIT_SECONDS):
            log.warning("a local delivery took over %s s; the answer goes first, the mails follow",
                        LOCAL_WAIT_SECONDS)


def _send_committed(engine: Engine, settings: Settings, rows: list[Outgoing]) -> None:
    try:
        outbox.send_claimed(engine, settings, rows, utcnow(), keep_marks=_courier.add_marks)
    except Exception:  # the database failed: the lease runs out and the sweep sends them
        log.exception("delivering outbox mails %s failed", [row.message_id for row in rows])


def _mark_alone(engine: Engine, marks: Marks, since: datetime) -> None:
    """Write delivered mails' marks "sent" in a transaction of their own (no commit
    came to carry them). If it fails, the rows stay claimed until the lease ends and
    the sweep sends them again, as after a crash."""
    try:
        with outbox.marking(engine) as connection:
            outbox.write_marks(connection, marks, since)
    except Exception:
        log.exception("marking outbox mails %s sent failed", [message_id for message_id, _ in marks])


class _Carried:
    """The marks "sent" one write transaction carries (``carried_marks``)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.marks: Marks = []
        self.since: datetime | None = None

    def write(self, session: Session) -> None:
        """Write, in the session's transaction (its write lock held), the marks this
        process's delivered mails wait for."""
        self.marks, self.since = _courier.take_marks(self.engine)
        outbox.write_marks(session.connection(), self.marks, self.since)


@contextmanager
def carried_marks(engine: Engine) -> Iterator[_Carried]:
    """Around a write transaction on ``engine``, its commit included: the marks it
    writes (``_Carried.write``) so that they need no transaction of their own; if
    anything fails, they wait for the next transaction (or the delivery thread)."""
    carried = _Carried(engine)
    try:
        yield carried
    except BaseException:
        _courier.give_back(engine, carried.marks, carried.since)
        raise


def wait_for_deliveries(timeout: float) -> bool:
    """Wait until the mails this process committed so far have been delivered and
    marked sent (or their attempt has failed and been recorded), at most ``timeout``
    seconds; returns whether they all were."""
    return _courier.wait(timeout)


@atexit.register
def _wait_at_exit() -> None:
    # Daemon threads die with the process: without this, `pbm ingest` would exit
    # before its mails went and leave them to the sweep after the lease.
    if not wait_for_deliveries(EXIT_WAIT_SECONDS):
        log.warning("exiting with mail deliveries still running; the sweep retries them "
                    "after the %s lease", outbox.CLAIM_LEASE)
