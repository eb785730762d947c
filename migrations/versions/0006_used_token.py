"""used_token: a webhook signature token is accepted once

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

import pbm.models

revision: str = "0006"
down_revision: Union[str, None] = "0005"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "used_token",
        sa.Column("token", sa.String(length=100), nullable=False),
        sa.Column("used_at", pbm.models.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("token"),
    )
    with op.batch_alter_table("used_token", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_used_token_used_at"), ["used_at"], unique=False)


def downgrade() -> None:
    op.drop_table("used_token")
