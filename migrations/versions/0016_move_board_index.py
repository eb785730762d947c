"""move: no index of its own on board_id

The unique (board_id, number) index already finds a board's log (board_id is
its first column, on SQLite and PostgreSQL alike), so the second index only
cost every move one more B-tree write.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07
"""
from typing import Sequence, Union

from alembic import op

revision: str = "0016"
down_revision: Union[str, None] = "0015"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.drop_index("ix_move_board_id", table_name="move")


def downgrade() -> None:
    op.create_index("ix_move_board_id", "move", ["board_id"], unique=False)
