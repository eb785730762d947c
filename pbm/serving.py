"""``pbm serve --workers N``: the web server in N worker processes, so Python's
work of the requests (one core a process, under the GIL) spreads over the cores.

The parent binds the web sockets (a taken port fails at once, as with one
process), then starts N workers, each ``pbm serve`` again with the sockets handed
over as inherited descriptors (``--listen-fds``): a fresh interpreter that
builds its own application, so no database connection, lock or thread crosses
from the parent, which runs the scheduler and the SMTP listener threads (a bare
fork of a process with threads can leave a lock held forever in the child).
The workers accept connections from the shared sockets, the one holding the
fewest open connections first (``ConnectionTable``): left to whichever wakes
first, four kept-alive clients were split 3 to 1 or 4 to 0 about half the time,
and one core then idled while the other served three (250 moves/s instead of 350).

The parent restarts a worker that ends unexpectedly (and logs it), and on
SIGTERM or Ctrl-C stops them all before it ends. Each worker also holds the read
end of a pipe whose write end only the parent has (its *lifeline*): should the
parent die without stopping them (``kill -9``), the pipe's end reaches them and
they stop too, so no worker outlives its parent.

Live pages work across the workers: on PostgreSQL by LISTEN/NOTIFY, on a
SQLite file by datagrams between the processes (``pbm.service.sqlite_notify``);
the writers of all processes queue on one lock file (``pbm.db``).
"""

from __future__ import annotations

import logging
import mmap
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time

from waitress import create_server
from waitress.adjustments import Adjustments

log = logging.getLogger(__name__)

STOP_SECONDS = 15.0  # a stopping worker gets this long (waitress waits 5 s for its threads) before SIGKILL
QUICK_DEATH_SECONDS = 5.0  # a worker that ends sooner after its start is restarted after a pause
RESTART_PAUSE_SECONDS = 1.0  # so a worker that cannot start does not spin the parent
# waitress's options in every process: the X-Forwarded-* headers are left to the app, which
# believes those of PBM_TRUSTED_PROXY only and drops anyone else's (``pbm.web.proxied``), as under gunicorn.
WAITRESS = {"clear_untrusted_proxy_headers": False}


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to, bound as waitress
    binds them; raises OSError when one cannot be bound (the port is taken)."""
    adjustments = Adjustments(host=host, port=port)
    sockets: list[socket.socket] = []
    try:
        for family, kind, protocol, address in adjustments.listen:
            sock = socket.socket(family, kind, protocol)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(adjustments.backlog)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def describe_exit(returncode: int) -> str:
    """A worker's end in words: its exit status or the signal that ended it."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


class ConnectionTable:
    """How many connections each worker holds open, in memory that the parent and its
    workers share (a memfd, handed to each worker as ``--connections-fd``): one slot
    a worker, its count and when it last wrote it (``time.monotonic``, one clock for
    every process of the machine). A worker accepts a new connection only while it
    holds no more than any other (``may_accept``), so kept-alive connections spread
    evenly. A worker's slot is rewritten at every turn of its event loop (at least
    once a second, waitress's loop timeout); a slot not rewritten for STALE_SECONDS
    (a worker stopped, hung or not yet started) counts for nobody, so the others
    never wait for it."""

    SLOT = struct.Struct("=qd")  # count, written at
    STALE_SECONDS = 3.0

    def __init__(self, fd: int):
        """The table in the shared memory ``fd`` (its size says how many slots it holds)."""
        self.fd, self.count = fd, os.fstat(fd).st_size // self.SLOT.size
        self.memory = mmap.mmap(fd, self.SLOT.size * self.count)

    @classmethod
    def create(cls, count: int) -> "ConnectionTable":
        """A new table of ``count`` empty slots (the parent's)."""
        fd = os.memfd_create("pbm-connections", 0)  # not inherited but through pass_fds
        os.ftruncate(fd, cls.SLOT.size * count)
        return cls(fd)

    def write(self, slot: int, connections: int) -> None:
        self.SLOT.pack_into(self.memory, slot * self.SLOT.size, connections, time.monotonic())

    def clear(self, slot: int) -> None:
        """The slot of a worker that ended: it counts for nobody until its successor writes."""
        self.SLOT.pack_into(self.memory, slot * self.SLOT.size, 0, 0.0)

    def live(self) -> dict[int, int]:
        """slot -> connections, of the workers that wrote their slot within STALE_SECONDS."""
        now, found = time.monotonic(), {}
        for slot in range(self.count):
            connections, written = self.SLOT.unpack_from(self.memory, slot * self.SLOT.size)
            if now - written < self.STALE_SECONDS:
                found[slot] = connections
        return found

    def may_accept(self, slot: int, connections: int) -> bool:
        """Write this worker's ``connections``; whether it holds no more than any other live worker."""
        self.write(slot, connections)
        return all(theirs >= connections for theirs in self.live().values())

    def close(self) -> None:
        self.memory.close()
        os.close(self.fd)


def accept_in_turn(web, table: ConnectionTable, slot: int) -> None:
    """Make the waitress server ``web`` (one listening socket, or several) accept only
    while ``table`` says this worker holds the fewest connections. Its listeners'
    ``readable`` runs before every wait of its event loop, and a listener that is
    not readable is not waited on: the connection goes to a worker that is."""
    listeners = [dispatcher for dispatcher in web.map.values() if hasattr(dispatcher, "active_channels")] \
        if hasattr(web, "map") else [web]

    def in_turn(readable):
        def readable_in_turn() -> bool:
            held = sum(len(listener.active_channels) for listener in listeners)
            return table.may_accept(slot, held) and readable()
        return readable_in_turn

    for listener in listeners:
        listener.readable = in_turn(listener.readable)  # asyncore asks the instance


