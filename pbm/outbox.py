"""The outbox: every outgoing mail is a row first, delivered after commit.

A row is written already claimed by the process that made it (a lease of a
few minutes, with a claim token); after the commit it is delivered by that
process (``pbm.courier``): over a local transport by the committing thread, then
settled on disk by the delivery thread; over a relay by the delivery thread,
while the request that made it has already answered. The scheduler's sweep claims a row with a conditional
UPDATE only when it is due: a failed attempt (retried later with back-off and
the same Message-ID) or a lease that ran out because the process died.

Over a relay each mail is marked sent in its own transaction the moment the
relay accepts it, so a crash can repeat only the mail in flight; and just
before it goes, its claim is checked and its lease renewed, so a batch that
outlives the lease (a slow relay, a long backlog) never sends a mail a sweep
has taken meanwhile. A local
Maildir batch, written within microseconds and then settled on disk, is marked sent by the next commit
of a unit of work in this process, in that unit's transaction (group commit,
``pbm.courier.carried_marks``), or by the delivery thread when none comes soon,
so a crash can repeat the mails delivered since. Delivery is at least once,
never lost, and a repeat carries the same Message-ID. A mail that
fails ``MAX_ATTEMPTS`` times is marked ``failed`` and logged at ERROR, once.
One mail's failure, whatever raised it, never stops the rest of its batch.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from contextlib import contextmanager
from typing import Callable, Iterator

from sqlalchemy import Select, and_, bindparam, insert, or_, text, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session, select

from . import driver_sql
from .config import Settings
from .db import reading, transaction, write, writing
from .mail.outbound import Composed
from .mail.transport import DeliveryError, Transport, open_transport
from .models import OUTBOX_UNSENT, OutboxMail, utcnow

log = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 30
FIRST_RETRY = timedelta(minutes=1)
LONGEST_RETRY = timedelta(hours=6)
SWEEP_BATCH = 500
Marks = list[tuple[str, str]]  # mails to mark sent: (Message-ID, claim)


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
    """Add ``mails`` to the outbox inside the caller's transaction (one statement; an
    optimistic unit runs it with its other writes, ``db.write``), claimed by this
    process for sending right after the commit (``courier.deliver_after_commit``)."""
    if mails:
        write(session, _QUEUE, [
            {"message_id": mail.message_id, "board_id": mail.board_id, "recipient": mail.recipient,
             "subject": mail.subject, "raw": mail.raw, "status": "sending", "attempts": mail.attempts,
             "claimed_until": now + CLAIM_LEASE, "claim": mail.claim, "next_attempt_at": now, "created_at": now}
            for mail in mails])


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: 1 minute, doubling, at most 6 hours."""
    return min(FIRST_RETRY * (2 ** max(0, attempts - 1)), LONGEST_RETRY)


_UNSENT = text(OUTBOX_UNSENT)  # in every condition of the sweep's, so that ``ix_outbox_unsent`` serves it


