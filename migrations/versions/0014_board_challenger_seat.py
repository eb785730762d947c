"""board.challenger_seat: whose challenge began a board (only the challenged may decline)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: Union[str, None] = "0013"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # A nullable column is added in place on SQLite too; boards from before keep None
    # (either player who has not moved may decline them, as before).
    op.add_column("board", sa.Column("challenger_seat", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("board") as batch:
        batch.drop_column("challenger_seat")
