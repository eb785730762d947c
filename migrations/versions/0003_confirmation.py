"""confirmation: an address is gained only by a reply from it

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

import pbm.models

revision: str = "0003"
down_revision: Union[str, None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "confirmation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=40), nullable=False),
        sa.Column("action", sa.String(length=10), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("userid", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("created_at", pbm.models.UTCDateTime(), nullable=False),
        sa.Column("expires_at", pbm.models.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token"),
    )
    with op.batch_alter_table("confirmation", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_confirmation_address"), ["address"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("confirmation", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_confirmation_address"))
    op.drop_table("confirmation")
