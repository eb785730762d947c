"""``pbm db upgrade``: bring a database to the newest schema with Alembic."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from .config import PROJECT_ROOT, SettingsError


def alembic_config(database_url: str) -> Config:
    """Alembic's configuration for ``database_url``, with the migrations of the
    checkout pbm runs from; SettingsError when they are not there (pbm installed
    by a plain ``pip install``, which copies the package alone)."""
    migrations = PROJECT_ROOT / "migrations"
    if not (migrations / "env.py").is_file():
        raise SettingsError(f"pbm cannot find its migrations in {migrations}: install pbm from its checkout "
                            "with `pip install -e <checkout>`, so that migrations/ and config/ stay beside it "
                            "(deploy/README.md)")
    config = Config()
    config.set_main_option("script_location", str(migrations))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def schema_problem(engine: Engine) -> str | None:
    """None when the database holds the newest schema; otherwise a sentence saying
    what is wrong and what to run (a server started on an empty or older database
    would answer every mail "busy" and log tracebacks)."""
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    head = ScriptDirectory.from_config(config).get_current_head()
    if current == head:
        return None
    where = engine.url.render_as_string(hide_password=True)
    if current is None:
        return f"the database {where} has no tables yet: run `pbm db upgrade` first (make run does)."
    return (f"the database {where} has schema {current}, and this version of pbm needs {head}: "
            "run `pbm db upgrade` first.")
