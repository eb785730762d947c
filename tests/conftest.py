"""Fixtures: every database test runs on SQLite and, when a server answers at
127.0.0.1:5432 (CI has one), on PostgreSQL too. Outgoing mail goes to a real
Maildir that the tests read back."""

from __future__ import annotations

import mailbox
import os
import re
import shutil
import socket
import time
import uuid
from email import message_from_bytes, policy
from email.message import EmailMessage
from contextlib import contextmanager
from email.utils import make_msgid
from pathlib import Path

import pytest
import sqlalchemy as sa

from pbm import create_app
from pbm.db import make_engine
from pbm.migrate import upgrade
from pbm.courier import wait_for_deliveries

POSTGRES_ADMIN_URL = os.environ.get("PBM_TEST_POSTGRES_URL",
                                    "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
TABLES = ("rating_change", "rating", "challenge_policy", "move", "outbox", "inbound_message", "chat",
          "subscription", "board", "room", "confirmation", "password_failure", "used_token", "vacation",
          "player_address", "player")


def wait_until(condition, what: str, timeout: float = 30.0):
    """Poll ``condition()`` until it returns something true, and return that; fail
    with a sentence naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except OSError:  # a server that is not listening yet
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "pbm.sqlite3"
    upgrade(f"sqlite:///{path}")
    return path


@contextmanager
def empty_postgres_database(prefix: str = "pbm_test"):
    """The URL of a new, empty PostgreSQL database, dropped afterwards; None when no
    server answers."""
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except sa.exc.OperationalError:
        admin.dispose()
        yield None
        return
    try:
        yield sa.engine.make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url():
    """A fresh PostgreSQL database for this test session, or None when none answers."""
    with empty_postgres_database() as url:
        if url is not None:
            upgrade(url)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path, sqlite_template):
    if request.param == "sqlite":
        path = tmp_path / "pbm.sqlite3"
        shutil.copy(sqlite_template, path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("postgres_url")
    if url is None:
        pytest.skip(f"PostgreSQL lane: no server answers at {POSTGRES_ADMIN_URL}")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    engine.dispose()
    return url


@pytest.fixture
def overrides(database_url, tmp_path) -> dict:
    return {
        "database_url": database_url,
        "instance_path": str(tmp_path / "instance"),
        "maildir": str(tmp_path / "maildir"),
        "mail_backend": "maildir",
        "server_address": "pbm@pbm.test",
        "base_url": "http://pbm.test",
        "secret_key": "test-secret-key",
        "nag_days": 4,
        "expire_days": 7,
    }


@pytest.fixture
def app(overrides):
    app = create_app(overrides)
    yield app
    app.extensions["pbm"].engine.dispose()


@pytest.fixture
def server(app):
    return app.extensions["pbm"]


@pytest.fixture
def client(app):
    return app.test_client()


class Outbox:
    """Reads what the server delivered to the Maildir, in the order it arrived.

    Mails are ordered by when a test first saw them (then by Date, then in the
    order one process delivered them), not by Date alone: under freezegun the
    Date headers go back in time. Two mails seen at once within one second (a
    board mail and the computer's notice right after it) keep the order their
    process wrote them in: the counter in the Maildir file's name."""

    def __init__(self, path: str):
        self.path = path
        self.order: list[str] = []
        self.messages: dict[str, EmailMessage] = {}
        self.seen = 0

    def _refresh(self) -> None:
        # The server delivers in its delivery thread after answering: wait until this
        # process's deliveries are done (a server in another process is waited for by
        # the test, with ``wait_until``).
        assert wait_for_deliveries(30), "the server's mail deliveries did not finish within 30 s"
        if not Path(self.path, "new").exists():
            return
        box = mailbox.Maildir(self.path, create=False)
        fresh = {key: message_from_bytes(box.get_bytes(key), policy=policy.default)
                 for key in box.keys() if key not in self.messages}
        self.messages.update(fresh)
        self.order += sorted(fresh, key=lambda k: (fresh[k]["Date"].datetime, delivered(k)))

    def all(self) -> list[EmailMessage]:
        self._refresh()
        return [self.messages[key] for key in self.order]

    def new(self) -> list[EmailMessage]:
        """Mails delivered since the last call."""
        messages = self.all()
        fresh = messages[self.seen:]
        self.seen = len(messages)
        return fresh

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.all() if m["To"].addresses[0].addr_spec == address]


def delivered(key: str) -> tuple[int, int]:
    """(process, counter) from a Maildir file name of pbm's (``transport._maildir_name``:
    ``<seconds>.M<microseconds>P<pid>Q<counter>.<host>``): a process's mails in the order
    it wrote them."""
    named = re.search(r"P(\d+)Q(\d+)\.", key)
    return (int(named[1]), int(named[2])) if named else (0, 0)


def body(message: EmailMessage) -> str:
    """The text part as sent (lines wrapped at 78 characters)."""
    return message.get_body(preferencelist=("plain",)).get_content()


@pytest.fixture
def outbox(overrides) -> Outbox:
    return Outbox(overrides["maildir"])


def make_mail(sender: str, subject: str, text: str = "", to: str = "pbm@pbm.test",
              message_id: str | None = None, headers: dict | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id or make_msgid(domain="players.test")
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(text or "\n")
    return bytes(message)


class Mailer:
    """Sends player mails into the server through the direct ingest path."""

    def __init__(self, server, outbox: Outbox):
        self.server, self.outbox = server, outbox

    def send(self, sender, subject, text="", **kw):
        result = self.server.handle_raw(make_mail(sender, subject, text, **kw))
        self.outbox.all()  # note the arrival order of what this mail caused
        return result


@pytest.fixture
def mailer(server, outbox) -> Mailer:
    return Mailer(server, outbox)


@pytest.fixture
def players(mailer):
    """alice and bob with accounts (welcome mails delivered)."""
    assert mailer.send("alice@players.test", "signup alice alicepw").status == "applied"
    assert mailer.send("bob@players.test", "signup bob bobpw").status == "applied"
    return mailer
