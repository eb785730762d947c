"""The production web tier: gunicorn with ``deploy/gunicorn.conf.py``, several
worker processes on PostgreSQL. A move mailed to the webhook of one worker
reaches a live page whose event stream another worker serves (NOTIFY in the
move's transaction, LISTEN in every worker); a worker stopping at once tells
its open pages to reconnect."""

from __future__ import annotations

import logging
import os
import re
import runpy
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pbm.config import load_settings
from pbm.service import Service

from .browser import ALICE, Site
from .conftest import free_port, wait_until
from .test_live import EventStream, webhook

ROOT = Path(__file__).resolve().parents[1]
# gunicorn's default pre_request hook logs each request at debug level; the
# error log names the worker process: "[pid] [DEBUG] GET /path".
REQUEST_LINE = re.compile(r"\[(\d+)\] \[DEBUG\] (GET|POST) (\S+)")


class Gunicorn:
    """``gunicorn -c deploy/gunicorn.conf.py 'pbm:create_app()'`` with ``workers``
    workers, each taking one connection at a time (so while one holds an open
    event stream, the next request must go to another); its log is read as it comes."""

    def __init__(self, directory: Path, database_url: str, workers: int, settings: dict | None = None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_INSTANCE_PATH": str(directory / "instance"),
               "PBM_MAILDIR": str(directory / "maildir"), "PBM_SERVER_ADDRESS": "pbm@pbm.test",
               "PBM_BASE_URL": self.base, "PBM_LOG_LEVEL": "WARNING", **(settings or {})}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--worker-connections", "1", "--log-level", "debug", "pbm:create_app()"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        wait_until(lambda: len(self.workers()) == workers, f"gunicorn to boot {workers} workers")
        wait_until(lambda: urllib.request.urlopen(self.base + "/healthz", timeout=2).read(), "gunicorn to answer")

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    def workers(self) -> set[int]:
        return {int(m.group(1)) for line in self.lines if (m := re.search(r"Booting worker with pid: (\d+)", line))}

    def served(self, method: str, path: str) -> list[int]:
        """The workers that took requests for ``method path``, in order."""
        return [int(m.group(1)) for line in self.lines
                if (m := REQUEST_LINE.search(line)) and m.group(2) == method and m.group(3) == path]

    def stop(self) -> None:
        """Quick shutdown (SIGINT): the workers end their open streams at once."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        self.reader.join(10)


def test_a_move_through_one_worker_reaches_a_page_streamed_by_another(database_url, tmp_path):
    if not database_url.startswith("postgresql"):
        pytest.skip("several web processes share a database only on PostgreSQL")
    service = Service(load_settings({"database_url": database_url, "instance_path": str(tmp_path / "setup"),
                                     "server_address": "pbm@pbm.test"}))
    server = Gunicorn(tmp_path, database_url, workers=2)
    try:
        site = Site(server.base, service)
        board = site.board("greatkingdom")
        events = f"/games/{board.id}/events"
        before = site.version(board)
        stream = EventStream(server.base, f"{events}?known={before}")
        try:
            assert stream.status == 200
            assert stream.next_event(0.5) is None
            streaming = wait_until(lambda: server.served("GET", events), "the stream's worker in the log")[0]
            started = time.monotonic()
            answer = webhook(server.base, ALICE, f"greatkingdom move {board.id} alice alicepw D4")
            assert answer["status"] == "applied"
            after = site.version(board)
            assert after > before and stream.next_event(2.0) == ("change", {"version": after})
            print(f"\nthe page on worker {streaming} had the move "
                  f"{1000 * (time.monotonic() - started):.0f} ms after the mail was posted")
        finally:
            stream.close()
        moving = wait_until(lambda: server.served("POST", "/inbound/email"), "the webhook's worker in the log")
        assert moving[0] != streaming and {moving[0], streaming} == server.workers()

        parting = EventStream(server.base, f"{events}?known={after}")  # a page open while the server stops
        try:
            assert parting.next_event(0.5) is None
            server.stop()
            assert parting.next_event(5.0) == ("resync", {})  # the page reconnects, to a running worker
        finally:
            parting.close()
    finally:
        server.stop()
        service.engine.dispose()


def test_gunicorn_with_a_setting_pbm_cannot_use_stops_with_its_sentence(tmp_path):
    env = {**os.environ, "PBM_INSTANCE_PATH": str(tmp_path / "instance"), "PBM_SMTP_PORT": "abc"}
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--bind", f"127.0.0.1:{free_port()}",
         "pbm:create_app()"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 78  # EX_CONFIG, as the pbm command: a service manager need not restart it
    assert ("pbm (gunicorn): PBM_SMTP_PORT must be a whole number from 1 to 65535, not 'abc' (set in the "
            "environment).") in result.stderr
    assert "Traceback" not in result.stderr


def test_behind_the_trusted_proxy_each_client_counts_as_itself(database_url, tmp_path):
    """gunicorn gives the app the proxy's address: with PBM_TRUSTED_PROXY the app takes
    the client's from that peer's X-Forwarded-For (and the scheme: Secure cookies), so
    one client's spent quota on /new is not every client's."""
    from .test_cli import through_proxy

    server = Gunicorn(tmp_path, database_url, workers=1,
                      settings={"PBM_TRUSTED_PROXY": "127.0.0.1", "PBM_NEW_GAMES_PER_HOUR": "1"})
    try:
        status, headers = through_proxy(server.base, "/new", "203.0.113.5")
        assert status == 200 and "; Secure" in headers["Set-Cookie"]
        game = {"game": "go", "mode": "same-device"}
        assert through_proxy(server.base, "/new", "203.0.113.5", game)[0] == 303
        assert through_proxy(server.base, "/new", "203.0.113.5", game)[0] == 429
        assert through_proxy(server.base, "/new", "203.0.113.6", game)[0] == 303
    finally:
        server.stop()


def test_the_access_log_leaves_out_the_secrets_of_private_links(database_url, tmp_path):
    """A play page's token is also its seat's reply tag: gunicorn's access log, which
    an operator keeps and ships, shows the path without it."""
    server = Gunicorn(tmp_path, database_url, workers=1)
    try:
        for path in ("/play/k3J9xSecretToken", "/play/k3J9xSecretToken/events", "/join/Inv1teSecret"):
            try:
                urllib.request.urlopen(server.base + path, timeout=10).close()
            except urllib.error.HTTPError as refused:  # no such seat: 404, logged all the same
                assert refused.code == 404
        wait_until(lambda: any('"GET /join/' in line for line in server.lines), "the access log's lines")
    finally:
        server.stop()
    access = [line for line in server.lines if '"GET /' in line]
    assert any('"GET /play/... HTTP/1.1"' in line for line in access)
    assert any('"GET /play/.../events HTTP/1.1"' in line for line in access)
    assert not any("SecretToken" in line or "Inv1teSecret" in line for line in access)


def test_the_error_log_leaves_out_the_secrets_of_private_links(database_url, tmp_path):
    """gunicorn's error log names paths too: at debug level each request ("GET /play/<token>"),
    and at any level a request it could not read ("Invalid HTTP request line: ...") or one
    that failed ("Error handling request /play/<token>/events"); none of them shows the secret."""
    server = Gunicorn(tmp_path, database_url, workers=1)
    try:
        try:
            urllib.request.urlopen(server.base + "/play/k3J9xSecretToken", timeout=10).close()
        except urllib.error.HTTPError as refused:
            assert refused.code == 404
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:  # a control character in it
            raw.sendall(b"GET /join/Inv1teSecret\x7f HTTP/1.1\r\nHost: x\r\n\r\n")
            assert raw.recv(100).startswith(b"HTTP/1.1 400")
        wait_until(lambda: any("Invalid HTTP request line" in line for line in server.lines),
                   "the refused request in the error log")
    finally:
        server.stop()
    assert any("[DEBUG] GET /play/..." in line for line in server.lines)
    assert not any("SecretToken" in line or "Inv1teSecret" in line for line in server.lines)


def test_a_failure_in_the_error_log_names_no_private_link_in_its_traceback():
    """The record of a request that failed carries its traceback, whose exception may name the path."""
    conf = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))
    try:
        raise RuntimeError("stream of /play/k3J9xSecretToken/events broke")
    except RuntimeError:
        record = logging.LogRecord("gunicorn.error", logging.ERROR, __file__, 1, "Error handling request %s",
                                   ("/play/k3J9xSecretToken/events",), sys.exc_info())
    assert conf["PrivateLinksFilter"]().filter(record)
    shown = logging.Formatter().format(record)
    assert "Error handling request /play/.../events" in shown and "stream of /play/.../events broke" in shown
    assert "SecretToken" not in shown
