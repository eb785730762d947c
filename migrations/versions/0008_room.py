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

FOREIGN_KEY = "fk_board_room_id_room"


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
    if op.get_bind().dialect.name == "sqlite":
        # In place: a batch rebuild of the board table would drop its AUTOINCREMENT
        # (boards are numbered from 101 by the sequence).
        op.execute(f"ALTER TABLE board ADD COLUMN room_id INTEGER CONSTRAINT {FOREIGN_KEY} REFERENCES room (id)")
    else:
        op.add_column("board", sa.Column("room_id", sa.Integer(), nullable=True))
        op.create_foreign_key(FOREIGN_KEY, "board", "room", ["room_id"], ["id"])
    op.create_index(op.f("ix_board_room_id"), "board", ["room_id"], unique=False)
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.add_column(sa.Column("display_name", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("player", schema=None) as batch_op:
        batch_op.drop_column("display_name")
    op.drop_index(op.f("ix_board_room_id"), table_name="board")
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        # SQLite drops a referencing column only by rebuilding the table: keep its
        # AUTOINCREMENT and where its numbering had got to.
        seq = bind.exec_driver_sql("SELECT seq FROM sqlite_sequence WHERE name = 'board'").scalar()
        with op.batch_alter_table("board", recreate="always", table_kwargs={"sqlite_autoincrement": True}) as batch_op:
            batch_op.drop_column("room_id")
        bind.exec_driver_sql("DELETE FROM sqlite_sequence WHERE name = 'board'")
        bind.exec_driver_sql("INSERT INTO sqlite_sequence (name, seq) VALUES ('board', ?)", (seq or 100,))
    else:
        op.drop_constraint(FOREIGN_KEY, "board", type_="foreignkey")
        op.drop_column("board", "room_id")
    op.drop_table("room")
