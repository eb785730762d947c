"""``kill -9`` under load: a real ``pbm serve`` process, players replying to their board
mails through the webhook on several boards at once, the process killed mid-load and
started again. Every move the server acknowledged (HTTP 200, "applied") is in the
log, the log has no gaps, ``pbm db rebuild`` finds every board's cached state equal to
its log replayed, and play goes on from where the log stands."""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest
from sqlmodel import select

from pbm.db import reading
from pbm.games import get_game
from pbm.models import Board, MoveRecord, Player

from .conftest import Outbox, free_port, make_mail, wait_until
from .test_relay_failures import engine  # noqa: F401 (a fixture: the test's own engine on the database)

BOARDS = 4  # boards played at once, one client each
MOVES_BEFORE_KILL = 30  # acknowledged moves, over all boards, before the kill
GAME = get_game("greatkingdom")


@dataclass(frozen=True)
class Acknowledged:
    board_id: int
    number: int
    move: str


class Server:
    """``pbm serve`` as a process, on fresh ports each time it starts."""

    def __init__(self, env: dict):
        self.env, self.process, self.base = env, None, ""

    def start(self) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--smtp-port", str(free_port())],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: urllib.request.urlopen(self.base + "/healthz", timeout=2), "pbm serve to start", 60)

    def post(self, raw: bytes) -> dict:
        """Post a mail to the webhook; the answer's JSON (HTTP 200 only)."""
        request = urllib.request.Request(self.base + "/inbound/email", data=raw,
                                         headers={"Content-Type": "message/rfc822"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer)

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no handler runs, nothing is flushed
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def pbm(*args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbm.cli", *args], env=env, capture_output=True, timeout=120)


@pytest.fixture
def env(database_url, tmp_path):
    return {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_INSTANCE_PATH": str(tmp_path / "instance"),
            "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_BASE_URL": "http://pbm.test",
            "PBM_LOG_LEVEL": "WARNING"}


@pytest.fixture
def server(env):
    server = Server(env)
    yield server
    server.stop()


def start_boards(server: Server, maildir: str) -> dict[tuple[int, str], str]:
    """Sign up players and start the boards; the Reply-To of each player's board mail."""
    for n in range(2 * BOARDS):
        assert server.post(make_mail(f"p{n}@players.test", f"signup p{n} pw{n}pw"))["status"] == "applied"
    for n in range(BOARDS):
        result = server.post(make_mail(f"p{2 * n}@players.test", f"greatkingdom challenge p{2 * n} p{2 * n + 1}"))
        assert result["status"] == "applied"

    def every_tag() -> dict[tuple[int, str], str] | None:
        tags = {(int(mail["Subject"].split()[3]), mail["To"].addresses[0].addr_spec): str(mail["Reply-To"])
                for mail in Outbox(maildir).all() if mail["Subject"].startswith("Great Kingdom Board")}
        return tags if len(tags) == 2 * BOARDS else None
    return wait_until(every_tag, "every player's board mail (delivered after the answer)", 60)


def next_reply(engine, reply_tags: dict, board_id: int, rng: random.Random) -> tuple[Acknowledged, bytes] | None:
    """The next move on this board (a random legal one, no pass or resign) and the reply
    mail that makes it, from the seat to move; None when the game is over."""
    with reading(engine) as session:
        board = session.get(Board, board_id)
        if board.status != "active":
            return None
        address = session.get(Player, board.player_id(board.to_move)).email
        state = GAME.from_json(board.state)
        moves = sorted(text for text in map(GAME.format_move, GAME.legal_moves(state))
                       if text not in ("pass", "resign"))
        if not moves:
            return None
        move = Acknowledged(board.id, board.move_count + 1, rng.choice(moves))
        return move, make_mail(address, f"Re: Great Kingdom Board {board.id}", move.move,
                               to=reply_tags[board.id, address])


def play(server: Server, engine, reply_tags: dict, board_id: int, acknowledged: list[Acknowledged],
         refused: list[dict]) -> None:
    """Reply on one board, move after move, until the game ends or the server dies."""
    rng = random.Random(board_id)
    while (reply := next_reply(engine, reply_tags, board_id, rng)) is not None:
        move, raw = reply
        try:
            result = server.post(raw)
        except (OSError, urllib.error.URLError, http.client.HTTPException):  # killed before answering in full
            return
        if result["status"] != "applied":
            refused.append(result)
            return
        acknowledged.append(move)


def test_kill_9_under_load_loses_no_acknowledged_move(env, server, engine):
    assert pbm("db", "upgrade", env=env).returncode == 0
    server.start()
    reply_tags = start_boards(server, os.path.join(env["PBM_INSTANCE_PATH"], "outbox"))
    with reading(engine) as session:
        board_ids = session.exec(select(Board.id).order_by(Board.id)).all()
    assert len(board_ids) == BOARDS

    acknowledged: list[Acknowledged] = []
    refused: list[dict] = []  # a legal move refused would be a failure of its own
    clients = [threading.Thread(target=play, args=(server, engine, reply_tags, board_id, acknowledged, refused))
               for board_id in board_ids]
    for client in clients:
        client.start()
    wait_until(lambda: len(acknowledged) >= MOVES_BEFORE_KILL, f"{MOVES_BEFORE_KILL} acknowledged moves", 120)
    server.kill()
    for client in clients:
        client.join(timeout=120)
    assert not any(client.is_alive() for client in clients) and refused == []

    server.start()  # the database recovers from whatever the kill left
    with reading(engine) as session:
        log = {(m.board_id, m.number): m.text for m in session.exec(select(MoveRecord)).all()}
        counts = {b.id: b.move_count for b in session.exec(select(Board)).all()}
    for ack in acknowledged:
        assert log.get((ack.board_id, ack.number), "").upper() == ack.move.upper(), ack
    for board_id, count in counts.items():  # no gaps: numbers 1..move_count
        assert sorted(n for b, n in log if b == board_id) == list(range(1, count + 1))
    assert len(log) >= len(acknowledged)

    # Play goes on from the log: one more move on every board still active.
    for board_id in board_ids:
        if (reply := next_reply(engine, reply_tags, board_id, random.Random(0))) is not None:
            assert server.post(reply[1])["status"] == "applied"
    server.stop()

    rebuild = pbm("db", "rebuild", env=env)
    assert rebuild.returncode == 0, rebuild.stderr.decode()
    assert rebuild.stdout.decode().splitlines() == ["rebuild done: 0 board(s) differed from their move log"]
