"""inbound_message: a Message-ID is unique per sender, not across all senders

A mail is a repeat when the same (normalised) sender sent the same Message-ID;
before, anyone who sent a player's Message-ID first made the player's own mail
a "duplicate". The new unique index (sender, message_id) also serves the count
of a sender's mails in the hour, so the index on sender alone goes.

Downgrade: the old schema holds one row per Message-ID, so of rows that share
one only the first (lowest id) is kept.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: Union[str, None] = "0012"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# The constraint of 0001 has no name: SQLite's batch rebuild names it by this convention,
# PostgreSQL named it itself (<table>_<column>_key).
_UNNAMED = {"uq": "%(table_name)s_%(column_0_name)s_key"}
_OLD = "inbound_message_message_id_key"
_NEW = "uq_inbound_message_sender_message_id"


def upgrade() -> None:
    with op.batch_alter_table("inbound_message", naming_convention=_UNNAMED) as batch:
        batch.drop_constraint(_OLD, type_="unique")
        batch.drop_index("ix_inbound_message_sender")
        batch.create_unique_constraint(_NEW, ["sender", "message_id"])


def downgrade() -> None:
    later = sa.text("DELETE FROM inbound_message WHERE id NOT IN "
                    "(SELECT min(id) FROM inbound_message GROUP BY message_id)")
    op.execute(later)
    with op.batch_alter_table("inbound_message") as batch:
        batch.drop_constraint(_NEW, type_="unique")
        batch.create_index("ix_inbound_message_sender", ["sender"], unique=False)
        batch.create_unique_constraint(_OLD, ["message_id"])
