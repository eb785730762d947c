"""The outbox: every outgoing mail is a row first, delivered after commit.

A row is written already claimed by the request that made it (a lease of
a few minutes), which sends it right after the commit; the scheduler's
sweep claims a row with a conditional UPDATE only when it is due: a failed
attempt (retried later with back-off and the same Message-ID) or a lease
that ran out because the process died. So no mail is sent twice, and none
is lost.
"""

from __future__ import annotations

import email.policy
import logging
import threading
import uuid
from datetime import datetime, timedelta
from email.message import EmailMessage

from sqlalchemy import and_, or_, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from .config import Settings
from .db import reading, transaction
from .mail.transport import DeliveryError, send
from .models import OutboxMail, utcnow

log = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 30
FIRST_RETRY = timedelta(minutes=1)
LONGEST_RETRY = timedelta(hours=6)


def queue(session: Session, message: EmailMessage, board_id: int | None, now: datetime) -> OutboxMail:
    """Add a mail to the outbox inside the caller's transaction, claimed for sending
    right after the commit (see ``deliver_after_commit``)."""
    row = OutboxMail(
        message_id=str(message["Message-ID"]),
        board_id=board_id,
        recipient=str(message["To"]),
        subject=str(message["Subject"]),
        raw=message.as_bytes(policy=email.policy.SMTP),
        status="sending",
        attempts=1,
        claimed_until=now + CLAIM_LEASE,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(row)
    return row


def backoff(attempts: int) -> timedelta:
    return min(FIRST_RETRY * (2 ** max(0, attempts - 1)), LONGEST_RETRY)


def _claim(engine: Engine, mail_ids: list[int], now: datetime) -> list[OutboxMail]:
    """Take the given mails that nobody else is sending (one conditional UPDATE)."""
    claimable = or_(
        and_(OutboxMail.status == "pending", OutboxMail.next_attempt_at <= now),
        and_(OutboxMail.status == "sending", OutboxMail.claimed_until < now),
    )
    token = uuid.uuid4().hex
    with transaction(engine) as session:
        session.execute(
            update(OutboxMail)
            .where(OutboxMail.id.in_(mail_ids), claimable)
            .values(status="sending", claimed_until=now + CLAIM_LEASE, claim=token,
                    attempts=OutboxMail.attempts + 1))
        return list(session.exec(select(OutboxMail).where(OutboxMail.claim == token,
                                                          OutboxMail.status == "sending")
                                 .order_by(OutboxMail.id)).all())


def deliver(engine: Engine, settings: Settings, mail_ids: list[int], now: datetime | None = None) -> int:
    """Claim the given outbox mails that are due and send them; returns how many went out."""
    now = now or utcnow()
    return _send_claimed(engine, settings, _claim(engine, mail_ids, now), now)


def _send_claimed(engine: Engine, settings: Settings, rows: list[OutboxMail], now: datetime) -> int:
    """Send rows this process has claimed, then record the results in one transaction."""
    sent, failed = [], []
    for row in rows:
        try:
            send(settings, settings.server_address, row.recipient, row.raw)
            sent.append(row.id)
        except DeliveryError as error:
            log.warning("mail %s to %s failed (attempt %d): %s", row.message_id, row.recipient,
                        row.attempts, error)
            failed.append((row, str(error)))
    with transaction(engine) as session:
        if sent:
            session.execute(update(OutboxMail).where(OutboxMail.id.in_(sent)).values(
                status="sent", sent_at=utcnow(), claimed_until=None, last_error=None))
        for row, error in failed:
            session.execute(update(OutboxMail).where(OutboxMail.id == row.id).values(
                status="failed" if row.attempts >= MAX_ATTEMPTS else "pending", claimed_until=None,
                next_attempt_at=now + backoff(row.attempts), last_error=error[:2000]))
    return len(sent)


def deliver_after_commit(engine: Engine, settings: Settings, rows: list[OutboxMail]) -> None:
    """Send the mails a transaction just committed (``queue`` claimed them): at once for
    local backends, in the background for SMTP, so a slow or absent relay never delays
    the answer to the inbound mail."""
    if not rows:
        return
    if settings.mail_backend == "smtp":
        thread = threading.Thread(target=_send_committed, args=(engine, settings, rows), daemon=True)
        thread.start()
    else:
        _send_committed(engine, settings, rows)


def _send_committed(engine: Engine, settings: Settings, rows: list[OutboxMail]) -> None:
    try:
        _send_claimed(engine, settings, rows, utcnow())
    except Exception:  # the lease runs out and the scheduler's sweep sends them
        log.exception("delivering outbox mails %s failed", [row.id for row in rows])


def deliver_due(engine: Engine, settings: Settings, now: datetime | None = None) -> int:
    """The scheduler's sweep: try every mail that is due (or whose claim lapsed)."""
    now = now or utcnow()
    with reading(engine) as session:
        ids = session.exec(select(OutboxMail.id).where(or_(
            and_(OutboxMail.status == "pending", OutboxMail.next_attempt_at <= now),
            and_(OutboxMail.status == "sending", OutboxMail.claimed_until < now),
        )).order_by(OutboxMail.id).limit(500)).all()
    return deliver(engine, settings, list(ids), now) if ids else 0
