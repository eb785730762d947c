"""pbm/db.py and pbm/writer_lock.py: the writers of every process on one SQLite file
queue on one flock beside it, so a writer wakes when the one before it commits (not
in SQLite's busy handler, which sleeps up to 100 ms between looks); the WAL's
checkpoint after the lock."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from pbm.db import beside_database, make_engine, reading, transaction
from pbm.writer_lock import WRITER_LOCK_SUFFIX

from .conftest import make_mail, wait_until


def waits_for_flock(path: Path, pid: int) -> bool:
    """Whether process ``pid`` is blocked asking for an flock of ``path``: Linux lists
    such a request in /proc/locks marked ``->`` ("1: -> FLOCK ADVISORY WRITE <pid>
    <major>:<minor>:<inode> 0 EOF")."""
    inode = str(os.stat(path).st_ino)
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 6 and fields[1] == "->" and fields[2] == "FLOCK":
            if fields[5] == str(pid) and fields[6].rsplit(":", 1)[-1] == inode:
                return True
    return False


def test_a_writer_in_another_process_waits_on_the_lock_file_then_both_commit(tmp_path, sqlite_template):
    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    lock_file = beside_database(engine, WRITER_LOCK_SUFFIX)
    assert lock_file == tmp_path / "pbm.sqlite3-writer.lock"
    env = {**os.environ, "PBM_DATABASE_URL": url, "PBM_INSTANCE_PATH": str(tmp_path / "instance"),
           "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_LOG_LEVEL": "WARNING"}
    mail = tmp_path / "signup.eml"
    mail.write_bytes(make_mail("alice@players.test", "signup alice alicepw"))
    try:
        with transaction(engine) as session:  # this process writes and holds its transaction open
            session.execute(text("INSERT INTO password_failure (userid, sender, at) "
                                 "VALUES ('held', 'held@players.test', '2026-01-01 00:00:00')"))
            ingest = subprocess.Popen([sys.executable, "-m", "pbm.cli", "ingest", str(mail)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            wait_until(lambda: waits_for_flock(lock_file, ingest.pid), "pbm ingest to wait for the writer lock")
            assert ingest.poll() is None
        out, err = ingest.communicate(timeout=60)  # the commit let it go on
        assert ingest.returncode == 0 and out.startswith(b"applied"), err
        with reading(engine) as session:
            assert session.execute(text("SELECT userid FROM password_failure")).scalars().all() == ["held"]
            assert session.execute(text("SELECT userid FROM player")).scalars().all() == ["alice"]
    finally:
        engine.dispose()


def test_an_in_memory_database_has_no_lock_file():
    engine = make_engine("sqlite://")
    assert beside_database(engine, WRITER_LOCK_SUFFIX) is None
    with transaction(engine) as session:  # the thread lock alone
        session.execute(text("SELECT 1"))


def test_a_writer_stopped_while_it_holds_the_lock_file_stops_the_others_only_for_the_busy_time(
        tmp_path, sqlite_template, monkeypatch):
    """A process frozen (SIGSTOP, a debugger) while it holds the writer lock: the
    others' writes wait the busy time, then their door answers "try again later"
    (as SQLite's own busy timeout would), and write again once the lock is free."""
    import fcntl

    from pbm import writer_lock
    from pbm.config import load_settings
    from pbm.service import Service, Status

    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    settings = load_settings({"database_url": f"sqlite:///{path}", "instance_path": str(tmp_path / "instance"),
                              "maildir": str(tmp_path / "outbox"), "server_address": "pbm@pbm.test"})
    server = Service(settings)
    monkeypatch.setattr(writer_lock, "WRITER_WAIT_SECONDS", 0.5)
    frozen = os.open(beside_database(server.engine, WRITER_LOCK_SUFFIX), os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(frozen, fcntl.LOCK_EX)  # the stopped process's hold
        result = server.handle_raw(make_mail("alice@players.test", "signup alice alicepw"))
        assert result.status == Status.RETRY
        fcntl.flock(frozen, fcntl.LOCK_UN)  # it runs again and lets go
        assert server.handle_raw(make_mail("alice@players.test", "signup alice alicepw")).status == Status.APPLIED
        with reading(server.engine) as session:
            assert session.execute(text("SELECT userid FROM player WHERE userid = 'alice'")).scalars().all() == \
                ["alice"]
    finally:
        os.close(frozen)
        server.engine.dispose()


def test_a_failing_statement_names_no_parameter_in_its_error(database_url):
    """SQLAlchemy writes a failed statement's parameters into its exception, which a log
    keeps with the traceback: a seat's token (also its reply tag), a password hash."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT :token FROM no_such_table"), {"token": "k3J9xSecretToken"})
    except DBAPIError as error:
        failure = str(error)
    else:
        raise AssertionError("the statement did not fail")
    finally:
        engine.dispose()
    assert "no_such_table" in failure and "SecretToken" not in failure
    assert "[SQL parameters hidden due to hide_parameters=True]" in failure


def test_the_writers_of_a_process_wait_for_the_lock_file_in_one_thread_kept_for_every_wait(
        tmp_path, sqlite_template):
    """Each wait for the lock file held by another process is done by the engine's one
    waiter thread, made at the first wait and kept (not a thread made for each wait)."""
    import fcntl
    import threading

    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")
    other = os.open(beside_database(engine, WRITER_LOCK_SUFFIX), os.O_RDONLY | os.O_CREAT, 0o644)
    done, before = [], {t for t in threading.enumerate() if t.name == "pbm-writer-lock"}  # other engines'
    try:
        for turn in range(3):
            fcntl.flock(other, fcntl.LOCK_EX)  # the other process writes

            def write(turn=turn):
                with transaction(engine) as session:
                    session.execute(text("INSERT INTO password_failure (userid, sender, at) "
                                         f"VALUES ('w{turn}', 'w@players.test', '2026-01-01 00:00:00')"))
                done.append(turn)

            writer = threading.Thread(target=write)
            writer.start()
            wait_until(lambda: waits_for_flock(path.with_name(path.name + WRITER_LOCK_SUFFIX), os.getpid()),
                       "the writer to wait for the lock file")
            assert done == list(range(turn))  # it waits while the other process holds the lock
            fcntl.flock(other, fcntl.LOCK_UN)
            writer.join(timeout=30)
            assert done == list(range(turn + 1))
        made = [t for t in threading.enumerate() if t.name == "pbm-writer-lock" and t not in before]
        assert made == [engine.pbm_flock_waiter]
        with reading(engine) as session:
            assert session.execute(text("SELECT userid FROM password_failure ORDER BY userid")).scalars().all() == \
                ["w0", "w1", "w2"]
    finally:
        os.close(other)
        engine.dispose()


def test_a_process_checkpoints_the_wal_into_the_database_file_every_so_many_writes(
        tmp_path, sqlite_template, monkeypatch):
    """SQLite's own checkpoint ran inside the commit, while every writer of the file
    waited for the writer lock; this process's writers copy the WAL into the database
    file themselves, every CHECKPOINT_WRITES write transactions, after the lock. The
    database file alone (copied without its WAL) holds the rows once it has run."""
    import sqlite3

    from pbm import writer_lock

    monkeypatch.setattr(writer_lock, "CHECKPOINT_WRITES", 3)
    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")

    def in_database_file() -> list[str]:
        alone = tmp_path / "alone.sqlite3"
        shutil.copy(path, alone)  # the file without its -wal: what a checkpoint has copied into it
        with sqlite3.connect(alone) as connection:
            return [row[0] for row in connection.execute("SELECT userid FROM password_failure ORDER BY userid")]

    try:
        for turn in range(3):
            assert in_database_file() == []  # in the WAL only, before the third write
            with transaction(engine) as session:
                session.execute(text("INSERT INTO password_failure (userid, sender, at) "
                                     f"VALUES ('w{turn}', 'w@players.test', '2026-01-01 00:00:00')"))
        assert in_database_file() == ["w0", "w1", "w2"]
    finally:
        engine.dispose()


def test_a_checkpoint_that_fails_leaves_the_committed_write_standing(tmp_path, sqlite_template, monkeypatch):
    """The checkpoint runs after the commit: when it cannot (no connection to be had),
    the write that committed stands, and its caller sees no error."""
    from pbm import writer_lock

    monkeypatch.setattr(writer_lock, "CHECKPOINT_WRITES", 1)
    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")

    def no_connection():
        raise DBAPIError("connect", None, Exception("no connection"))

    try:
        with transaction(engine) as session:
            session.execute(text("INSERT INTO password_failure (userid, sender, at) "
                                 "VALUES ('kept', 'k@players.test', '2026-01-01 00:00:00')"))
            monkeypatch.setattr(engine, "raw_connection", no_connection)  # the session has its connection
        monkeypatch.undo()
        with reading(engine) as session:
            assert session.execute(text("SELECT userid FROM password_failure")).scalars().all() == ["kept"]
    finally:
        engine.dispose()
