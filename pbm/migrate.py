"""``pbm db upgrade``: bring a database to the newest schema with Alembic."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import text
from sqlalchemy.engine import Engine, make_url

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


# The key of the PostgreSQL advisory lock an upgrade holds ("pbm_up" in ASCII): several
# `pbm db upgrade` at once (one per host of a deployment) then run one after the other.
UPGRADE_LOCK = 0x70626D5F7570


class SchemaError(Exception):
    """The database's schema is one this pbm cannot upgrade; ``str()`` says why."""


def upgrade(database_url: str, revision: str = "head") -> None:
    """Apply the migrations the database lacks. SchemaError when its revision is one
    this pbm does not know (a newer pbm made it)."""
    from .db import make_engine

    config = alembic_config(database_url)
    try:
        if make_url(database_url).get_backend_name() != "postgresql":
            command.upgrade(config, revision)
            return
        engine = make_engine(database_url)
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": UPGRADE_LOCK})
                connection.commit()  # the lock is the session's; Alembic's transaction begins after it
                config.attributes["connection"] = connection
                command.upgrade(config, revision)
        finally:
            engine.dispose()  # closing the connection frees the lock
    except CommandError as error:
        raise SchemaError(_unknown_revision(make_url(database_url), error)) from None


def _unknown_revision(url, error: CommandError) -> str:
    return (f"the database {url.render_as_string(hide_password=True)} has a schema this version of pbm does not "
            f"know ({error}); it was made by a newer pbm: run that one, or restore a backup.")


def schema_problem(engine: Engine) -> str | None:
    """None when the database holds the newest schema; otherwise a sentence saying
    what is wrong and what to run (a server started on an empty or older database
    would answer every mail "busy" and log tracebacks)."""
    from .db import reading_rows

    with reading_rows(engine) as connection:  # a plain BEGIN: it never waits for a writer
        current = MigrationContext.configure(connection).get_current_revision()
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    scripts = ScriptDirectory.from_config(config)
    head = scripts.get_current_head()
    if current == head:
        return None
    where = engine.url.render_as_string(hide_password=True)
    if current is not None:
        try:
            scripts.get_revision(current)
        except CommandError as error:
            return _unknown_revision(engine.url, error)
    if current is None:
        return f"the database {where} has no tables yet: run `pbm db upgrade` first (make run does)."
    return (f"the database {where} has schema {current}, and this version of pbm needs {head}: "
            "run `pbm db upgrade` first.")
