"""player.language: the language of a player's mails (en or de)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: Union[str, None] = "0011"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # Added in place on SQLite too: a batch rebuild is not needed for a column with a default.
    op.add_column("player", sa.Column("language", sa.String(length=2), nullable=False, server_default="en"))


def downgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.drop_column("language")
