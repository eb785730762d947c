"""password_failure: wrong passwords, counted to lock out guessing

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

import pbm.models

revision: str = "0004"
down_revision: Union[str, None] = "0003"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "password_failure",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(length=32), nullable=False),
        sa.Column("sender", sa.String(length=320), nullable=False),
        sa.Column("at", pbm.models.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("password_failure", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_failure_userid"), ["userid"], unique=False)
        batch_op.create_index(batch_op.f("ix_password_failure_sender"), ["sender"], unique=False)
        batch_op.create_index(batch_op.f("ix_password_failure_at"), ["at"], unique=False)


def downgrade() -> None:
    op.drop_table("password_failure")
