"""Engine and transaction setup for SQLite (embedded default) and PostgreSQL.

SQLite: WAL, a busy timeout, foreign keys on, and every write transaction
begins with ``BEGIN IMMEDIATE`` so a read-then-write transaction can never
fail with "database is locked"; it waits for the lock instead.
``synchronous=NORMAL`` in WAL mode survives a crash of the process (not a
power loss); set ``PBM_DATABASE_URL`` to PostgreSQL for full durability.

Writers of every process on one SQLite file queue on an ``flock`` of the file
``<database file>-writer.lock`` (inside this process's thread lock), so they wake
the moment the writer before them commits instead of in SQLite's busy handler,
which polls with sleeps of up to 100 ms: the workers of ``pbm serve --workers``,
``pbm ingest``, ``pbm smtpd``, ``pbm scheduler`` and ``pbm sweep`` all write
through ``transaction``.

A mail's unit of work on SQLite is *optimistic* (``transaction(optimistic=True)``):
it reads and works out everything (the move, its board mails) without the write
lock, and takes the lock only to write, where the board's version check says
whether the board changed meanwhile; if it did, or if the work failed in any
way (its reads may straddle another commit), the unit runs again under the
lock. So the lock is held for the writes alone, and the workers of ``pbm serve
--workers`` (and the threads of one process) work out moves side by side.

PostgreSQL: writers lock the board row they change (``SELECT ... FOR
UPDATE``), and the board's version column catches anything that slips by. A
mail's unit there is optimistic in a smaller way: its commands run without a
savepoint each (two round trips a command), and a refusal, which needs one to
roll its command back, runs the unit again with them.
"""

from __future__ import annotations

import fcntl
import sqlite3
import logging
import os
import queue
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlsplit

from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.sql.expression import Executable
from sqlalchemy.util import asbool
from sqlmodel import Session, create_engine

from . import driver_sql
from .versioned_writes import planned, write_changes, write_planned

READ_ONLY = "pbm_read_only"
WRITE_LATER = "pbm_write_later"  # an optimistic unit of work's connection (``transaction``)
WRITING = "pbm_writing"  # ... once it has begun writing (``begin_writing``)
WRITER_LOCK_SUFFIX = "-writer.lock"

log = logging.getLogger(__name__)


def make_engine(url: str) -> Engine:
    """The engine of ``url``. A failed statement's error (and SQLAlchemy's echo) leaves
    its parameters out (``hide_parameters``): they hold tokens that are also reply tags,
    password hashes and addresses, and the error goes into the log with its traceback."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, hide_parameters=True)
    database_file = sqlite_file(parsed)
    if database_file is not None:
        database_file.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, hide_parameters=True)
    # SQLite takes one writer at a time: this process's threads queue on a lock, and
    # the processes of a file on an flock beside it, and wake the moment it is free,
    # rather than in SQLite's busy handler, which polls with sleeps of up to 100 ms.
    engine.pbm_writer_lock = threading.Lock()
    engine.pbm_writes = 0  # this process's write transactions on the file (``_write_lock``)
    engine.pbm_database_file = database_file
    lock_file = beside_database(engine, WRITER_LOCK_SUFFIX)  # every write opens it: its path made once
    engine.pbm_writer_lock_file = None if lock_file is None else os.fspath(lock_file)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # This process's writers checkpoint after letting go of the write lock
        # (``_write_lock``); SQLite's own, in the commit, only for a process that writes
        # too seldom to (one ``pbm ingest`` a mail).
        cursor.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_CHECKPOINT_PAGES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        options = connection.get_execution_options()
        if options.get(WRITE_LATER):  # reads outside a transaction; ``begin_writing`` begins it
            return
        connection.exec_driver_sql("BEGIN" if options.get(READ_ONLY) else "BEGIN IMMEDIATE")

    @event.listens_for(engine, "before_cursor_execute")
    def _no_early_writes(connection, _cursor, statement, _parameters, _context, _many):
        options = connection._execution_options  # read for every statement: the public accessor copies
        if options.get(WRITE_LATER) and not options.get(WRITING) and statement.lstrip()[:6].upper() != "SELECT":
            raise NeedsLock(statement.split(None, 1)[0])

    return engine


def sqlite_file(url: URL) -> Path | None:
    """The file a SQLite URL names, or None for an in-memory database. Both forms:
    ``sqlite:///path/db.sqlite`` and the URI form ``sqlite:///file:/path/db.sqlite?mode=rwc&uri=true``."""
    name = url.database or ""
    if asbool(url.query.get("uri", False)) and name.startswith("file:"):
        if url.query.get("mode") == "memory":  # SQLAlchemy hands the URL's query to SQLite
            return None
        name = unquote(urlsplit(name).path)
    return Path(name) if name and name != ":memory:" else None


