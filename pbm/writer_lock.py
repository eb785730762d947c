"""SQLite's one writer at a time, across threads and processes, and the checkpoint
that follows the writes.

Writers of every process on one SQLite file queue on an ``flock`` of the file
``<database file>-writer.lock`` (inside this process's thread lock), so they wake
the moment the writer before them commits instead of in SQLite's busy handler,
which polls with sleeps of up to 100 ms: the workers of ``pbm serve --workers``,
``pbm ingest``, ``pbm smtpd``, ``pbm scheduler`` and ``pbm sweep`` all write
through ``pbm.db``'s transactions, which hold this lock (``held``). Each wait lasts
at most WRITER_WAIT_SECONDS; a process waits for the file in one thread kept for
it. After every CHECKPOINT_WRITES of its writes a process copies the WAL into the
database file, once it has let go of the lock (``_checkpoint``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

WRITER_LOCK_SUFFIX = "-writer.lock"
WRITER_WAIT_SECONDS = 30.0  # as SQLite's busy timeout: then the door answers "try again later"
CHECKPOINT_WRITES = 50  # a process's write transactions between its checkpoints: ~1,000 pages of WAL
BACKSTOP_CHECKPOINT_PAGES = 10_000  # SQLite's own checkpoint (its default: 1,000)

log = logging.getLogger(__name__)


def set_up(engine: Engine, lock_file: Path | None) -> None:
    """Give a SQLite engine its writer lock: a thread lock for this process and the
    lock file ``lock_file`` beside the database (None for an in-memory database:
    the thread lock alone, no checkpoint)."""
    engine.pbm_writer_lock = threading.Lock()
    engine.pbm_writes = 0  # this process's write transactions on the file (``held``)
    engine.pbm_writer_lock_file = None if lock_file is None else os.fspath(lock_file)  # every write opens it
    engine.pbm_flock_waiter = None  # made at the first wait for the lock file (``_waiter``)


@contextmanager
def _writers_of_the_file(engine: Engine) -> Iterator[None]:
    """Hold the exclusive flock every process's writers of this SQLite file take
    (nothing for an in-memory database or PostgreSQL). A lock file that cannot be
    opened (a read-only directory) is done without: SQLite's own lock still orders
    the writers, only more slowly, and refuses them when the database is read-only."""
    path = getattr(engine, "pbm_writer_lock_file", None)  # made with the engine (``set_up``)
    descriptor = None
    if path is not None:
        try:  # opened afresh each time: a descriptor inherited through a fork would share the lock
            descriptor = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            log.debug("writing without the writer lock file %s (%s)", path, error.strerror)
    if descriptor is None:
        yield
        return
    try:
        _take_within(engine, descriptor, WRITER_WAIT_SECONDS, path)
    except BaseException:
        os.close(descriptor)
        raise
    try:
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _take_within(engine: Engine, descriptor: int, seconds: float, path: str) -> None:
    """Take the exclusive flock on ``descriptor``, waiting at most ``seconds`` (a
    process stopped while it holds the lock must not stop every other writer for
    ever). Uncontended: one call. Otherwise the engine's waiter thread waits in
    ``flock`` (so the lock is taken the moment it is free, with no polling); if the
    time runs out first, the waiter lets go of the lock as soon as it gets it, and
    this raises the OperationalError SQLite's own busy timeout would."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    request = _FlockRequest(os.dup(descriptor))  # the waiter's own reference: closing it never closes ours
    _waiter(engine).requests.put(request)
    if request.taken.wait(seconds):
        return
    with request.guard:
        if request.taken.is_set():
            return
        request.abandoned = True
    raise _locked(f"the writer lock {path} was held for over {seconds:g} s")


@dataclass
class _FlockRequest:
    """One writer's wait for the lock file, done by the engine's waiter thread."""

    descriptor: int
    taken: threading.Event = field(default_factory=threading.Event)
    guard: threading.Lock = field(default_factory=threading.Lock)
    abandoned: bool = False  # the writer stopped waiting: let go of the lock once it comes

    def wait_in_flock(self) -> None:
        try:
            fcntl.flock(self.descriptor, fcntl.LOCK_EX)
            with self.guard:
                if self.abandoned:
                    fcntl.flock(self.descriptor, fcntl.LOCK_UN)
                else:
                    self.taken.set()
        finally:
            os.close(self.descriptor)


class _FlockWaiter(threading.Thread):
    """The thread that waits in ``flock`` for an engine's writers in this process, one
    request at a time (they come one at a time: the thread lock is taken first; a
    request abandoned after the busy time still waits, and the next queues behind
    it). Made at the first wait and kept: a thread made for every wait cost more
    than the wait when the workers of ``pbm serve --workers`` took turns."""

    def __init__(self):
        super().__init__(name="pbm-writer-lock", daemon=True)
        self.requests: queue.SimpleQueue[_FlockRequest] = queue.SimpleQueue()
        self.pid = os.getpid()

    def run(self) -> None:
        while True:
            self.requests.get().wait_in_flock()


def _waiter(engine: Engine) -> _FlockWaiter:
    """The engine's waiter thread in this process (the caller holds the engine's thread
    lock); a forked child makes its own, as the parent's thread did not come along."""
    waiter = engine.pbm_flock_waiter
    if waiter is None or waiter.pid != os.getpid():
        waiter = engine.pbm_flock_waiter = _FlockWaiter()
        waiter.start()
    return waiter


def _locked(why: str) -> OperationalError:
    """The error SQLite's own busy timeout raises (a door answers "try again later")."""
    return OperationalError("BEGIN IMMEDIATE", None, sqlite3.OperationalError(f"database is locked: {why}"))


@contextmanager
def held(engine: Engine) -> Iterator[None]:
    """On SQLite, wait for this process's writers (a thread lock), then for those of
    every other process on the same file (an flock), and hold both; each wait lasts
    at most WRITER_WAIT_SECONDS."""
    threads = getattr(engine, "pbm_writer_lock", None)
    if threads is None:
        yield
        return
    if not threads.acquire(timeout=WRITER_WAIT_SECONDS):
        raise _locked(f"this process's writers held the lock for over {WRITER_WAIT_SECONDS:g} s")
    try:
        with _writers_of_the_file(engine):
            yield
        engine.pbm_writes += 1
        checkpoint = engine.pbm_writes % CHECKPOINT_WRITES == 0 and engine.pbm_writer_lock_file is not None
    finally:
        threads.release()
    if checkpoint:
        _checkpoint(engine)


def _checkpoint(engine: Engine) -> None:
    """Copy the WAL's committed pages into the database file (SQLite's PASSIVE
    checkpoint: it waits for no reader or writer), outside the write lock. SQLite's
    automatic one ran in the commit of every thousandth page, while the writer lock
    was held: every writer of the file waited for it, several milliseconds each time.
    A failure (a pool with no connection free within its timeout included) is
    logged and never reaches the unit that committed: the data is in the WAL, and
    the next checkpoint copies it."""
    try:
        connection = engine.raw_connection()
        try:
            cursor = connection.cursor()
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            cursor.close()
        finally:
            connection.close()
    except Exception as error:  # best effort, after a commit that stands
        log.warning("SQLite checkpoint failed: %s", error.__class__.__name__)
