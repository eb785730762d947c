"""The outbox: every outgoing mail is a row first, delivered after commit.

A row is written already claimed by the process that made it (a lease of a
few minutes, with a claim token); after the commit it goes to that process's
delivery thread, which sends it while the request that made it has already
answered. The scheduler's sweep claims a row with a conditional UPDATE only
when it is due: a failed attempt (retried later with back-off and the same
Message-ID) or a lease that ran out because the process died.

Over a relay each mail is marked sent in its own transaction the moment the
relay accepts it, so a crash can repeat only the mail in flight. A local
Maildir batch, written within microseconds, is marked sent by the next commit
of a unit of work in this process, in that unit's transaction (group commit:
no write transaction of its own), or after ``MARK_WAIT_SECONDS`` without one by
the delivery thread, so a crash can repeat the mails delivered since. Delivery
is at least once, never lost, and a repeat carries the same Message-ID. A mail that
fails ``MAX_ATTEMPTS`` times is marked ``failed`` and logged at ERROR, once.
One mail's failure, whatever raised it, never stops the rest of its batch.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterator

from sqlalchemy import Select, and_, bindparam, insert, or_, text, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from .config import Settings
from .db import reading, transaction, writing
from .mail.outbound import Composed
from .mail.transport import DeliveryError, Transport, open_transport
from .models import OutboxMail, utcnow

log = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 30
FIRST_RETRY = timedelta(minutes=1)
LONGEST_RETRY = timedelta(hours=6)
SWEEP_BATCH = 500
# How long a process that is exiting (``pbm ingest``, ``pbm sweep``) waits for its
# background deliveries; what is still unsent then goes with the sweep after the lease.
EXIT_WAIT_SECONDS = 20.0
LOCAL_BACKENDS = ("maildir", "console")  # their mail is delivered before the answer returns
LOCAL_WAIT_SECONDS = 30.0  # longest an answer waits for a local delivery (a stuck disk: the sweep retries)
MARK_WAIT_SECONDS = 0.05  # longest a delivered local batch waits for a commit to carry its mark "sent"


@dataclass
class Outgoing:
    """A mail on its way into the outbox, as this process's delivery thread sends it
    after the commit (the sweep sends ``OutboxMail`` rows, which have these fields too)."""

    message_id: str
    board_id: int | None
    recipient: str
    subject: str
    raw: bytes  # the bytes on the wire
    claim: str = field(default_factory=lambda: uuid.uuid4().hex)
    attempts: int = 1


Sendable = Outgoing | OutboxMail  # what a delivery sends: a mail just committed, or a row the sweep claimed


def outgoing(mail: Composed, board_id: int | None) -> Outgoing:
    """A composed mail made ready for the outbox (``queue``)."""
    return Outgoing(mail.message_id, board_id, mail.recipient, mail.subject, mail.raw)


_QUEUE = insert(OutboxMail)  # built once, as the other hot statements


def queue(session: Session, mails: list[Outgoing], now: datetime) -> None:
    """Add ``mails`` to the outbox inside the caller's transaction (one statement),
    claimed by this process for sending right after the commit (``deliver_after_commit``)."""
    if mails:
        session.connection().execute(_QUEUE, [
            {"message_id": mail.message_id, "board_id": mail.board_id, "recipient": mail.recipient,
             "subject": mail.subject, "raw": mail.raw, "status": "sending", "attempts": mail.attempts,
             "claimed_until": now + CLAIM_LEASE, "claim": mail.claim, "next_attempt_at": now, "created_at": now}
            for mail in mails])


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: 1 minute, doubling, at most 6 hours."""
    return min(FIRST_RETRY * (2 ** max(0, attempts - 1)), LONGEST_RETRY)


def _due(now: datetime):
    """Rows a sweep may claim: a failed attempt whose wait is over, or a lapsed lease,
    and never one that has used up its attempts."""
    return and_(OutboxMail.attempts < MAX_ATTEMPTS, or_(
        and_(OutboxMail.status == "pending", OutboxMail.next_attempt_at <= now),
        and_(OutboxMail.status == "sending", OutboxMail.claimed_until < now),
    ))


def _claim(engine: Engine, candidates: Select, now: datetime) -> list[OutboxMail]:
    """Take the mails among ``candidates`` (a query of ids) that are due and nobody
    else is sending (one conditional UPDATE)."""
    token = uuid.uuid4().hex
    with transaction(engine) as session:
        session.execute(
            update(OutboxMail)
            .where(OutboxMail.id.in_(candidates), _due(now))
            .values(status="sending", claimed_until=now + CLAIM_LEASE, claim=token,
                    attempts=OutboxMail.attempts + 1))
        return list(session.exec(select(OutboxMail).where(OutboxMail.claim == token,
                                                          OutboxMail.status == "sending")
                                 .order_by(OutboxMail.id)).all())


