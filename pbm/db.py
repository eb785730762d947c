"""Engine and transaction setup for SQLite (embedded default) and PostgreSQL.

SQLite: WAL, a busy timeout, foreign keys on, and every write transaction
begins with ``BEGIN IMMEDIATE`` so a read-then-write transaction can never
fail with "database is locked"; it waits for the lock instead.
``synchronous=NORMAL`` in WAL mode survives a crash of the process (not a
power loss); set ``PBM_DATABASE_URL`` to PostgreSQL for full durability.

Writers of every process on one SQLite file take turns on one lock
(``pbm.writer_lock``), which ``transaction`` and ``writing`` hold until the commit.

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

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlsplit

from sqlalchemy import event, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.sql.expression import Executable
from sqlalchemy.util import asbool
from sqlmodel import Session, create_engine

from . import driver_sql, writer_lock
from .versioned_writes import planned, write_changes, write_planned

READ_ONLY = "pbm_read_only"
WRITE_LATER = "pbm_write_later"  # an optimistic unit of work's connection (``transaction``)
WRITING = "pbm_writing"  # ... once it has begun writing (``begin_writing``)


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
    engine.pbm_database_file = database_file
    writer_lock.set_up(engine, beside_database(engine, writer_lock.WRITER_LOCK_SUFFIX))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # This process's writers checkpoint after letting go of the write lock
        # (``writer_lock``); SQLite's own, in the commit, only for a process that writes
        # too seldom to (one ``pbm ingest`` a mail).
        cursor.execute(f"PRAGMA wal_autocheckpoint={writer_lock.BACKSTOP_CHECKPOINT_PAGES}")
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


class NeedsLock(Exception):
    """An optimistic unit of work came to something it may do only under the write
    lock (a write before its end, a refusal to roll back), or on PostgreSQL to a
    refusal, which needs a savepoint: run it again the usual way."""


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
    SQLite it holds the write lock (``writer_lock.held``) until the commit is done.

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
        with writer_lock.held(engine):
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
    with writer_lock.held(engine):
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
    """Run a Core write (an INSERT, or an UPDATE that rests on no read) in the
    session's transaction; an optimistic unit
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
    later.locks.enter_context(writer_lock.held(later.engine))
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
