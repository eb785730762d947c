"""``pbm serve --workers N`` on SQLite: N web worker processes beside one parent
that runs the scheduler and the SMTP listener; a dead worker is replaced, the
parent's stop (or death) ends every worker; a move through one worker, or by
``pbm ingest``, reaches live pages that another worker serves (datagrams between
the processes of the database file, ``pbm.service.sqlite_notify``)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from pbm.serving import ConnectionTable
from pbm.service import events, sqlite_notify

from .browser import ALICE, BOB, Site
from .conftest import Outbox, free_port, make_mail, wait_until
from .test_live import EventStream, ingest, webhook


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from Linux's /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # it ended meanwhile
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


class Served:
    """``pbm serve --workers 2`` as a process, its output read as it comes."""

    def __init__(self, directory: Path, *extra: str):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "PBM_INSTANCE_PATH": str(directory / "instance"), "PBM_LOG_LEVEL": "WARNING",
                    "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_BASE_URL": self.base,
                    "PBM_SECRET_KEY": "workers-test-key", "PBM_MAILDIR": str(directory / "maildir")}
        subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=self.env, check=True,
                       capture_output=True)
        self.process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(self.port),
                                         "--workers", "2", *extra], env=self.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True)
        self.reader.start()
        wait_until(lambda: len(self.workers()) == 2, "pbm serve to start two workers")
        wait_until(lambda: urllib.request.urlopen(self.base + "/healthz", timeout=2).read(), "pbm serve to answer")

    def workers(self) -> set[int]:
        return children(self.process.pid)

    def stop(self) -> str:
        """SIGTERM, as systemd stops it; its whole output."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        self.reader.join(10)
        return "".join(self.lines)


@pytest.fixture
def served(tmp_path):
    server = Served(tmp_path, "--smtp-port", str(free_port()))
    yield server
    server.stop()


def test_two_workers_serve_a_dead_one_is_replaced_and_the_stop_ends_them_all(served, tmp_path):
    first = served.workers()
    smtp_port = int(served.process.args[served.process.args.index("--smtp-port") + 1])
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as smtp:  # the SMTP listener runs in the parent
        smtp.sendmail(ALICE, ["pbm@pbm.test"], make_mail(ALICE, "signup alice alicepw").replace(b"\n", b"\r\n"))
    box = Outbox(str(tmp_path / "maildir"))
    wait_until(box.all, "the answer to the mail taken by SMTP")
    killed = min(first)
    os.kill(killed, signal.SIGKILL)
    wait_until(lambda: len(served.workers()) == 2 and killed not in served.workers(), "a new worker in its place")
    wait_until(lambda: urllib.request.urlopen(served.base + "/healthz", timeout=2).read(), "the workers to answer")
    last = served.workers()
    output = served.stop()
    assert served.process.returncode == 0 and "Traceback" not in output
    assert all(gone(pid) for pid in first | last)
    assert "Web workers:       2 processes" in output
    assert f"(pid {killed}) ended unexpectedly (killed by SIGKILL); starting another" in output


def test_workers_end_when_their_parent_is_killed(tmp_path):
    server = Served(tmp_path)
    workers = server.workers()
    os.kill(server.process.pid, signal.SIGKILL)
    server.stop()
    wait_until(lambda: all(gone(pid) for pid in workers), "the workers to end with their parent")


