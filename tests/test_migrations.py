"""The Alembic migrations build exactly the schema the models describe (no drift),
on SQLite and PostgreSQL."""

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import pbm.models  # noqa: F401  (registers the tables)
from pbm.db import make_engine
from pbm.migrate import alembic_config, upgrade
from pbm.models import InboundMessage, utcnow

from .conftest import POSTGRES_ADMIN_URL, empty_postgres_database


def test_migrations_match_the_models(database_url):
    engine = make_engine(database_url)  # the fixture's database is migrated to head
    try:
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    finally:
        engine.dispose()
    assert differences == []


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request, tmp_path):
    """An empty database of its own (migrations are run down and up on it)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
        return
    with empty_postgres_database("pbm_migrate") as url:
        if url is None:
            pytest.skip(f"PostgreSQL lane: no server answers at {POSTGRES_ADMIN_URL}")
        yield url


def _unique_columns(url: str) -> list[list[str]]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return sorted(c["column_names"] for c in sa.inspect(connection).get_unique_constraints("inbound_message"))
    finally:
        engine.dispose()


def test_0013_scopes_the_message_id_to_its_sender_and_goes_back(fresh_url):
    """Up: one Message-ID may come from two senders. Down: one per Message-ID again
    (the first row of each kept), and up once more matches the models."""
    upgrade(fresh_url)
    assert _unique_columns(fresh_url) == [["sender", "message_id"]]
    engine = make_engine(fresh_url)
    try:
        with engine.begin() as connection:
            for sender in ("alice@players.test", "mallory@evil.test"):
                connection.execute(sa.insert(InboundMessage), {
                    "message_id": "<same@players.test>", "sender": sender, "status": "applied",
                    "received_at": utcnow()})
    finally:
        engine.dispose()
    command.downgrade(alembic_config(fresh_url), "0012")
    assert _unique_columns(fresh_url) == [["message_id"]]
    engine = make_engine(fresh_url)
    try:
        with engine.connect() as connection:
            assert connection.execute(sa.select(InboundMessage.sender)).scalars().all() == ["alice@players.test"]
    finally:
        engine.dispose()
    upgrade(fresh_url)
    test_migrations_match_the_models(fresh_url)