def _send_claimed(engine: Engine, settings: Settings, rows: list[Sendable], now: datetime,
                  carried: bool = False) -> int:
    """Send rows this process has claimed over one transport; returns how many it accepted.

    Over a relay each result is recorded before the next mail goes, so a crash
    can repeat only the mail in flight. A local transport takes a batch within
    microseconds, so its results are recorded together: one write transaction,
    which under load is a wait for the write lock, instead of one per mail; or,
    ``carried``, the marks of the mails it accepted wait for this process's next
    commit to write them (``carried_marks``), and only its failures are recorded now."""
    results: list[tuple[Sendable, DeliveryError | None]] = []
    sent = 0
    with open_transport(settings) as transport:
        for row in rows:
            error = _attempt(transport, settings, row)
            sent += error is None
            results.append((row, error))
            if transport.round_trip:
                _record(engine, results, now)
                results = []
    if carried and results:
        _courier.add_marks(engine, [(row.message_id, row.claim) for row, error in results if error is None], now)
        results = [(row, error) for row, error in results if error is not None]
    _record(engine, results, now)
    return sent


def _attempt(transport: Transport, settings: Settings, row: Sendable) -> DeliveryError | None:
    """Send one mail; returns None when it went, else why it did not."""
    try:
        transport.send(settings.server_address, row.recipient, row.raw)
    except DeliveryError as error:
        return error
    except Exception as error:  # a defect costs this mail an attempt, never the batch
        log.exception("mail %s to %s: unexpected error while sending", row.message_id, row.recipient)
        return DeliveryError(f"{error.__class__.__name__}: {error}")
    return None


# Built once (the delivery thread runs it for every batch). Claims are unique: no
# row matches another row's claim.
_MARK_SENT = update(OutboxMail).where(
    OutboxMail.message_id.in_(bindparam("ids", expanding=True)),
    OutboxMail.claim.in_(bindparam("claims", expanding=True)),
    OutboxMail.status == "sending").values(status="sent", sent_at=bindparam("now"), claimed_until=None,
                                           last_error=None)


def _write_marks(connection, marks: list[tuple[str, str]], now: datetime) -> None:
    """Mark sent the mails ``marks`` names (Message-ID, claim), each only while that
    claim still holds its row, in the transaction of ``connection``."""
    if marks:
        connection.execute(_MARK_SENT, {"ids": [message_id for message_id, _ in marks],
                                        "claims": [claim for _, claim in marks], "now": now})


def _record(engine: Engine, results: list[tuple[Sendable, DeliveryError | None]], now: datetime) -> None:
    """Write attempts' results (row, None when sent or else the error) in one
    transaction, each only while this claim still holds its row; a mail refused
    for good, or at its last attempt, is marked failed. (If that transaction
    fails, its rows stay claimed until the lease ends and the sweep sends them
    again, as for a crash.)"""
    if not results:
        return
    failures = []
    with writing(engine) as connection:  # Core statements: the ORM's bulk UPDATE costs more than the write
        if engine.dialect.name == "postgresql":
            # Losing this mark in a crash only sends the mail again (at least once, same
            # Message-ID), so it need not wait for the log flush, as the move's commit does.
            connection.execute(text("SET LOCAL synchronous_commit TO OFF"))
        _write_marks(connection, [(row.message_id, row.claim) for row, error in results if error is None], now)
        for row, error in results:
            if error is None:
                continue
            ours = and_(OutboxMail.message_id == row.message_id, OutboxMail.claim == row.claim,
                        OutboxMail.status == "sending")
            given_up = error.permanent or row.attempts >= MAX_ATTEMPTS
            changed = connection.execute(update(OutboxMail).where(ours).values(
                status="failed" if given_up else "pending", claimed_until=None,
                next_attempt_at=now + backoff(row.attempts), last_error=str(error)[:2000])).rowcount
            failures.append((row, error, given_up and changed))
    for row, error, given_up in failures:
        if given_up and error.permanent:
            log.error("mail %s to %s failed for good: the relay refused it (%s)", row.message_id, row.recipient,
                      error)
        elif given_up:
            log.error("mail %s to %s failed for good after %d attempts; last error: %s",
                      row.message_id, row.recipient, row.attempts, error)
        else:
            log.warning("mail %s to %s failed (attempt %d of %d): %s", row.message_id, row.recipient,
                        row.attempts, MAX_ATTEMPTS, error)


