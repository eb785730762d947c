"""Periodic jobs: outbox delivery, reminders, expiry.

Each job is an idempotent sweep over deadlines kept in the database (rows
are claimed with conditional UPDATEs), so running it twice, late, or from
two processes at once does no harm and sends nothing twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from .outbox import deliver_due
from .service import Service

log = logging.getLogger(__name__)

OUTBOX_SECONDS = 30
DEADLINE_SECONDS = 300
COMPUTER_SECONDS = 120  # retries of computer moves that failed or were never started


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


def build(server: Service, background: bool):
    """The three sweeps on intervals; each also runs once at start, to catch up
    on whatever fell due while nothing was running."""
    scheduler = BackgroundScheduler(timezone="UTC") if background else BlockingScheduler(timezone="UTC")
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
