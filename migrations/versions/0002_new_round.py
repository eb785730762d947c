"""new round: votes and the follow-up board

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = "0002"
down_revision: Union[str, None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("board", schema=None) as batch_op:
        batch_op.add_column(sa.Column("newround_votes", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("next_board_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("board", schema=None) as batch_op:
        batch_op.drop_column("next_board_id")
        batch_op.drop_column("newround_votes")
