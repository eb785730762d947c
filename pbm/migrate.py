"""``pbm db upgrade``: bring a database to the newest schema with Alembic."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from .config import PROJECT_ROOT


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)