def _with_options(engine: Engine, option: str) -> Engine:
    """``engine.execution_options(option=True)``, made once per engine: every unit of
    work and read runs on one, and a new one per call costs its making and slows
    every event it dispatches."""
    cached = engine.__dict__.setdefault("pbm_option_engines", {})
    if option not in cached:
        cached[option] = engine.execution_options(**{option: True})
    return cached[option]


def beside_database(engine: Engine, suffix: str) -> Path | None:
    """The path ``<database file><suffix>`` beside the engine's SQLite file; None for
    an in-memory database and PostgreSQL."""
    database_file = getattr(engine, "pbm_database_file", None)
    return None if database_file is None else database_file.with_name(database_file.name + suffix)


@contextmanager
def _writers_of_the_file(engine: Engine) -> Iterator[None]:
    """Hold the exclusive flock every process's writers of this SQLite file take
    (nothing for an in-memory database or PostgreSQL). A lock file that cannot be
    opened (a read-only directory) is done without: SQLite's own lock still orders
    the writers, only more slowly, and refuses them when the database is read-only."""
    path = getattr(engine, "pbm_writer_lock_file", None)  # made with the engine (``make_engine``)
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


WRITER_WAIT_SECONDS = 30.0  # as SQLite's busy timeout: then the door answers "try again later"


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
    waiter = getattr(engine, "pbm_flock_waiter", None)
    if waiter is None or waiter.pid != os.getpid():
        waiter = engine.pbm_flock_waiter = _FlockWaiter()
        waiter.start()
    return waiter


def _locked(why: str) -> OperationalError:
    """The error SQLite's own busy timeout raises (a door answers "try again later")."""
    return OperationalError("BEGIN IMMEDIATE", None, sqlite3.OperationalError(f"database is locked: {why}"))


class NeedsLock(Exception):
    """An optimistic unit of work came to something it may do only under the write
    lock (a write before its end, a refusal to roll back), or on PostgreSQL to a
    refusal, which needs a savepoint: run it again the usual way."""


@contextmanager
def _write_lock(engine: Engine) -> Iterator[None]:
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
        checkpoint = engine.pbm_writes % CHECKPOINT_WRITES == 0 and engine.pbm_database_file is not None
    finally:
        threads.release()
    if checkpoint:
        _checkpoint(engine)


CHECKPOINT_WRITES = 50  # a process's write transactions between its checkpoints: ~1,000 pages of WAL
BACKSTOP_CHECKPOINT_PAGES = 10_000  # SQLite's own checkpoint (its default: 1,000)


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


@dataclass
class _Later:
    """An optimistic unit's writes, kept until it begins writing."""

    locks: ExitStack
    engine: Engine
    writes: list[tuple[Executable, dict, driver_sql.Prepared | None]] = field(default_factory=list)
    writing: bool = False


_LATER = "pbm_later"  # Session.info key of an optimistic unit's ``_Later``
_UNGUARDED = "pbm_unguarded"  # Session.info key: an optimistic unit elsewhere than on SQLite


@contextmanager
def transaction(engine: Engine, *, optimistic: bool = False) -> Iterator[Session]:
    """One write transaction: commit on success, roll back on any exception. On
    SQLite it holds the write lock (``_write_lock``) until the commit is done.

    ``optimistic`` on SQLite: the lock is taken only when the
    work is done (``begin_writing``), so that while one move is written the next
    ones are worked out, by other threads and processes. Until then each read sees
    the latest commit (no transaction is open), Core writes are kept (``write``)
    and any other write raises ``NeedsLock``, as does a refused command (whose
    savepoint there is no transaction for yet: ``service.inbound``); a change to a
    board that happened meanwhile fails the board's version check as the board is
    written (``StaleDataError``). On either, the caller runs the work again the
    usual way. ``optimistic`` elsewhere (PostgreSQL): the unit's commands take no
    savepoints (``refusal_runs_again``)."""
    if not (optimistic and engine.dialect.name == "sqlite"):
        with _write_lock(engine):
            with Session(engine, expire_on_commit=False) as session:
                session.info[_UNGUARDED] = optimistic
                with session.begin():
                    yield session
        return
    with ExitStack() as locks:  # released after the commit
        with Session(_with_options(engine, WRITE_LATER), expire_on_commit=False) as session:
            session.info[_LATER] = _Later(locks, engine)
            with session.begin():
                yield session
            locks.close()  # committed: the next writer need not wait for this session's closing


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """One write transaction on a plain connection, for Core statements alone (no
    session to set up and tear down while other writers wait): the write lock as
    ``transaction`` takes it, commit on success, roll back on any exception."""
    with _write_lock(engine):
        with engine.begin() as connection:
            yield connection