def test_a_busy_port_fails_at_once_with_two_workers(served):
    done = subprocess.run([sys.executable, "-m", "pbm.cli", "serve", "--port", str(served.port), "--workers", "2"],
                          env=served.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and f"cannot listen on 127.0.0.1:{served.port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_move_through_either_worker_or_pbm_ingest_reaches_pages_on_both(served, tmp_path):
    from pbm.config import load_settings
    from pbm.service import Service

    service = Service(load_settings({"instance_path": str(tmp_path / "instance"), "server_address": "pbm@pbm.test"}))
    streams: list[EventStream] = []
    try:
        site = Site(served.base, service)
        board = site.board("greatkingdom")
        known = site.version(board)
        live = events.live_directory(service.engine)

        def listening_workers() -> set[int]:
            return {int(name.split("-")[0]) for name in os.listdir(live)} if live.exists() else set()

        for _ in range(40):  # each connection goes to whichever worker takes it first: open pages until both serve one
            streams.append(EventStream(served.base, f"/games/{board.id}/events?known={known}"))
            assert streams[-1].status == 200  # its worker listens by the time its stream answers
            if listening_workers() == served.workers():
                break
        assert listening_workers() == served.workers()
        database_url = f"sqlite:///{tmp_path / 'instance' / 'pbm.sqlite3'}"
        moves = (lambda: webhook(served.base, ALICE, f"greatkingdom move {board.id} alice alicepw D4"),  # a worker
                 lambda: ingest(database_url, tmp_path, make_mail(BOB, f"greatkingdom move {board.id} bob bobpw C3")))
        for move in moves:
            move()
            version = site.version(board)
            for stream in streams:
                assert stream.next_event(2.0) == ("change", {"version": version})
    finally:
        for stream in streams:
            stream.close()
        service.engine.dispose()


def established(pid: int, port: int) -> int:
    """How many established TCP connections to local ``port`` process ``pid`` holds
    (its descriptors' socket inodes, looked up in Linux's /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rpartition(":")[2], 16) == port and fields[3] == "01" and fields[9] in inodes:
                count += 1
    return count


def test_kept_alive_connections_are_shared_out_evenly_between_the_workers(served):
    """Left to whichever worker wakes first, four clients were often split 3 to 1:
    a worker takes a new connection only while it holds no more than the other."""
    table = workers_table(served)
    wait_until(lambda: len(table.live()) == 2, "both workers to take connections")
    connections = []
    try:
        for _ in range(4):  # one after another, each kept open after its answer
            connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
            connection.request("GET", "/healthz")
            assert connection.getresponse().read()
            connections.append(connection)
        assert sorted(established(pid, served.port) for pid in served.workers()) == [2, 2]
        assert sorted(table.live().values()) == [2, 2]
    finally:
        for connection in connections:
            connection.close()
        table.close()


def workers_table(served) -> ConnectionTable:
    """The parent's ConnectionTable of ``served``, opened through its descriptor in /proc."""
    for fd in Path(f"/proc/{served.process.pid}/fd").iterdir():
        if os.readlink(fd).startswith("/memfd:pbm-connections"):
            return ConnectionTable(os.open(fd, os.O_RDWR))
    raise AssertionError("pbm serve --workers 2 holds no connection table")


def test_a_worker_takes_connections_while_it_holds_no_more_than_any_live_other():
    table = ConnectionTable.create(3)
    try:
        table.write(1, 2)
        table.write(2, 3)
        assert table.may_accept(0, 2)  # as few as the fewest
        assert not table.may_accept(2, 3)  # worker 0 holds 2
        assert table.may_accept(0, 1) and not table.may_accept(1, 2)
        table.clear(0)  # worker 0 ended: it counts for nobody until its successor writes
        assert table.may_accept(1, 2)
        stale = ConnectionTable.SLOT.pack_into
        stale(table.memory, 1 * ConnectionTable.SLOT.size, 0, time.monotonic() - ConnectionTable.STALE_SECONDS - 1)
        assert table.may_accept(2, 3)  # worker 1 wrote nothing for longer than STALE_SECONDS: hung or gone
    finally:
        table.close()


# -- the datagrams themselves, in this process -----------------------------------------


def test_notices_are_packed_into_few_datagrams_each_within_bounds():
    small = [("pbm_board", '{"101": 5}'), ("pbm_players", '{"101": [3, 4]}')]
    assert len(sqlite_notify.datagrams(small)) == 1
    big = events.notices({n: 2_000_000_000 for n in range(1, 2001)}, {n: (1, 2) for n in range(1, 2001)})
    packed = sqlite_notify.datagrams(big)
    assert len(packed) > 1 and all(len(d) <= sqlite_notify.DATAGRAM_BYTES for d in packed)
    assert [tuple(pair) for d in packed for pair in json.loads(d)] == big


def test_a_full_queue_never_blocks_the_sender_and_its_notices_follow_in_order(tmp_path):
    """A listener that does not read for a while (its queue holds 10 datagrams) gets
    every notice of a burst once it reads again, in the order sent; the sender
    returned at once each time. A dead socket is removed."""
    directory = tmp_path / "db.sqlite3-live"
    directory.mkdir()
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    slow.bind(str(directory / "1-slow.sock"))  # not read until the burst is over: its queue fills
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dead.bind(str(directory / "2-dead.sock"))
    dead.close()  # its process is gone; the file stays behind
    reached = [sqlite_notify.send(directory, [("pbm_board", '{"101": %d}' % n)]) for n in range(30)]
    assert reached[0] == 1 and reached[-1] == 0  # the queue filled: the rest went to the late sender
    assert sorted(os.listdir(directory)) == ["1-slow.sock"]
    slow.settimeout(10)
    heard = [json.loads(json.loads(slow.recv(65536))[0][1])["101"] for _ in range(30)]
    assert heard == list(range(30))
    slow.close()


def test_a_listener_in_a_long_directory_hears_and_listens_again_when_its_socket_is_removed(tmp_path):
    directory = tmp_path / ("x" * 120) / "pbm.sqlite3-live"  # longer than a socket address holds
    directory.parent.mkdir()
    heard, gaps = [], threading.Event()
    listener = sqlite_notify.Listener(directory, lambda c, p: heard.append((c, p)), gaps.set)
    listener.start()
    try:
        assert listener.listening.wait(10)
        assert sqlite_notify.send(directory, [("pbm_board", '{"7": 1}')]) == 1
        wait_until(lambda: heard == [("pbm_board", '{"7": 1}')], "the notice")
        os.unlink(directory / listener.socket_name)
        assert gaps.wait(10)  # bound again, and the streams are told to check the database
        wait_until(lambda: listener.socket_name in os.listdir(directory), "the socket bound again")
        assert sqlite_notify.send(directory, [("pbm_seat", '{"seat": "7:0", "tab": "t"}')]) == 1
        wait_until(lambda: heard[-1] == ("pbm_seat", '{"seat": "7:0", "tab": "t"}'), "the next notice")
    finally:
        listener.stopping.set()
        listener.join(10)
    assert os.listdir(directory) == []  # a stopped listener removes its socket


def test_a_second_stop_signal_while_stopping_waits_for_the_first():
    """Ctrl-C twice, or GNU ``timeout`` signalling the process and then its group: the
    second signal comes while the server closes (here: from inside its close) and
    must not break that off with a KeyboardInterrupt."""
    from pbm.cli_servers import _interrupt
    from pbm.serving import serve_until_stopped

    class Stopping:
        closed = False

        def run(self):
            raise KeyboardInterrupt  # the first stop signal

        def close(self):
            os.kill(os.getpid(), signal.SIGINT)  # the second, while the workers are stopped
            os.kill(os.getpid(), signal.SIGTERM)
            self.closed = True

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGTERM, _interrupt)  # as pbm serve sets it
    web = Stopping()
    try:
        serve_until_stopped(web)
    except KeyboardInterrupt:
        pytest.fail("a second stop signal broke off the stop")
    finally:
        for stop_signal, handler in handlers.items():
            signal.signal(stop_signal, handler)
    assert web.closed


