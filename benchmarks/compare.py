"""Is a change faster? One line of ``run.py`` for the working tree and for an earlier
commit (or on another interpreter), alternately, several times; prints every run and the medians.

This VM's speed swings by up to 1.5 times within minutes (2026-12-04: 226 to 405
moves/s for one configuration in runs of 1,200 moves), so one run of each says
nothing about a change of 10%. Runs in pairs, in the order A B B A A B ..., so a
drift meets both sides alike, and reports each side's median and the median of
the pairs' ratios.

The earlier commit is checked out in a temporary git worktree; its server runs
from there (``python -m pbm.cli`` imports the pbm of its working directory), with
this checkout's virtualenv and benchmark client. With ``--python`` instead, both sides
serve the working tree, the earlier side on this interpreter and the other on the one
named (a virtualenv's ``bin/python`` with pbm's requirements installed): how much
the interpreter's build matters.

Run: ``.venv/bin/python benchmarks/compare.py --ref 0f495ed [--line sqlite2] [--pairs 6]
[--clients 4] [--games 6]``, or ``--python /path/to/venv/bin/python`` instead of ``--ref``.
Lines: ``sqlite`` (``pbm serve``), ``sqlite2`` (``--workers 2``), ``postgresql``,
``postgresql2``; ``+password`` after a name plays by the move command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from run import HEADER, ROOT, Played, bench_backend, percentile, postgres_database, scratch_dir


def checkout(ref: str) -> Path:
    """A worktree of ``ref`` in a new temporary directory, with this checkout's
    compiled catalogues (built files, not kept in git)."""
    place = Path(tempfile.mkdtemp(prefix="pbm-compare-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(place), ref], check=True)
    for compiled in ROOT.glob("pbm/translations/*/LC_MESSAGES/messages.mo"):
        shutil.copy(compiled, place / compiled.relative_to(ROOT))
    return place


def remove(place: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(place)], check=False)
    shutil.rmtree(place.parent, ignore_errors=True)


def one_run(line: str, args, root: Path, python: str) -> Played:
    """One run of ``line`` against the server of the checkout at ``root`` run by ``python``."""
    name, password = line.removesuffix("+password"), line.endswith("+password")
    workers = 2 if name.endswith("2") else 1
    if name.startswith("sqlite"):
        with scratch_dir() as tmp:
            return bench_backend("sqlite", f"sqlite:///{tmp}/bench.sqlite3", args, password, workers, root, python)
    url, drop = postgres_database()
    if url is None:
        raise SystemExit("no PostgreSQL answers at 127.0.0.1:5432")
    try:
        return bench_backend("postgresql", url, args, password, workers, root, python)
    finally:
        drop()


def summary(runs: list[Played]) -> str:
    """The medians of the runs: moves/s, p50, p99, server CPU a move."""
    rate = statistics.median(len(r.latencies) / r.seconds for r in runs)
    p50 = statistics.median(percentile(r.latencies, 50) for r in runs) * 1000
    p99 = statistics.median(percentile(r.latencies, 99) for r in runs) * 1000
    cpu = statistics.median(r.server_cpu / len(r.latencies) for r in runs) * 1000
    return f"{rate:>8.1f} moves/s  p50 {p50:>5.1f} ms  p99 {p99:>5.1f} ms  server {cpu:>5.2f} ms a move"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    against = parser.add_mutually_exclusive_group(required=True)
    against.add_argument("--ref", help="the earlier commit (a git revision)")
    against.add_argument("--python", help="another interpreter, serving the working tree (the earlier side: this one)")
    parser.add_argument("--line", default="sqlite2",
                        choices=[f"{n}{p}" for n in ("sqlite", "sqlite2", "postgresql", "postgresql2")
                                 for p in ("", "+password")])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--games", type=int, default=6, help="games per client and run")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    earlier = checkout(args.ref) if args.ref else ROOT
    servers = {"earlier": (earlier, sys.executable), "now": (ROOT, args.python or sys.executable)}
    runs: dict[str, list[Played]] = {"earlier": [], "now": []}
    try:
        compared = (f"{args.ref} (earlier) against the working tree (now)" if args.ref else
                    f"the working tree on {os.path.realpath(sys.executable)} (earlier) and on "
                    f"{os.path.realpath(args.python)} (now)")
        print(f"{args.line}: {compared}, {args.pairs} pairs\n")
        print(f"{'side':<8} {'backend':<26} {'clients':>7} {HEADER}")
        for pair in range(args.pairs):
            order = ("earlier", "now") if pair % 2 == 0 else ("now", "earlier")
            for side in order:
                print(f"{side:<8} ", end="", flush=True)
                runs[side].append(one_run(args.line, args, *servers[side]))
    finally:
        if args.ref:
            remove(earlier)
    ratios = [len(n.latencies) / n.seconds / (len(e.latencies) / e.seconds) for e, n in zip(runs["earlier"], runs["now"])]
    print(f"\nmedians  earlier {summary(runs['earlier'])}\n         now     {summary(runs['now'])}")
    print(f"moves/s now / earlier, pair by pair: {' '.join(f'{r:.2f}' for r in ratios)}; "
          f"median {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
