"""``make bench``: whole games through ``POST /inbound/email`` against the
production server (``pbm serve``, waitress) on loopback, by several
concurrent clients; prints moves per second and latency percentiles for
SQLite (one process, then ``pbm serve --workers 2``) and, when one answers at
127.0.0.1:5432, PostgreSQL (one process, then two); by reply mail and by the ``move``
command with a password. Then ``breakdown.py`` (where a move's
time goes, flat cost late in a game), ``floors.py`` (what the HTTP server and the
Maildir cost before pbm's code) and ``engines.py``; ``workers.py`` runs
the reply path on gunicorn with several worker processes.

A figure, not a pass/fail test. Options: --clients, --games, --size.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import http.client
import json
import mailbox
import os
import platform
import random
import re
import shutil
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
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm.games import get_game  # noqa: E402

SCRATCH = "PBM_BENCH_SCRATCH"  # the directory every part of one `make bench` works under
POSTGRES_ADMIN = os.environ.get("PBM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


@contextlib.contextmanager
def scratch_dir():
    """A new directory for one part of the benchmark (its database, its Maildir), inside
    the run's directory (``PBM_BENCH_SCRATCH``, which ``make bench`` makes and removes;
    made here, and removed at exit, when a script runs alone). This machine's disk is
    a journal-less ext4, whose allocator skips, reading each, the inodes deleted in
    the block group in the last minutes: after another run or ``make test`` removed
    its files, a new file there cost up to 0.2 ms of CPU instead of 0.02 (perf: the
    kernel's ``recently_deleted`` and ``find_get_block_common``, up to a fifth of
    the CPU samples of a run's play), a cost of what ran before, not of pbm. So the
    run's directory spreads its parts over the disk's block groups (``spread_out``),
    each part in one nobody deleted from lately; and a part's files are removed with
    the run, not as the part ends, so that no part pays for the one before it."""
    if not os.environ.get(SCRATCH):
        os.environ[SCRATCH] = tempfile.mkdtemp(prefix="pbm-bench-")  # the scripts this one runs inherit it
        atexit.register(shutil.rmtree, os.environ[SCRATCH], ignore_errors=True)
    spread_out(os.environ[SCRATCH])
    yield tempfile.mkdtemp(dir=os.environ[SCRATCH])


def spread_out(directory: str) -> None:
    """Mark ``directory`` as the top of a hierarchy (ext4's ``chattr +T``): the
    directories made in it are each put in a block group of their own with many free
    inodes, as those at the root of the file system are, rather than beside it. A
    file system without the attribute (tmpfs), or a machine without ``chattr``,
    leaves the directory as it is."""
    with contextlib.suppress(OSError):
        subprocess.run(["chattr", "+T", directory], capture_output=True, check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mail(sender: str, to: str, subject: str, text: str = "") -> bytes:
    """A plain-text mail as a mail program writes it (ASCII headers, CRLF); written
    by hand, not by ``email.message``, since the clients share the server's cores."""
    body = (text or "").replace("\n", "\r\n")
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
            f"Message-ID: <{uuid.uuid4().hex}@bench.test>\r\nMIME-Version: 1.0\r\n"
            f"Content-Type: text/plain; charset=\"utf-8\"\r\n\r\n{body}\r\n").encode()


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its live
    children (gunicorn's workers), read from Linux's /proc."""
    total, ticks = 0.0, os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # the process ended meanwhile
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


@dataclass
class Played:
    """One benchmark run: each move's latency, the wall time of the play, and the CPU
    seconds the server (with its workers) and the clients (this process) used meanwhile."""

    latencies: list[float]
    seconds: float
    server_cpu: float = 0.0
    client_cpu: float = 0.0

    def row(self) -> str:
        """moves, moves/s, p50, p99, mean, and CPU milliseconds per move of server and clients."""
        moves, latencies = len(self.latencies), self.latencies
        return (f"{moves:>6} {moves / self.seconds:>10.1f} {percentile(latencies, 50) * 1000:>8.1f} "
                f"{percentile(latencies, 99) * 1000:>8.1f} {statistics.mean(latencies) * 1000:>8.1f} "
                f"{self.server_cpu / moves * 1000:>9.2f} {self.client_cpu / moves * 1000:>9.2f}")


HEADER = f"{'moves':>6} {'moves/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'server ms':>9} {'client ms':>9}"


class Client:
    """One HTTP/1.1 connection to the server, kept open between requests (as a
    provider's webhook client pools them); one per client thread."""

    def __init__(self, base: str):
        self.host, _, port = base.removeprefix("http://").partition(":")
        self.port = int(port)
        self.connection: http.client.HTTPConnection | None = None

    def post(self, raw: bytes) -> tuple[dict, float]:
        """POST one mail to the webhook: (the JSON answer, the seconds it took)."""
        start = time.perf_counter()
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self.connection.request("POST", "/inbound/email", body=raw,
                                        headers={"Content-Type": "message/rfc822"})
                response = self.connection.getresponse()
                answer = json.loads(response.read())
                break
            except (http.client.HTTPException, ConnectionError):  # the server closed a kept connection
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
        return answer, time.perf_counter() - start

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


BOARD_SUBJECT = re.compile(r" Board (\d+) ")


def reply_tags(maildir: str, players: set[tuple[int, str]]) -> dict[tuple[int, str], str]:
    """(board, player address) -> that player's Reply-To, read from the delivered mails;
    waits until each of ``players`` has its board mail (mail goes out after the answer)."""
    deadline = time.monotonic() + 60
    while True:
        tags = {}
        delivered = mailbox.Maildir(maildir, create=False).itervalues() if Path(maildir, "new").is_dir() else []
        for raw in delivered:
            m = message_from_bytes(raw.as_bytes(), policy=policy.default)
            board = BOARD_SUBJECT.search(str(m["Subject"]))
            if m["Reply-To"] and board:  # a board mail (the signup answer has a Reply-To too)
                tags[(int(board[1]), m["To"].addresses[0].addr_spec)] = m["Reply-To"].addresses[0].addr_spec
        if players <= tags.keys():
            return tags
        if time.monotonic() > deadline:
            raise SystemExit(f"no board mail for {sorted(players - tags.keys())} within a minute")
        time.sleep(0.05)


def play_games(base: str, maildir: str, clients: int, games: int, size: int, seed: int,
               password: bool = False, server_pid: int | None = None) -> Played:
    """Whole games by ``clients`` threads, each on its own connection: by reply mail,
    or with ``password`` by the ``move`` command with userid and password in the
    Subject. Every mail is written before the clock starts: the clients only send."""
    setup = Client(base)
    pairs = []
    for i in range(clients * games):
        a, b = f"b{i}a@bench.test", f"b{i}b@bench.test"
        setup.post(mail(a, "pbm@bench.test", f"signup b{i}a pw{i}xx"))
        setup.post(mail(b, "pbm@bench.test", f"signup b{i}b pw{i}xx"))
        answer, _ = setup.post(mail(a, "pbm@bench.test", f"greatkingdom challenge b{i}a b{i}b -size={size}"))
        pairs.append((answer["board"], a, b))
    setup.close()  # the play's clients only: the workers share connections out by how many each holds open
    tags = {} if password else reply_tags(maildir, {(board, p) for board, a, b in pairs for p in (a, b)})
    latencies: list[float] = []
    lock = threading.Lock()
    game = get_game("greatkingdom")
    rng = random.Random(seed)
    mails: dict[int, list[bytes]] = {}  # board -> its moves' mails, in order
    for board, a, b in pairs:
        state, script = game.initial_state({"size": size}), []
        while game.outcome(state) is None:
            seat, move = game.to_move(state), rng.choice(game.legal_moves(state))
            script.append(move_mail(board, (a, b)[seat], game.format_move(move), tags, password))
            state = game.apply(state, seat, move)
        mails[board] = script

    def run(worker: int):
        client = Client(base)
        for board, _, _ in pairs[worker::clients]:
            for raw in mails[board]:
                answer, seconds = client.post(raw)
                if answer["status"] != "applied":
                    raise SystemExit(f"board {board}: {answer}")
                with lock:
                    latencies.append(seconds)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    server_cpu = process_tree_cpu(server_pid) if server_pid else 0.0
    client_cpu = time.process_time()
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    return Played(latencies, seconds,
                  process_tree_cpu(server_pid) - server_cpu if server_pid else 0.0,
                  time.process_time() - client_cpu)


def move_mail(board: int, sender: str, move: str, tags: dict[tuple[int, str], str], password: bool) -> bytes:
    """A move by reply to the board mail, or with ``password`` by the move command."""
    if not password:
        return mail(sender, tags[(board, sender)], "Re: board", move)
    userid = sender.partition("@")[0]
    number = userid[1:-1]
    return mail(sender, "pbm@bench.test", f"greatkingdom move {board} {userid} pw{number}xx {move}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def upgraded_environment(database_url: str, tmp: str, root: Path | None = None) -> dict:
    """The environment of a benchmarked server on ``database_url`` (instance and
    Maildir under ``tmp``), after ``pbm db upgrade`` has made its tables; with
    ``root``, the pbm of that checkout (``python -m`` imports from its directory)."""
    env = {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_INSTANCE_PATH": tmp,
           "PBM_MAILDIR": f"{tmp}/outbox", "PBM_SERVER_ADDRESS": "pbm@bench.test", "PBM_LOG_LEVEL": "WARNING"}
    subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=env, check=True, capture_output=True,
                   cwd=root)
    return env


def serve_and_play(command: list[str], env: dict, port: int, maildir: str, args, password: bool = False,
                   cwd=None) -> Played:
    """Start the server ``command`` (listening on ``port``), wait until it answers
    ``/healthz``, play the games against it, stop it."""
    server = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        return play_games(base, maildir, args.clients, args.games, args.size, args.seed, password, server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)


def bench_backend(name: str, database_url: str, args, password: bool = False, workers: int = 1,
                  root: Path | None = None, python: str = sys.executable) -> Played:
    """One line: ``pbm serve`` (with ``workers`` web worker processes; with ``root``,
    the pbm of that checkout; run by the interpreter ``python``) on a fresh
    ``database_url``, the games played against it."""
    with scratch_dir() as tmp:
        env = upgraded_environment(database_url, tmp, root)
        port = free_port()
        played = serve_and_play(
            [python, "-m", "pbm.cli", "serve", "--port", str(port), "--threads",
             str(max(8, args.clients * 2)), "--workers", str(workers)], env, port, f"{tmp}/outbox", args, password,
            cwd=root)
    label = f"{name}{f' {workers} workers' if workers > 1 else ''}{' +password' if password else ''}"
    print(f"{label:<26} {args.clients:>7} {played.row()}", flush=True)
    return played


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
          "latency = one move, request to committed answer; server ms and client ms = CPU per move\n"
          "of the server process (with its workers) and of the clients, which share the machine.")
    print(f"Python {platform.python_version()}, {os.path.realpath(sys.executable)} (how the interpreter was built "
          "matters: see the README's Performance)\n")
    print(f"{'backend':<26} {'clients':>7} {HEADER}")
    for password in (False, True):
        for workers in (1, 2):  # one process (the embedded default), then `pbm serve --workers 2`
            with scratch_dir() as tmp:
                bench_backend("sqlite", f"sqlite:///{tmp}/bench.sqlite3", args, password, workers)
        url, drop = postgres_database()
        if url is None:
            print(f"postgresql  (skipped: nothing answers at {POSTGRES_ADMIN})")
            continue
        try:
            bench_backend("postgresql", url, args, password)
        finally:
            drop()
        url, drop = postgres_database()  # a fresh database for the line with two workers
        try:
            bench_backend("postgresql", url, args, password, workers=2)
        finally:
            drop()
    for extra in ("breakdown.py", "floors.py", "engines.py"):
        print()
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / extra)], check=True)


if __name__ == "__main__":
    main()
