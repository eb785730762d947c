"""This process's delivery thread. The mails a commit put in the outbox
(``pbm.outbox``) are delivered right after the commit: with a local transport
(``maildir``, ``console``) by the committing thread itself, so each mail is
there to read when the answer returns, and the thread then settles them on disk,
the mails of every answer since its last batch at once (one ``syncfs``), off
the answers' path; with ``smtp`` the thread sends them, everything waiting at
once as one batch over one connection, and the answer does not wait. A local
batch's marks "sent" ride in the transaction of this process's next unit of work
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
from dataclasses import dataclass
from datetime import datetime
from typing import Iterator

from sqlalchemy.engine import Engine
from sqlmodel import Session

from . import outbox  # looked up as outbox.<name> at each use, so a test may stand in for one
from .config import Settings
from .mail.transport import Transport, new_transport
from .models import utcnow
from .outbox import Marks, Outgoing, Results

log = logging.getLogger(__name__)

# How long a process that is exiting (``pbm ingest``, ``pbm sweep``) waits for its
# background deliveries; what is still unsent then goes with the sweep after the lease.
EXIT_WAIT_SECONDS = 20.0
LOCAL_BACKENDS = ("maildir", "console")  # their mail is delivered before the answer returns
MARK_WAIT_SECONDS = 0.05  # longest a delivered local batch waits for a commit to carry its mark "sent"


@dataclass
class Delivered:
    """Mails a committing thread delivered over a local transport, to be settled on
    disk and then marked sent (or their failures recorded) by the delivery thread."""

    transport: Transport
    results: Results
    at: datetime


class _Courier:
    """This process's delivery thread: it settles the local deliveries of commits in
    this process and sends their relay mails, everything handed to it meanwhile as
    one batch (one ``settle`` a Maildir, one transport a relay), so the request that
    committed them answers without waiting for the disk's flush or the relay. A local
    batch's marks "sent" wait for the next commit in this process to write them in its
    transaction (``carried_marks``); when none comes within ``MARK_WAIT_SECONDS``, or
    someone waits for the deliveries, the thread writes them in one transaction of
    their own. Started at the first mail, anew in a forked child."""

    def __init__(self):
        self._changed = threading.Condition()
        # handed over, not taken by the thread yet: mails to send (a relay's), or delivered ones to settle
        self._waiting: list[tuple[Engine, Settings, list[Outgoing] | Delivered]] = []
        self._sending = False
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

    def hand(self, engine: Engine, settings: Settings, work: list[Outgoing] | Delivered) -> None:
        """Queue mails to send, or delivered mails to settle, for the thread."""
        with self._changed:
            self._waiting.append((engine, settings, work))
            self._start()
            self._changed.notify_all()

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
                marks = self._due_marks()
                for engine in marks:
                    del self._marks[engine]
                self._sending = True
            try:
                for engine, (kept, since, _) in marks.items():
                    _mark_alone(engine, kept, since)
                _settle([(engine, work) for engine, _, work in waiting if isinstance(work, Delivered)])
                batches: dict[tuple[Engine, Settings], list[Outgoing]] = {}
                for engine, settings, work in waiting:
                    if not isinstance(work, Delivered):
                        batches.setdefault((engine, settings), []).extend(work)
                for (engine, settings), rows in batches.items():
                    _send_committed(engine, settings, rows)
            finally:
                with self._changed:
                    self._sending = False
                    self._changed.notify_all()

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
    """Deliver the mails a transaction just committed (``queue`` claimed them). With a
    local transport (``maildir``, ``console``) deliver them here, so each is there to
    read when this returns, as the interface promises, and leave settling them on
    disk (and marking them sent) to the delivery thread, which does it for the mails
    of several answers at once. With ``smtp`` hand them to the thread and return at
    once: a slow or absent relay never delays the answer, and the outbox rows are the
    promise. A process that exits waits up to ``EXIT_WAIT_SECONDS`` for the thread
    (``wait_for_deliveries``). A failure here never fails the answer: the rows stay
    claimed until their lease ends, and the sweep sends them then."""
    if not rows:
        return
    if settings.mail_backend not in LOCAL_BACKENDS:
        _courier.hand(engine, settings, rows)
        return
    try:
        transport = new_transport(settings)
        _courier.hand(engine, settings, Delivered(transport, outbox.deliver_locally(transport, settings, rows),
                                                  utcnow()))
    except Exception:
        log.exception("delivering outbox mails %s failed", [row.message_id for row in rows])


def _settle(delivered: list[tuple[Engine, Delivered]]) -> None:
    """Settle local deliveries on disk, once a Maildir (a flush covers every mail
    written there before it), then mark them sent (``record_local``). Mails whose
    flush failed are not marked: their lease runs out and the sweep sends them again."""
    flushed: dict[str, bool] = {}
    for engine, work in delivered:
        place = getattr(work.transport, "path", None)
        if place not in flushed:
            try:
                work.transport.settle()
                flushed[place] = True
            except Exception:
                log.exception("settling outbox mails %s on disk failed",
                              [row.message_id for row, _ in work.results])
                flushed[place] = False
        if flushed[place]:
            try:
                outbox.record_local(engine, work.results, work.at, _courier.add_marks)
            except Exception:  # the database failed: the lease runs out and the sweep sends them
                log.exception("recording outbox mails %s failed", [row.message_id for row, _ in work.results])


def _send_committed(engine: Engine, settings: Settings, rows: list[Outgoing]) -> None:
    try:
        outbox.send_claimed(engine, settings, rows, utcnow())
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
        """Write, in the session's transaction, the marks this process's delivered mails
        wait for (``outbox.carry_marks``)."""
        self.marks, self.since = _courier.take_marks(self.engine)
        outbox.carry_marks(session, self.marks, self.since)


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
