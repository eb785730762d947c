"""The Alembic migrations build exactly the schema the models describe (no drift),
on SQLite and PostgreSQL."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import pbm.models  # noqa: F401  (registers the tables)
from pbm.db import make_engine


def test_migrations_match_the_models(database_url):
    engine = make_engine(database_url)  # the fixture's database is migrated to head
    try:
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    finally:
        engine.dispose()
    assert differences == []
