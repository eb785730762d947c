"""player.email may be empty: the computer and browser seats get no mail

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: Union[str, None] = "0004"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.alter_column("email", existing_type=sa.String(length=254), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.alter_column("email", existing_type=sa.String(length=254), nullable=False)
