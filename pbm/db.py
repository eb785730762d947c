"""Engine and transaction setup for SQLite (embedded default) and PostgreSQL.

SQLite: WAL, a busy timeout, foreign keys on, and every write transaction
begins with ``BEGIN IMMEDIATE`` so a read-then-write transaction can never
fail with "database is locked"; it waits for the lock instead.
``synchronous=NORMAL`` in WAL mode survives a crash of the process (not a
power loss); set ``PBM_DATABASE_URL`` to PostgreSQL for full durability.

PostgreSQL: writers lock the board row they change (``SELECT ... FOR
UPDATE``), and the board's version column catches anything that slips by.
"""

from __future__ import annotations

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


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    database_file = sqlite_file(parsed)
    if database_file is not None:
        database_file.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    # SQLite takes one writer at a time: this process's threads queue on a lock and
    # wake the moment it is free, rather than in SQLite's busy handler, which polls
    # with sleeps of up to 100 ms. Other processes still wait through the timeout.
    engine.pbm_writer_lock = threading.Lock()

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


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """One write transaction: commit on success, roll back on any exception."""
    with getattr(engine, "pbm_writer_lock", None) or nullcontext():
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