def test_a_worker_told_to_stop_twice_at_once_stops_quietly(monkeypatch):
    """Ctrl-C at ``make run WORKERS=2`` reaches each worker twice at once: SIGINT from
    the terminal and SIGTERM from the parent, which stops its workers. The second is
    handled while the first's KeyboardInterrupt is on its way (before the worker
    ignores stop signals) and must not escape as another, a traceback on the terminal."""
    from pbm import serving

    stops = {signal.SIGINT, signal.SIGTERM}
    main = threading.main_thread().ident

    class Worker:
        closed = False

        def run(self):
            signal.pthread_sigmask(signal.SIG_BLOCK, stops)
            for stop_signal in sorted(stops):  # both pending at once, for this thread
                signal.pthread_kill(main, stop_signal)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
            raise AssertionError("the stop signals did not interrupt the worker")

        def close(self):
            self.closed = True

    web = Worker()
    monkeypatch.setattr(serving, "create_server", lambda app, **kwargs: web)
    monkeypatch.setattr(serving, "_follow_lifeline", lambda fd: None)
    handlers = {s: signal.getsignal(s) for s in stops}
    kept, handed = socket.socketpair()
    try:
        assert serving.run_worker(None, str(handed.detach()), -1, 1) == 0
    except KeyboardInterrupt:
        pytest.fail("the second stop signal escaped as a KeyboardInterrupt")
    finally:
        for stop_signal, handler in handlers.items():
            signal.signal(stop_signal, handler)
        kept.close()
    assert web.closed
