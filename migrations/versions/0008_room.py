"""room: games started in the browser (same device, with a friend, against the computer)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

import pbm.models

revision: str = "0008"
down_revision: Union[str, None] = "0007"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "room",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=12), nullable=False),
        sa.Column("invite", sa.String(length=40), nullable=True),
        sa.Column("host_key", sa.String(length=64), nullable=True),
        sa.Column("guest_key", sa.String(length=64), nullable=True),
        sa.Column("created_at", pbm.models.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("invite"),
    )
    with op.batch_alter_table("board", schema=None) as batch_op:
        batch_op.add_column(sa.Column("room_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_board_room_id"), ["room_id"], unique=False)
        batch_op.create_foreign_key("fk_board_room_id_room", "room", ["room_id"], ["id"])
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.add_column(sa.Column("display_name", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.drop_column("display_name")
    with op.batch_alter_table("board", schema=None) as batch_op:
        batch_op.drop_constraint("fk_board_room_id_room", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_board_room_id"))
        batch_op.drop_column("room_id")
    op.drop_table("room")
