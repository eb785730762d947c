"""board requests: an open undo request or draw offer, a queued move, a submitted move

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: Union[str, None] = "0008"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

COLUMNS = (
    ("request_kind", sa.String(length=6)),
    ("request_seat", sa.Integer()),
    ("request_move", sa.Integer()),
    ("queued_seat", sa.Integer()),
    ("queued_move", sa.String(length=200)),
    ("submitted_seat", sa.Integer()),
    ("submitted_move", sa.String(length=200)),
    ("submitted_at_move", sa.Integer()),
)


def upgrade() -> None:
    # Plain ADD COLUMN on every backend: a batch rebuild of the board table on
    # SQLite would drop its AUTOINCREMENT (boards are numbered from 101).
    for name, type_ in COLUMNS:
        op.add_column("board", sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    # SQLite (3.35 and later) and PostgreSQL both drop a plain column in place.
    for name, _ in reversed(COLUMNS):
        op.drop_column("board", name)
