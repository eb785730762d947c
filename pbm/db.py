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

PostgreSQL: writers lock the board row they change (``SELECT ... FOR
UPDATE``), and the board's version column catches anything that slips by.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlsplit

from sqlalchemy import event, text
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.util import asbool
from sqlmodel import Session, create_engine

READ_ONLY = "pbm_read_only"
WRITER_LOCK_SUFFIX = "-writer.lock"

log = logging.getLogger(__name__)


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    database_file = sqlite_file(parsed)
    if database_file is not None:
        database_file.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    # SQLite takes one writer at a time: this process's threads queue on a lock, and
    # the processes of a file on an flock beside it, and wake the moment it is free,
    # rather than in SQLite's busy handler, which polls with sleeps of up to 100 ms.
    engine.pbm_writer_lock = threading.Lock()
    engine.pbm_database_file = database_file

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        read_only = connection.get_execution_options().get(READ_ONLY)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

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
    path = beside_database(engine, WRITER_LOCK_SUFFIX)
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
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """One write transaction: commit on success, roll back on any exception. On
    SQLite it waits first for this process's writers (a thread lock) and then for
    those of every other process on the same file (an flock), holding both until
    the commit is done."""
    with getattr(engine, "pbm_writer_lock", None) or nullcontext():
        with _writers_of_the_file(engine):
            with Session(engine, expire_on_commit=False) as session:
                with session.begin():
                    yield session


@contextmanager
def reading(engine: Engine) -> Iterator[Session]:
    """A read-only session (plain BEGIN on SQLite, so readers never queue behind writers)."""
    with Session(engine.execution_options(**{READ_ONLY: True}), expire_on_commit=False) as session:
        yield session


def probe_write(engine: Engine) -> None:
    """Raise the database's error when it would refuse a write (a read-only SQLite file
    or connection, PostgreSQL's ``default_transaction_read_only``, a role without
    write rights); change nothing. The statement touches no row but is checked
    like any write: read-only mode and privileges at its start, SQLite at BEGIN IMMEDIATE."""
    with transaction(engine) as session:
        session.execute(text("UPDATE outbox SET attempts = attempts WHERE 1 = 0"))