def _due(now: datetime):
    """Rows a sweep may claim: a failed attempt whose wait is over, or a lapsed lease,
    and never one that has used up its attempts."""
    return and_(_UNSENT, OutboxMail.attempts < MAX_ATTEMPTS, or_(
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
        return list(session.exec(select(OutboxMail).where(_UNSENT, OutboxMail.claim == token,
                                                          OutboxMail.status == "sending")
                                 .order_by(OutboxMail.id)).all())


Results = list[tuple[Sendable, "DeliveryError | None"]]  # each mail of a batch, and None or why it did not go


def send_claimed(engine: Engine, settings: Settings, rows: list[Sendable], now: datetime) -> int:
    """Send rows this process has claimed over one transport; returns how many it accepted.

    Over a relay each result is recorded before the next mail goes, so a crash
    can repeat only the mail in flight. A local transport takes a batch within
    microseconds, so its results are recorded together, after the batch settled
    on disk: one write transaction, which under load is a wait for the write
    lock, instead of one per mail."""
    results: Results = []
    sent, started = 0, time.monotonic()
    with open_transport(settings) as transport:
        for row in rows:
            if transport.round_trip and not _still_ours(engine, row, now + timedelta(
                    seconds=time.monotonic() - started) + CLAIM_LEASE):
                continue  # its lease ran out and a sweep took it: the sweep sends it
            error = _attempt(transport, settings, row)
            sent += error is None
            results.append((row, error))
            if transport.round_trip:
                _record(engine, results, now)
                results = []
    _record(engine, results, now)
    return sent


def deliver_locally(transport: Transport, settings: Settings, rows: list[Sendable]) -> Results:
    """Deliver just-committed rows over a local transport (``maildir``, ``console``):
    each is there to read when this returns, not yet settled on disk
    (``Transport.settle``, then ``record_local``)."""
    return [(row, _attempt(transport, settings, row)) for row in rows]


def record_local(engine: Engine, results: Results, now: datetime,
                 keep_marks: Callable[[Engine, Marks, datetime], None]) -> None:
    """After a local batch settled: hand the marks "sent" of the mails that went to
    ``keep_marks`` (the delivery thread keeps them for the next commit) and record
    the failures now."""
    keep_marks(engine, [(row.message_id, row.claim) for row, error in results if error is None], now)
    _record(engine, [(row, error) for row, error in results if error is not None], now)


# Built once: the relay path runs it before every mail.
_RENEW = update(OutboxMail).where(
    OutboxMail.message_id == bindparam("held_id"), OutboxMail.claim == bindparam("held_claim"),
    OutboxMail.status == "sending").values(claimed_until=bindparam("until"))


def _still_ours(engine: Engine, row: Sendable, until: datetime) -> bool:
    """Whether this process's claim still holds ``row``, its lease renewed to ``until``
    if so: a mail is sent over a relay only while its sender holds it."""
    with marking(engine) as connection:  # a renewal lost in a crash only shortens the lease
        return connection.execute(_RENEW, {"held_id": row.message_id, "held_claim": row.claim,
                                           "until": until}).rowcount == 1


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
    OutboxMail.message_id == bindparam("mark_id"), OutboxMail.claim == bindparam("mark_claim"),
    OutboxMail.status == "sending").values(status="sent", sent_at=bindparam("now"), claimed_until=None,
                                           last_error=None)


@contextmanager
def marking(engine: Engine) -> Iterator[Connection]:
    """A write transaction of its own for delivery results, on a plain connection (Core
    statements: the ORM's bulk UPDATE costs more than the write)."""
    with writing(engine) as connection:
        if engine.dialect.name == "postgresql":
            # Losing a mark in a crash only sends the mail again (at least once, same
            # Message-ID), so it need not wait for the log flush, as the move's commit does.
            connection.execute(text("SET LOCAL synchronous_commit TO OFF"))
        yield connection


def write_marks(connection, marks: Marks, now: datetime) -> None:
    """Mark sent the mails ``marks`` names (Message-ID, claim), each only while that
    claim still holds its row, in the transaction of ``connection``."""
    if marks:
        driver_sql.execute(connection, _MARK_SENT, _mark_params(marks, now))


def carry_marks(session: Session, marks: Marks, now: datetime) -> None:
    """``write_marks`` in a unit of work's transaction (``db.write``: an optimistic unit
    runs them with its other writes, made ready before the write lock)."""
    if marks:
        write(session, _MARK_SENT, _mark_params(marks, now))


def _mark_params(marks: Marks, now: datetime) -> list[dict]:
    return [{"mark_id": message_id, "mark_claim": claim, "now": now} for message_id, claim in marks]


def _record(engine: Engine, results: Results, now: datetime) -> None:
    """Write attempts' results (row, None when sent or else the error) in one
    transaction, each only while this claim still holds its row; a mail refused
    for good, or at its last attempt, is marked failed. (If that transaction
    fails, its rows stay claimed until the lease ends and the sweep sends them
    again, as for a crash.)"""
    if not results:
        return
    failures = []
    with marking(engine) as connection:
        write_marks(connection, [(row.message_id, row.claim) for row, error in results if error is None], now)
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
    lapsed = and_(_UNSENT, OutboxMail.status == "sending", OutboxMail.claimed_until < now,
                  OutboxMail.attempts >= MAX_ATTEMPTS)
    with reading(engine) as session:
        rows = session.exec(select(OutboxMail).where(lapsed)).all()
    if not rows:
        return
    with transaction(engine) as session:  # only the rows still lapsed: another sweep may have marked some
        rows = [row for row in rows if session.execute(update(OutboxMail).where(OutboxMail.id == row.id, lapsed).values(
            status="failed", claimed_until=None,
            last_error=f"no result from attempt {row.attempts}; {row.last_error or ''}"[:2000])).rowcount == 1]
    for row in rows:
        log.error("mail %s to %s failed for good: attempt %d of %d never reported back",
                  row.message_id, row.recipient, row.attempts, MAX_ATTEMPTS)


def sweep_batch(now: datetime) -> Select:
    """The ids of the mails a sweep at ``now`` takes, at most ``SWEEP_BATCH``: the longest
    waiting first, in the order of ``ix_outbox_unsent``, so that the few due are found
    in that index (by id, SQLite walked the whole table, every mail ever sent).

    On PostgreSQL they are chosen ``FOR UPDATE SKIP LOCKED``: sweeps running at once
    in several processes each take different mails, and none waits for the rows
    another is claiming. (SQLite has one writer at a time and no such clause.)"""
    return (select(OutboxMail.id).where(_due(now)).order_by(OutboxMail.next_attempt_at, OutboxMail.id)
            .limit(SWEEP_BATCH).with_for_update(skip_locked=True))


def deliver_due(engine: Engine, settings: Settings, now: datetime | None = None) -> int:
    """The scheduler's sweep: try every mail that is due (or whose claim lapsed), at most
    ``SWEEP_BATCH`` a run (``sweep_batch``); returns how many went out."""
    now = now or utcnow()
    _give_up_on_lapsed(engine, now)
    rows = _claim(engine, sweep_batch(now), now)
    return send_claimed(engine, settings, rows, now) if rows else 0