def writes_later(session: Session) -> bool:
    """Whether ``session`` is an optimistic unit's that has not begun writing."""
    later = session.info.get(_LATER)
    return later is not None and not later.writing


def refusal_runs_again(session: Session) -> bool:
    """Whether a refused command in ``session`` must run the unit again the usual way
    (raise ``NeedsLock``) rather than roll back a savepoint: an optimistic unit that
    has not begun writing (SQLite: there is no transaction yet), or one that takes
    no savepoints (elsewhere: what the command wrote is in the transaction)."""
    return writes_later(session) or session.info.get(_UNGUARDED, False)


def write(session: Session, statement: Executable, params: dict | list[dict]) -> None:
    """Run a Core write (an INSERT) in the session's transaction; an optimistic unit
    keeps it until it begins writing (see ``written_later``). Only for rows that
    stand or fall with a versioned object written with them (a board's log
    entry) or with a unique index (the record of a mail), or that rest on no
    read at all (an outbox mail, the marks "sent" of mails delivered)."""
    if writes_later(session):
        later = session.info[_LATER]
        # made ready now (compiled, values through their types): under the lock it only runs
        later.writes.append((statement, params, driver_sql.prepare(later.engine.dialect, statement, params)))
    else:
        driver_sql.execute(session.connection(), statement, params)


def written_later(session: Session, statement: Executable) -> list[dict]:
    """The parameters of the writes of ``statement`` an optimistic unit has kept."""
    later = session.info.get(_LATER)
    return [params for kept, params, _ in later.writes if kept is statement] if later else []


def flush(session: Session, *, later: tuple[type, ...] = ()) -> None:
    """``session.flush()``, but not in an optimistic unit before it writes when its
    only pending changes are to loaded objects of the types ``later``: a caller
    that reads no such rows needs them written no sooner than the unit's end.
    (Anything else pending is flushed, which there raises ``NeedsLock``.)"""
    if writes_later(session) and not session.new and not session.deleted \
            and all(isinstance(changed, later) for changed in session.dirty):
        return
    write_changes(session)


def begin_writing(session: Session, versioned: tuple[type, ...]) -> None:
    """An optimistic unit's work is done: take the write lock, begin the transaction,
    write its changed objects and run the writes it kept (nothing for any other
    session), every statement made ready before the lock is taken (compiled, its
    values through their types: ``write``, ``versioned_writes.planned``), so that
    the lock, which every writer of the file waits for, is held only while they
    run. Its changes must all be to loaded objects of the types ``versioned``,
    whose UPDATE checks that nobody changed them since they were read; a new or
    deleted object, or a change to another, may rest on a read that is stale by
    now (a userid found free), so it raises ``NeedsLock``."""
    later = session.info.get(_LATER)
    if later is None or later.writing:
        return
    if session.new or session.deleted or not all(isinstance(changed, versioned) for changed in session.dirty):
        raise NeedsLock("a change that no version check covers")
    # Everything made ready before the lock, which every writer of the file waits for: under it
    # the statements only run.
    changes = planned(session, later.engine.dialect)
    if changes is None:  # an object of a versioned type whose mapping has no version column
        raise NeedsLock("a change that no version check covers")
    later.locks.enter_context(_write_lock(later.engine))
    connection = session.connection().execution_options(**{WRITING: True})
    driver_sql.run_sql(connection, "BEGIN IMMEDIATE")
    later.writing = True
    write_planned(connection, changes, session)  # first: a version check fails before any kept write does
    for _, _, prepared in later.writes:
        if prepared is not None:
            driver_sql.run(connection, prepared)
    later.writes.clear()


@contextmanager
def reading(engine: Engine) -> Iterator[Session]:
    """A read-only session (plain BEGIN on SQLite, so readers never queue behind writers)."""
    with Session(_with_options(engine, READ_ONLY), expire_on_commit=False) as session:
        yield session


@contextmanager
def reading_rows(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction on a plain connection, for Core statements that read
    plain rows (no session to set up and tear down): as ``reading`` begins it."""
    with _with_options(engine, READ_ONLY).connect() as connection:
        yield connection


def probe_write(engine: Engine) -> None:
    """Raise the database's error when it would refuse a write (a read-only SQLite file
    or connection, PostgreSQL's ``default_transaction_read_only``, a role without
    write rights); change nothing. The statement touches no row but is checked
    like any write: read-only mode and privileges at its start, SQLite at BEGIN IMMEDIATE."""
    with transaction(engine) as session:
        session.execute(text("UPDATE outbox SET attempts = attempts WHERE 1 = 0"))