def _give_up_on_lapsed(engine: Engine, now: datetime) -> None:
    """Mark failed the mails whose last allowed attempt never reported back (the
    process died while sending), so attempts stay bounded and the operator is told."""
    lapsed = and_(OutboxMail.status == "sending", OutboxMail.claimed_until < now,
                  OutboxMail.attempts >= MAX_ATTEMPTS)
    with reading(engine) as session:
        rows = session.exec(select(OutboxMail).where(lapsed)).all()
    if not rows:
        return
    with transaction(engine) as session:
        for row in rows:
            session.execute(update(OutboxMail).where(OutboxMail.id == row.id, lapsed).values(
                status="failed", claimed_until=None,
                last_error=f"no result from attempt {row.attempts}; {row.last_error or ''}"[:2000]))
    for row in rows:
        log.error("mail %s to %s failed for good: attempt %d of %d never reported back",
                  row.message_id, row.recipient, row.attempts, MAX_ATTEMPTS)


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
        self._marks: dict[Engine, tuple[list[tuple[str, str]], datetime, float]] = {}
        self._waiters = 0  # callers of ``wait``: the marks are written at once for them
        self._thread: threading.Thread | None = None

    def add_marks(self, engine: Engine, marks: list[tuple[str, str]], now: datetime) -> None:
        """Keep the marks "sent" of mails delivered at ``now`` for a commit to carry."""
        if marks:
            with self._changed:
                kept, since, first = self._marks.get(engine, ([], now, time.monotonic()))
                self._marks[engine] = (kept + marks, min(since, now), first)
                self._start()
                self._changed.notify_all()

    def take_marks(self, engine: Engine) -> tuple[list[tuple[str, str]], datetime | None]:
        """The marks kept for ``engine`` and when the first of them was delivered, no
        longer kept (``give_back`` returns them when their transaction fails)."""
        with self._changed:
            kept, since, _ = self._marks.pop(engine, ([], None, 0.0))
            return kept, since

    def give_back(self, engine: Engine, marks: list[tuple[str, str]], since: datetime | None) -> None:
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

    def _due_marks(self) -> dict[Engine, tuple[list[tuple[str, str]], datetime, float]]:
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
        _send_claimed(engine, settings, rows, utcnow(), carried=True)
    except Exception:  # the database failed: the lease runs out and the sweep sends them
        log.exception("delivering outbox mails %s failed", [row.message_id for row in rows])


def _mark_alone(engine: Engine, marks: list[tuple[str, str]], since: datetime) -> None:
    """Write delivered mails' marks "sent" in a transaction of their own (no commit
    came to carry them). If it fails, the rows stay claimed until the lease ends and
    the sweep sends them again, as after a crash."""
    try:
        with writing(engine) as connection:
            if engine.dialect.name == "postgresql":
                # Losing this mark in a crash only sends the mail again (at least once, same
                # Message-ID), so it need not wait for the log flush, as the move's commit does.
                connection.execute(text("SET LOCAL synchronous_commit TO OFF"))
            _write_marks(connection, marks, since)
    except Exception:
        log.exception("marking outbox mails %s sent failed", [message_id for message_id, _ in marks])


class _Carried:
    """The marks "sent" one write transaction carries (``carried_marks``)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.marks: list[tuple[str, str]] = []
        self.since: datetime | None = None

    def write(self, session: Session) -> None:
        """Write, in the session's transaction (its write lock held), the marks this
        process's delivered mails wait for."""
        self.marks, self.since = _courier.take_marks(self.engine)
        _write_marks(session.connection(), self.marks, self.since)


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
    """Wait until the mails this process committed so far have been delivered (or
    their attempt has failed and been recorded), at most ``timeout`` seconds;
    returns whether they all were."""
    return _courier.wait(timeout)


@atexit.register
def _wait_at_exit() -> None:
    # Daemon threads die with the process: without this, `pbm ingest` would exit
    # before its mails went and leave them to the sweep after the lease.
    if not wait_for_deliveries(EXIT_WAIT_SECONDS):
        log.warning("exiting with mail deliveries still running; the sweep retries them "
                    "after the %s lease", CLAIM_LEASE)


def deliver_due(engine: Engine, settings: Settings, now: datetime | None = None) -> int:
    """The scheduler's sweep: try every mail that is due (or whose claim lapsed), at most
    ``SWEEP_BATCH`` a run; returns how many went out.

    On PostgreSQL the batch is chosen ``FOR UPDATE SKIP LOCKED``: sweeps running at
    once in several processes each take different mails, and none waits for the
    rows another is claiming. (SQLite has one writer at a time and no such clause.)"""
    now = now or utcnow()
    _give_up_on_lapsed(engine, now)
    batch = (select(OutboxMail.id).where(_due(now)).order_by(OutboxMail.id).limit(SWEEP_BATCH)
             .with_for_update(skip_locked=True))
    rows = _claim(engine, batch, now)
    return _send_claimed(engine, settings, rows, now) if rows else 0
