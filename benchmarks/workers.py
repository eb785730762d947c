"""``make bench``, the production web tier: the reply-path games of ``run.py``
(whole Great Kingdom games by reply mail through ``POST /inbound/email``)
against gunicorn with ``deploy/gunicorn.conf.py`` on PostgreSQL, with 1, 2
and 4 worker processes; prints moves per second and latency percentiles.

A figure, not a pass/fail test. Skipped when no PostgreSQL answers at
127.0.0.1:5432 (or ``PBM_TEST_POSTGRES_URL``). Options: --workers, --clients,
--games, --size.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from run import (HEADER, POSTGRES_ADMIN, free_port, postgres_database, scratch_dir, serve_and_play,
                 upgraded_environment)

ROOT = Path(__file__).resolve().parent.parent


def bench_workers(workers: int, args) -> None:
    """One row: a fresh database, gunicorn with ``workers`` workers, the games."""
    url, drop = postgres_database()
    if url is None:
        print(f"postgresql  (skipped: nothing answers at {POSTGRES_ADMIN})")
        return
    try:
        with scratch_dir() as tmp:
            port = free_port()
            env = upgraded_environment(url, tmp)
            played = serve_and_play(
                [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--bind", f"127.0.0.1:{port}",
                 "--workers", str(workers), "--log-level", "warning", "--access-logfile", "/dev/null",
                 "pbm:create_app()"], env, port, f"{tmp}/outbox", args, cwd=ROOT)
    finally:
        drop()
    print(f"{workers:>7} {args.clients:>7} {played.row()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2,4", help="worker counts to measure, comma-separated")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--games", type=int, default=1, help="games per client")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"gunicorn (deploy/gunicorn.conf.py, gthread) on PostgreSQL: whole Great Kingdom games "
          f"({args.size}x{args.size}) by reply mail,\n{args.clients} concurrent clients x {args.games} games each, "
          f"on {os.cpu_count()} cores; latency = one move, request to committed answer;\nserver ms and client ms = CPU per move of gunicorn (all workers) and of the clients.\n")
    print(f"{'workers':>7} {'clients':>7} {HEADER}")
    for workers in (int(n) for n in args.workers.split(",")):
        bench_workers(workers, args)


if __name__ == "__main__":
    main()
