"""SQLite's counterpart of PostgreSQL's LISTEN/NOTIFY: live-page notices (channel,
payload) from the process that committed to every other process on the same
database file that serves live pages, by Unix datagrams.

Each listening process binds a datagram socket ``<pid>-<random>.sock`` in one
directory beside the database (``<database file>-live``) and hands every notice
it receives to a callback (``Listener``; ``pbm.service.events`` starts one the
first time a page of the process streams). A process that commits sends its
notices to every socket in the directory but its own (``send``), and removes the
sockets of processes that are gone (nothing bound: ECONNREFUSED).

Sending never blocks and never fails a commit: datagrams that find their
receiver's queue full (Linux queues 10 a socket, ``net.unix.max_dgram_qlen``) go
to this process's late sender, a thread that waits up to LATE_SECONDS for the
receiver to make room (and sends that receiver's later notices after them, in
order); only then, or beyond LATE_MOST waiting, are they dropped and logged at
debug level. A page compares its version with the database whenever its stream
reconnects, at least every 25 seconds (``pbm.web.live``).
A listener whose socket file was removed binds a new one and says so (``on_gap``),
since notices sent meanwhile were lost. Linux only (as ``pbm serve --workers`` is).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import secrets
import socket
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

DATAGRAM_BYTES = 32_768  # notices are packed into datagrams of at most this size; one notice is < 8,000 bytes
SUN_PATH_BYTES = 107  # the longest socket path sockaddr_un holds (108 with the final NUL)
CHECK_SECONDS = 1.0  # how often a listener looks up from its socket (to stop, or to find its file gone)
LATE_SECONDS = 2.0  # how long the late sender waits for a full queue to make room
LATE_MOST = 1000  # hand-overs the late sender holds at most

_state: dict = {}  # this process's sending socket and directory descriptors
_state_lock = threading.Lock()


def _per_process(key: str, make: Callable[[], object]):
    """This process's ``key``, made by ``make`` the first time; a forked child makes
    its own (a socket shared with the parent would mix up their sends)."""
    with _state_lock:
        if _state.get("pid") != os.getpid():
            _state.clear()
            _state["pid"] = os.getpid()
        if key not in _state:
            _state[key] = make()
        return _state[key]


def address(directory: Path, name: str) -> str:
    """The path to bind or send to for socket ``name`` in ``directory``: the plain path
    when it fits sockaddr_un, otherwise the same file reached through a descriptor of
    the directory (``/proc/self/fd/N/name``), which always fits."""
    path = os.path.join(directory, name)
    if len(os.fsencode(path)) <= SUN_PATH_BYTES:
        return path
    held = _per_process(f"directory {directory}",
                        lambda: os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
    return f"/proc/self/fd/{held}/{name}"


def datagrams(notices: list[tuple[str, str]]) -> list[bytes]:
    """The notices as JSON lists of [channel, payload] pairs, as few datagrams as
    fit DATAGRAM_BYTES each (one for an ordinary commit)."""
    out, batch, size = [], [], 2
    for notice in notices:
        length = len(json.dumps(notice).encode()) + 1
        if batch and size + length > DATAGRAM_BYTES:
            out.append(json.dumps(batch).encode())
            batch, size = [], 2
        batch.append(notice)
        size += length
    if batch:
        out.append(json.dumps(batch).encode())
    return out


def _sending_socket() -> socket.socket:
    sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sender.setblocking(False)  # a full queue drops the datagram rather than holding the commit up
    return sender


class _LateSender:
    """This process's thread for datagrams a full queue refused: it sends them
    waiting up to LATE_SECONDS on each, so a burst of commits reaches a busy
    listener a moment later instead of never. While it holds datagrams for a
    receiver, that receiver's later ones queue behind them (``behind``): notices
    arrive in the order they were sent (a seat taken twice must end with the
    second tab)."""

    def __init__(self):
        self._waiting: queue.Queue = queue.Queue(maxsize=LATE_MOST)
        self._held: dict[str, int] = {}  # receiver address -> hand-overs not yet sent
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.settimeout(LATE_SECONDS)
        threading.Thread(target=self._run, name="pbm-notify-late", daemon=True).start()

    def behind(self, target: str) -> bool:
        """Whether datagrams for ``target`` are waiting here."""
        with self._lock:
            return target in self._held

    def hand(self, target: str, datagrams: list[bytes]) -> bool:
        """Send ``datagrams`` to ``target`` from the thread; False when it holds too many already."""
        with self._lock:
            try:
                self._waiting.put_nowait((target, datagrams))
            except queue.Full:
                return False
            self._held[target] = self._held.get(target, 0) + 1
            return True

    def _run(self) -> None:
        while True:
            target, datagrams = self._waiting.get()
            try:
                for datagram in datagrams:
                    self._socket.sendto(datagram, target)
            except OSError as error:  # still full after LATE_SECONDS, or its process is gone
                log.debug("live notices for %s dropped (%s)", target, error.__class__.__name__)
            with self._lock:
                self._held[target] -= 1
                if not self._held[target]:
                    del self._held[target]


def send(directory: Path, notices: list[tuple[str, str]], own: str | None = None) -> int:
    """Send ``notices`` to every listener in ``directory`` except the socket named
    ``own``, without ever blocking; returns how many listeners got them at once
    (a listener whose queue is full gets them from the late sender)."""
    return send_to(directory, listeners(directory, own), notices)


def listeners(directory: Path, own: str | None = None) -> list[str]:
    """The names of the sockets listening in ``directory``, but ``own``; none when the
    directory is missing (nobody listens)."""
    try:
        return [name for name in os.listdir(directory) if name.endswith(".sock") and name != own]
    except OSError:
        return []


def send_to(directory: Path, names: list[str], notices: list[tuple[str, str]]) -> int:
    """``send`` to the listeners ``names`` of ``directory``."""
    if not names:
        return 0
    try:
        sender = _per_process("sender", _sending_socket)
    except OSError as error:  # out of descriptors: the pages catch up when they reconnect
        log.debug("live notices not sent (%s)", error.strerror)
        return 0
    packed, reached = datagrams(notices), 0
    late: _LateSender = _per_process("late", _LateSender)
    for name in names:
        target, sent = address(directory, name), 0
        if not late.behind(target):  # else its notices wait behind those held for it
            try:
                for datagram in packed:
                    sender.sendto(datagram, target)
                    sent += 1
                reached += 1
                continue
            except BlockingIOError:  # its queue is full: the rest go late
                pass
            except (ConnectionRefusedError, FileNotFoundError):  # its process is gone
                try:
                    os.unlink(os.path.join(directory, name))
                except OSError:
                    pass
                continue
            except OSError as error:
                log.debug("live notices for %s not sent (%s)", name, error.strerror)
                continue
        if not late.hand(target, packed[sent:]):
            log.debug("live notices for %s dropped: %d hand-overs wait already", name, LATE_MOST)
    return reached


class Listener(threading.Thread):
    """Binds this process's socket in ``directory`` and calls ``on_notice(channel,
    payload)`` for every notice received; binds again (and calls ``on_gap``) when
    its socket file disappears, and retries with a growing pause when it cannot bind."""

    def __init__(self, directory: Path, on_notice: Callable[[str, str], None], on_gap: Callable[[], None]):
        super().__init__(name="pbm-listen-sqlite", daemon=True)
        self.directory = directory
        self.socket_name = f"{os.getpid()}-{secrets.token_hex(4)}.sock"
        self.on_notice, self.on_gap = on_notice, on_gap
        self.listening = threading.Event()
        self.stopping = threading.Event()

    def run(self) -> None:
        delay, bound_before = 0.5, False
        while not self.stopping.is_set():
            try:
                with self._bind() as receiver:
                    identity = os.stat(os.path.join(self.directory, self.socket_name)).st_ino
                    self.listening.set()
                    if bound_before:
                        self.on_gap()
                    delay, bound_before = 0.5, True
                    self._receive(receiver, identity)
            except OSError as error:
                log.warning("live updates: cannot listen in %s (%s); retrying in %g s",
                            self.directory, error.strerror, delay)
                self.stopping.wait(delay)
                delay = min(delay * 2, 10.0)
            finally:
                self.listening.clear()
        self._remove()

    def _bind(self) -> socket.socket:
        self.directory.mkdir(exist_ok=True)
        self._remove()
        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            receiver.bind(address(self.directory, self.socket_name))
        except OSError:
            receiver.close()
            raise
        receiver.settimeout(CHECK_SECONDS)
        return receiver

    def _receive(self, receiver: socket.socket, identity: int) -> None:
        """Hand on what comes until told to stop or the socket file is gone or replaced."""
        while not self.stopping.is_set():
            try:
                datagram = receiver.recv(DATAGRAM_BYTES + 1024)
            except TimeoutError:
                try:
                    if os.stat(os.path.join(self.directory, self.socket_name)).st_ino == identity:
                        continue
                except FileNotFoundError:
                    pass
                log.warning("live updates: the socket %s was removed; listening again", self.socket_name)
                return
            try:
                notices = [(str(channel), str(payload)) for channel, payload in json.loads(datagram)]
            except (ValueError, TypeError):
                log.warning("dropped a malformed live datagram: %.200r", datagram)
                continue
            for channel, payload in notices:
                self.on_notice(channel, payload)

    def _remove(self) -> None:
        try:
            os.unlink(os.path.join(self.directory, self.socket_name))
        except FileNotFoundError:
            pass