class Workers:
    """``count`` worker processes serving ``sockets``; ``command`` starts one (it is
    given ``--listen-fds``, ``--lifeline-fd``, ``--connections-fd`` and ``--worker-slot``).
    Used like a waitress server: ``run()`` until a KeyboardInterrupt (the parent's
    SIGTERM handler raises one), then ``close()``."""

    def __init__(self, count: int, sockets: list[socket.socket], command: list[str]):
        self.count, self.sockets, self.command = count, sockets, command
        self.lifeline, self.lifeline_end = os.pipe()  # read end for the workers, write end kept here
        self.connections = ConnectionTable.create(count)
        self.running: dict[int, tuple[subprocess.Popen, int, float]] = {}  # pidfd -> (worker, slot, started)

    def _start(self, slot: int) -> None:
        fds = [sock.fileno() for sock in self.sockets]
        worker = subprocess.Popen(
            [*self.command, "--listen-fds", ",".join(map(str, fds)), "--lifeline-fd", str(self.lifeline),
             "--connections-fd", str(self.connections.fd), "--worker-slot", str(slot)],
            pass_fds=(*fds, self.lifeline, self.connections.fd))
        self.running[os.pidfd_open(worker.pid)] = (worker, slot, time.monotonic())

    def run(self) -> None:
        """Start the workers, then restart any that ends, until interrupted."""
        for slot in range(self.count):
            self._start(slot)
        while True:
            ended, _, _ = select.select(list(self.running), [], [])  # a pidfd is readable once its process ended
            for pidfd in ended:
                worker, slot, started = self.running.pop(pidfd)
                os.close(pidfd)
                worker.wait()
                self.connections.clear(slot)
                log.warning("pbm serve: web worker %d (pid %d) ended unexpectedly (%s); starting another",
                            slot + 1, worker.pid, describe_exit(worker.returncode))
                if time.monotonic() - started < QUICK_DEATH_SECONDS:
                    time.sleep(RESTART_PAUSE_SECONDS)
                self._start(slot)

    def close(self) -> None:
        """Stop every worker (SIGTERM, then SIGKILL after STOP_SECONDS) and wait for them."""
        for worker, _, _ in self.running.values():
            worker.terminate()
        os.close(self.lifeline_end)  # any worker not yet told (one just starting) hears the lifeline end
        deadline = time.monotonic() + STOP_SECONDS
        for pidfd, (worker, _, _) in self.running.items():
            try:
                worker.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("pbm serve: web worker pid %d did not stop; killing it", worker.pid)
                worker.kill()
                worker.wait()
            os.close(pidfd)
        self.running.clear()
        os.close(self.lifeline)
        self.connections.close()
        for sock in self.sockets:
            sock.close()


def _follow_lifeline(fd: int) -> None:
    """Block until the parent's end of the lifeline closes, then stop this worker."""
    while os.read(fd, 1):
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def run_worker(app, listen_fds: str, lifeline_fd: int, threads: int, connections_fd: int = -1,
               slot: int = 0) -> int:
    """Serve ``app`` with waitress on the inherited sockets ``listen_fds`` (comma
    separated descriptors) until SIGTERM, SIGINT or the parent's end; with
    ``connections_fd``, the parent's ``ConnectionTable``, taking new connections in
    turn with the other workers as worker ``slot``."""
    from .service import events

    sockets = [socket.socket(fileno=int(fd)) for fd in listen_fds.split(",")]
    web = create_server(app, sockets=sockets, threads=threads, **WAITRESS)
    if connections_fd >= 0:
        accept_in_turn(web, ConnectionTable(connections_fd), slot)
    stopping = threading.Event()

    def interrupt(*_):
        events.reset_streams()  # open live pages end now and reconnect to a worker still running
        # Ctrl-C comes twice at once (SIGINT from the terminal, SIGTERM from the parent): the
        # second, handled before serve_until_stopped ignores stop signals, must not interrupt the stop.
        if not stopping.is_set():
            stopping.set()
            raise KeyboardInterrupt

    for stop_signal in (signal.SIGTERM, signal.SIGINT):  # the parent's stop, and Ctrl-C at its terminal
        signal.signal(stop_signal, interrupt)
    threading.Thread(target=_follow_lifeline, args=(lifeline_fd,), name="pbm-lifeline", daemon=True).start()
    serve_until_stopped(web)
    return 0


def serve_until_stopped(web) -> None:
    """Run the server ``web`` (waitress, or ``Workers``) until Ctrl-C or a stop
    signal turned into KeyboardInterrupt, then close it. From then on this process
    ignores stop signals: a second one (Ctrl-C twice, GNU ``timeout`` signalling the
    process and then its group) would break off the orderly stop it asked for."""
    try:
        web.run()
    except KeyboardInterrupt:
        pass
    finally:
        if threading.current_thread() is threading.main_thread():  # where signal handlers are set
            for stop_signal in (signal.SIGTERM, signal.SIGINT):
                signal.signal(stop_signal, signal.SIG_IGN)
        web.close()
