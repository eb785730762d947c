"""Where the time of one move goes, and whether a move costs the same late in a game.

Part of ``make bench``. Everything runs in this process, one request at a time,
through the Flask test client (``POST /inbound/email``, the same view the
server runs), so the figures are about the code, not the machine's other load:

- a per-move breakdown of a reply move: each stage's own time (exclusive: the
  time spent in a stage's callees that are stages themselves counts for them),
  plus deterministic counts per move: SQL statements, Python function calls
  (cProfile) and bytes of mail written;
- the flat-cost figures: a 19x19 Go reply move, a board page and a ``show #n``
  mail on a board at move 10 and on one at move 300, in CPU time, the two
  measured alternately (``flat_cost``).

Run: ``.venv/bin/python benchmarks/breakdown.py [--moves 200] [--database URL] [--only breakdown|flat]``.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import pstats
import random
import statistics
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import event

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm import db, migrate, writer_lock  # noqa: E402
from pbm import courier  # noqa: E402
from pbm.games import get_game  # noqa: E402
from pbm.web import create_app  # noqa: E402
from run import mail, scratch_dir  # noqa: E402  (the throughput benchmark beside this file)

SERVER = "pbm@bench.test"


class Stages:
    """Exclusive wall time per stage: entering a stage pauses the one it was called from.
    Only the thread that made it is timed: the delivery thread writes the marks "sent"
    itself when no commit carries them within ``courier.MARK_WAIT_SECONDS`` (a slow
    move), and its statements must not enter the measured thread's stages."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.stack: list[tuple[str, float]] = []
        self.thread = threading.get_ident()

    def enter(self, stage: str) -> None:
        if threading.get_ident() != self.thread:
            return
        now = time.perf_counter()
        if self.stack:
            outer, since = self.stack[-1]
            self.seconds[outer] = self.seconds.get(outer, 0.0) + now - since
        self.stack.append((stage, now))

    def leave(self) -> None:
        if threading.get_ident() != self.thread:
            return
        now = time.perf_counter()
        stage, since = self.stack.pop()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - since
        if self.stack:
            self.stack[-1] = (self.stack[-1][0], now)

    def wrap(self, owner, name: str, stage: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            self.enter(stage)
            try:
                return original(*args, **kwargs)
            finally:
                self.leave()
        setattr(owner, name, timed)


STAGE_ORDER = ("HTTP, Flask, JSON answer", "mail parsing", "password check", "unit of work (ORM, flush)",
               "command (handlers, ORM)",
               "game rules", "SQL (driver, commit)", "composing mails",
               "delivery (Maildir)")
DELIVERY = STAGE_ORDER[-1]


def instrument(app, stages: Stages, game_name: str) -> dict:
    """Put the stage timers on the hot path (at the names its callers use); returns
    the counters the SQL events fill."""
    import sqlalchemy.engine.default as default
    import pbm.service as service
    from pbm.service import inbound, letters, unit as unit_module

    counts = {"statements": 0, "locked": 0.0}
    write_lock = writer_lock.held

    @contextlib.contextmanager
    def timed_write_lock(engine):
        with write_lock(engine):
            taken = time.perf_counter()
            try:
                yield
            finally:
                counts["locked"] += time.perf_counter() - taken

    writer_lock.held = timed_write_lock  # looked up by name at each use
    engine = app.extensions["pbm"].engine

    @event.listens_for(engine, "before_cursor_execute")
    def _before(*_):
        counts["statements"] += 1
        stages.enter("SQL (driver, commit)")

    @event.listens_for(engine, "after_cursor_execute")
    def _after(*_):
        stages.leave()

    @event.listens_for(engine, "handle_error")
    def _failed(*_):
        if stages.stack and stages.stack[-1][0] == "SQL (driver, commit)":  # not when refused before it ran
            stages.leave()

    stages.wrap(default.DefaultDialect, "do_commit", "SQL (driver, commit)")
    stages.wrap(service, "parse_mail", "mail parsing")
    stages.wrap(inbound, "read", "mail parsing")
    stages.wrap(service.passwords, "precheck", "password check")
    stages.wrap(service, "run", "unit of work (ORM, flush)")
    stages.wrap(service.Service, "_seen", "unit of work (ORM, flush)")
    stages.wrap(inbound, "answer", "command (handlers, ORM)")
    for name in ("render", "compose"):
        stages.wrap(letters, name, "composing mails")
    stages.wrap(unit_module, "outgoing", "composing mails")
    stages.wrap(unit_module, "deliver_after_commit", "delivery (Maildir)")
    game_class = type(get_game(game_name))
    for name in ("apply", "parse_move", "format_move", "legal_moves", "outcome", "actors", "to_move",
                 "to_json", "from_json", "diagram", "status"):
        stages.wrap(game_class, name, "game rules")
    return counts


def make_app(tmp: str, database_url: str | None):
    """The app on a fresh database. A server delivers a commit's mails in the
    committing thread and settles them on disk in its delivery thread; here both
    happen in this thread right after the commit, so that the figures count their
    time and calls (cProfile sees one thread). Their marks "sent" are carried by the
    next move's commit, as in a server."""
    from pbm import outbox
    from pbm.mail.transport import new_transport
    from pbm.models import utcnow
    from pbm.service import unit

    def deliver_and_settle(engine, settings, rows):
        transport = new_transport(settings)
        delivered = courier.Delivered(transport, outbox.deliver_locally(transport, settings, rows), utcnow())
        courier._settle([(engine, delivered)])

    unit.deliver_after_commit = deliver_and_settle
    url = database_url or f"sqlite:///{tmp}/breakdown.sqlite3"
    migrate.upgrade(url)
    return create_app({"database_url": url, "instance_path": tmp, "maildir": f"{tmp}/outbox",
                       "mail_backend": "maildir", "server_address": SERVER,
                       "base_url": "http://bench.test", "secret_key": "bench",
                       # two players send hundreds of moves within a minute here: the hourly
                       # limit on answers would stop the answers to their show mails
                       "answers_per_hour": 1_000_000})


class Players:
    """Two accounts and their boards, driven through the webhook of one app."""

    def __init__(self, app, prefix: str):
        self.client = app.test_client()
        self.server = app.extensions["pbm"]
        self.a, self.b = f"{prefix}a", f"{prefix}b"
        for userid in (self.a, self.b):
            self.post(mail(self.address(userid), SERVER, f"signup {userid} pw-{userid}"))

    @staticmethod
    def address(userid: str) -> str:
        return f"{userid}@bench.test"

    def post(self, raw: bytes) -> dict:
        answer = self.client.post("/inbound/email", data=raw, headers={"Content-Type": "message/rfc822"})
        return answer.get_json()

    def challenge(self, game: str, options: str = "") -> tuple[int, dict[int, str]]:
        answer = self.post(mail(self.address(self.a), SERVER, f"{game} challenge {self.a} {self.b} {options}"))
        board = answer["board"]
        from pbm.db import reading
        from pbm.models import Board
        with reading(self.server.engine) as session:
            row = session.get(Board, board)
            tokens = {0: row.token0, 1: row.token1}
        return board, {seat: f"pbm+{board}.{token}@bench.test" for seat, token in tokens.items()}

    def reply_mail(self, tags: dict[int, str], seat: int, move: str) -> bytes:
        """The mail of ``seat``'s reply to its board mail, playing ``move``."""
        return mail(self.address((self.a, self.b)[seat]), tags[seat], "Re: board", move)

    def send_reply(self, board: int, raw: bytes) -> dict:
        """Post a reply move written by ``reply_mail``; it must be applied."""
        answer = self.post(raw)
        if answer["status"] != "applied":
            raise SystemExit(f"board {board}: {raw!r}: {answer}")
        return answer

    def reply(self, board: int, tags: dict[int, str], seat: int, move: str) -> dict:
        return self.send_reply(board, self.reply_mail(tags, seat, move))


def scripted_game(game_name: str, options: dict, moves: int, seed: int) -> list[tuple[int, str]]:
    """(seat, move) for ``moves`` random legal moves (fewer if the game ends); Go avoids passing."""
    game = get_game(game_name)
    rng = random.Random(seed)
    state, script = game.initial_state(game.parse_options(options)), []
    while game.outcome(state) is None and len(script) < moves:
        seat = game.to_move(state)
        legal = [m for m in game.legal_moves(state) if m != "pass"] or game.legal_moves(state)
        move = rng.choice(legal)
        script.append((seat, game.format_move(move)))
        state = game.apply(state, seat, move)
    return script


def breakdown(database_url: str | None, moves: int) -> None:
    """Play ``moves`` Great Kingdom reply moves with the stage timers and print them per move."""
    with scratch_dir() as tmp:
        app = make_app(tmp, database_url)
        players = Players(app, "p")
        boards = []
        while sum(len(s) for _, _, s in boards) < moves:
            board, tags = players.challenge("greatkingdom", "-size=9")
            boards.append((board, tags, scripted_game("greatkingdom", {"size": "9"}, 200, board)))
        stages = Stages()
        counts = instrument(app, stages, "greatkingdom")
        profile = cProfile.Profile()
        played, outbox = 0, Path(tmp, "outbox")
        start = time.perf_counter()
        stages.enter("HTTP, Flask, JSON answer")
        profiled = 0
        for board, tags, script in boards:
            for seat, move in script[:moves - played]:
                raw = players.reply_mail(tags, seat, move)  # the client's work, not the server's
                if played % 10 == 0:  # count calls on every tenth move (cProfile slows what it sees)
                    profile.enable()
                    players.send_reply(board, raw)
                    profile.disable()
                    profiled += 1
                else:
                    players.send_reply(board, raw)
                played += 1
        stages.leave()
        total = time.perf_counter() - start
        calls = pstats.Stats(profile).total_calls
        written = sum(f.stat().st_size for f in outbox.rglob("*") if f.is_file())
        assert courier.wait_for_deliveries(30)  # the last marks "sent", which no commit carried
        app.extensions["pbm"].engine.dispose()
    backend = "postgresql" if database_url else "sqlite"
    print(f"Where a reply move's time goes ({backend}, {played} Great Kingdom 9x9 moves in one thread, "
          "in-process through the webhook view; each stage's own time):")
    for stage in STAGE_ORDER:
        seconds = stages.seconds.get(stage, 0.0)
        print(f"  {stage:<28} {seconds / played * 1000:>7.3f} ms  {seconds / total:>5.0%}")
    print(f"  {'total':<28} {total / played * 1000:>7.3f} ms")
    answered = total - stages.seconds.get(DELIVERY, 0.0)
    print(f"  {'... before the answer':<28} {answered / played * 1000:>7.3f} ms  (the server delivers after "
          "answering, in its delivery thread)")
    print(f"  {'write lock held':<28} {counts['locked'] / played * 1000:>7.3f} ms  {counts['locked'] / total:>5.0%}"
          "  (SQLite: what other writers wait for; the rest is worked out side by side)")
    print(f"  per move: {counts['statements'] / played:.1f} SQL statements, "
          f"{calls / profiled:,.0f} Python function calls, {written / played / 1024:.1f} KiB of mail written")


def flat_cost(database_url: str | None, repeat: int) -> None:
    """A 19x19 Go reply move, a board page and a ``show #n`` early and late in a game:
    two boards of the same game, one at move 10 and one at move 300, measured
    alternately (a drift of the machine's speed meets both alike); each figure is
    the median of ``repeat`` of this process's CPU time (what the code costs; the
    wall time adds the disk's flushes and the VM's pauses)."""
    marks = (10, 300)
    with scratch_dir() as tmp:
        app = make_app(tmp, database_url)
        players = Players(app, "g")
        # each board: warmed with one pair, then `repeat` pairs, then one counted
        script = scripted_game("go", {"size": "19"}, max(marks) - 1 + 2 * (repeat + 2), seed=7)
        page = app.test_client()
        games = {}
        for mark in marks:  # each board played up to just before its measured move
            board, tags = players.challenge("go", "-size=19")
            for seat, move in script[:mark - 1]:
                players.reply(board, tags, seat, move)
            games[mark] = [board, tags, mark - 1]

        def reply_pair(mark: int) -> None:
            """The measured move on the board of ``mark``, then the other player's answer."""
            board, tags, played = games[mark]
            for seat, move in script[played:played + 2]:
                players.reply(board, tags, seat, move)
            games[mark][2] = played + 2

        def show(mark: int) -> None:
            board, _, played = games[mark]
            players.post(mail(players.address(players.a), SERVER, f"show {board}#{played}"))

        actions = {"reply move": reply_pair, "board page": lambda mark: page.get(f"/games/{games[mark][0]}"),
                   "show #n mail": show}
        figures = {}
        for name, action in actions.items():
            for mark in marks:  # warm: templates compiled, caches filled
                action(mark)
            seconds: dict[int, list[float]] = {mark: [] for mark in marks}
            for _ in range(repeat):
                for mark in marks:
                    start = time.process_time()
                    action(mark)
                    seconds[mark].append(time.process_time() - start)
            figures[name] = {mark: (statistics.median(seconds[mark]), calls(lambda: action(mark))) for mark in marks}
        assert courier.wait_for_deliveries(30)  # the last marks "sent", which no commit carried
        app.extensions["pbm"].engine.dispose()
    print(f"Flat cost, 19x19 Go, in-process: median CPU time of {repeat}, measured alternately on a board at "
          "move 10 and one at move 300, and Python function calls (a reply move: the move and the other "
          "player's answer; show #n: the position of the last move)")
    for name, at in figures.items():
        (early, early_calls), (late, late_calls) = at[10], at[300]
        print(f"  {name:<14} {early * 1000:>7.2f} ms {late * 1000:>7.2f} ms {late / early:>5.2f}x   "
              f"{early_calls:>7,} calls {late_calls:>7,} calls {late_calls / early_calls:>5.2f}x")


def calls(action) -> int:
    profile = cProfile.Profile()
    profile.runcall(action)
    return pstats.Stats(profile).total_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--database", default=None, help="a PostgreSQL URL (default: a fresh SQLite file)")
    parser.add_argument("--only", choices=("breakdown", "flat"), default=None)
    args = parser.parse_args()
    if args.only != "flat":
        breakdown(args.database, args.moves)
    if args.only != "breakdown":
        flat_cost(args.database, args.repeat)


if __name__ == "__main__":
    main()
