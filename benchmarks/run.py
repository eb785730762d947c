"""``make bench``: whole games through ``POST /inbound/email`` against the
production server (``pbm serve``, waitress) on loopback, by several
concurrent clients; prints moves per second and latency percentiles for
SQLite and, when one answers at 127.0.0.1:5432, PostgreSQL; by reply mail and
by the ``move`` command with a password. Then ``breakdown.py`` (where a move's
time goes, flat cost late in a game) and ``engines.py``; ``workers.py`` runs
the reply path on gunicorn with several worker processes.

A figure, not a pass/fail test. Options: --clients, --games, --size.
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm.games import get_game  # noqa: E402

POSTGRES_ADMIN = os.environ.get("PBM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mail(sender: str, to: str, subject: str, text: str = "") -> bytes:
    m = EmailMessage()
    m["From"], m["To"], m["Subject"] = sender, to, subject
    m["Message-ID"] = make_msgid(domain="bench.test")
    m.set_content(text or "\n")
    return bytes(m)


class Client:
    def __init__(self, base: str):
        self.base = base

    def post(self, raw: bytes) -> tuple[dict, float]:
        request = urllib.request.Request(self.base + "/inbound/email", data=raw,
                                         headers={"Content-Type": "message/rfc822"})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
        return answer, time.perf_counter() - start


def reply_tags(maildir: str) -> dict[tuple[int, str], str]:
    """(board, player address) -> that player's Reply-To, read from the delivered mails."""
    tags = {}
    for raw in mailbox.Maildir(maildir, create=False).itervalues():
        m = message_from_bytes(raw.as_bytes(), policy=policy.default)
        if m["Reply-To"]:
            board = int(str(m["Subject"]).split()[3])
            tags[(board, m["To"].addresses[0].addr_spec)] = m["Reply-To"].addresses[0].addr_spec
    return tags


def play_games(base: str, maildir: str, clients: int, games: int, size: int, seed: int,
               password: bool = False):
    """Whole games by ``clients`` threads: by reply mail, or with ``password`` by the
    ``move`` command with userid and password in the Subject."""
    client = Client(base)
    pairs = []
    for i in range(clients * games):
        a, b = f"b{i}a@bench.test", f"b{i}b@bench.test"
        client.post(mail(a, "pbm@bench.test", f"signup b{i}a pw{i}xx"))
        client.post(mail(b, "pbm@bench.test", f"signup b{i}b pw{i}xx"))
        answer, _ = client.post(mail(a, "pbm@bench.test", f"greatkingdom challenge b{i}a b{i}b -size={size}"))
        pairs.append((answer["board"], a, b))
    tags = reply_tags(maildir)
    latencies: list[float] = []
    lock = threading.Lock()
    game = get_game("greatkingdom")
    # Every game's moves are chosen before the clock starts: the clients only send.
    rng = random.Random(seed)
    scripts = {}
    for board, a, b in pairs:
        state, script = game.initial_state({"size": size}), []
        while game.outcome(state) is None:
            seat, move = game.to_move(state), rng.choice(game.legal_moves(state))
            script.append(((a, b)[seat], game.format_move(move)))
            state = game.apply(state, seat, move)
        scripts[board] = script

    def move_mail(board: int, sender: str, move: str) -> bytes:
        if not password:
            return mail(sender, tags[(board, sender)], "Re: board", move)
        userid = sender.partition("@")[0]
        number = userid[1:-1]
        return mail(sender, "pbm@bench.test", f"greatkingdom move {board} {userid} pw{number}xx {move}")

    def run(worker: int):
        for board, _, _ in pairs[worker::clients]:
            for sender, move in scripts[board]:
                answer, seconds = client.post(move_mail(board, sender, move))
                if answer["status"] != "applied":
                    raise SystemExit(f"board {board}: {answer}")
                with lock:
                    latencies.append(seconds)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - start


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def upgraded_environment(database_url: str, tmp: str) -> dict:
    """The environment of a benchmarked server on ``database_url`` (instance and
    Maildir under ``tmp``), after ``pbm db upgrade`` has made its tables."""
    env = {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_INSTANCE_PATH": tmp,
           "PBM_MAILDIR": f"{tmp}/outbox", "PBM_SERVER_ADDRESS": "pbm@bench.test", "PBM_LOG_LEVEL": "WARNING"}
    subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=env, check=True, capture_output=True)
    return env


def serve_and_play(command: list[str], env: dict, port: int, maildir: str, args, password: bool = False,
                   cwd=None) -> tuple[list[float], float]:
    """Start the server ``command`` (listening on ``port``), wait until it answers
    ``/healthz``, play the games against it, stop it: (latencies, seconds)."""
    server = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        return play_games(base, maildir, args.clients, args.games, args.size, args.seed, password)
    finally:
        server.terminate()
        server.wait(timeout=60)


def bench_backend(name: str, database_url: str, args, password: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = upgraded_environment(database_url, tmp)
        port = free_port()
        latencies, seconds = serve_and_play(
            [sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--threads",
             str(max(8, args.clients * 2))], env, port, f"{tmp}/outbox", args, password)
    moves = len(latencies)
    label = f"{name}{' +password' if password else ''}"
    print(f"{label:<20} {args.clients:>7} {moves:>6} {moves / seconds:>10.1f} "
          f"{percentile(latencies, 50) * 1000:>8.1f} {percentile(latencies, 99) * 1000:>8.1f} "
          f"{statistics.mean(latencies) * 1000:>8.1f}", flush=True)


def postgres_database():
    admin = sa.create_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
    name = f"pbm_bench_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except sa.exc.OperationalError:
        return None, None
    url = sa.engine.make_url(POSTGRES_ADMIN).set(database=name).render_as_string(hide_password=False)

    def drop():
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()
    return url, drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--games", type=int, default=2, help="games per client")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"Whole Great Kingdom games ({args.size}x{args.size}, random legal moves) through POST "
          f"/inbound/email,\n{args.clients} concurrent clients x {args.games} games each, waitress on "
          "loopback; by reply mail, and (+password) by the move command with a password in the Subject;\n"
          "latency = one move, request to committed answer.\n")
    print(f"{'backend':<20} {'clients':>7} {'moves':>6} {'moves/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'mean ms':>8}")
    for password in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            bench_backend("sqlite", f"sqlite:///{tmp}/bench.sqlite3", args, password)
        url, drop = postgres_database()
        if url is None:
            print(f"postgresql  (skipped: nothing answers at {POSTGRES_ADMIN})")
            continue
        try:
            bench_backend("postgresql", url, args, password)
        finally:
            drop()
    for extra in ("breakdown.py", "engines.py"):
        print()
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / extra)], check=True)


if __name__ == "__main__":
    main()
