"""used_token.digest: the request a webhook signature token came with

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: Union[str, None] = "0014"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # Tokens taken before keep None: no request is theirs again (they end within the hour).
    op.add_column("used_token", sa.Column("digest", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("used_token") as batch:
        batch.drop_column("digest")
