"""The long run of hostile mail (``make fuzz``): 10,000 generated mails through the
three doors of one server, then the figures: answers by door, retry answers, log
records at ERROR or with a traceback, and each mail's time in CPU and on the clock.
Exits 1 when a mail was answered "try again", something was logged as an error, or
a mail cost over 1 s of CPU (the clock is printed too, but on a shared machine it
also measures the neighbours).

    .venv/bin/python -m tests.fuzz.longrun [--mails 10000] [--seed 0] [--database-url URL]

Without ``--database-url`` it runs on a fresh SQLite file; a PostgreSQL URL must
name an empty database (it is migrated here). The mails are those of
``tests/test_hostile_mail.py``, more of them.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pbm import create_app
from pbm.migrate import upgrade
from pbm.smtpd import controller

from ..conftest import Outbox, free_port, make_mail
from .hostile import DOORS, Doors, ErrorLog, Figures, raw_mail

SLOWEST_ALLOWED = 1.0  # seconds of CPU one mail may cost, whatever it holds
BATCH = 1_000  # mails per Hypothesis run: its record of a run grows with every mail, and
# the garbage collector's full passes over it were charged to whichever mail they fell in


def machine() -> str:
    return f"{platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}, " \
           f"Python {platform.python_version()}"


def run(database_url: str, workdir: Path, mails: int, seed_value: int) -> tuple[Figures, ErrorLog]:
    app = create_app({"database_url": database_url, "instance_path": str(workdir / "instance"),
                      "maildir": str(workdir / "maildir"), "mail_backend": "maildir",
                      "server_address": "pbm@pbm.test", "base_url": "http://pbm.test",
                      "secret_key": "fuzz"})
    server = app.extensions["pbm"]
    for sender, subject in (("alice", "signup alice alicepw"), ("bob", "signup bob bobpw"),
                            ("alice", "go challenge alice bob")):
        assert server.handle_raw(make_mail(f"{sender}@players.test", subject)).status.value == "applied"
    reply_tag = str(Outbox(str(workdir / "maildir")).to("bob@players.test")[-1]["Reply-To"])
    port = free_port()
    listener = controller(server, "127.0.0.1", port)
    figures, doors = Figures(), Doors(server, app.test_client(), port)

    def batch(number: int, size: int):
        @seed(seed_value * 1_000_003 + number)
        @settings(max_examples=size, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(DOORS), raw_mail(reply_tag))
        def send(door, raw):
            figures.send(doors, door, raw)
        return send

    try:
        listener.start()
        with ErrorLog() as errors:
            for number, first in enumerate(range(0, mails, BATCH)):
                batch(number, min(BATCH, mails - first))()
                print(f"  {figures.mails} mails", file=sys.stderr, flush=True)
    finally:
        listener.stop()
        server.engine.dispose()
    return figures, errors


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mails", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: a fresh SQLite file)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pbm-fuzz-") as tmp:
        workdir = Path(tmp)
        database_url = args.database_url or f"sqlite:///{workdir / 'pbm.sqlite3'}"
        upgrade(database_url)
        started = time.monotonic()
        figures, errors = run(database_url, workdir, args.mails, args.seed)
        elapsed = time.monotonic() - started
    print(f"hostile mail, long run: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}")
    print(f"database: {database_url.split(':')[0]}, seed {args.seed}, {elapsed:.0f} s")
    print(f"mails: {figures.mails}")
    print("answers (door, code, mails):")
    for line in figures.lines():
        print("  " + line)
    print(f"retry answers (HTTP 5xx, SMTP 4xx, exit 75): {figures.retries}")
    print(f"errors and tracebacks logged: {len(errors.records)}")
    for record in errors.records[:5]:
        print("  " + errors.format(record).replace("\n", "\n  "))
    for name, times in (("CPU", figures.cpu), ("clock", figures.clock)):
        ranked = sorted(times)
        print(f"seconds per mail, {name:5}: median {ranked[len(ranked) // 2]:.3f}, "
              f"99th percentile {ranked[len(ranked) * 99 // 100]:.3f}, most {ranked[-1]:.3f}; "
              f"{sum(t > SLOWEST_ALLOWED for t in times)} over {SLOWEST_ALLOWED:g} s")
    slowest = figures.slowest
    print(f"the costliest mail: {slowest.seconds:.3f} s CPU ({slowest.collecting:.3f} s of it in garbage "
          f"collection), by {slowest.door}, {len(slowest.mail):,} bytes: {slowest.mail[:2000]!r}")
    print(f"garbage collection over the run: {figures.collector.total:.1f} s CPU")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{n:.1f}' for n in os.getloadavg())}")
    return 0 if not figures.retries and not errors.records and slowest.seconds <= SLOWEST_ALLOWED else 1


if __name__ == "__main__":
    sys.exit(main())
