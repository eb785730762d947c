"""outbox: one partial index of the mails still to send, for the sweep

The indexes of every row's status and next attempt grew with every mail ever
sent and were written twice for each (queued, then marked sent); the sweep
looks only for mails pending or being sent, which stay few.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: Union[str, None] = "0016"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

UNSENT = "status IN ('pending', 'sending')"  # pbm.models.OUTBOX_UNSENT when this was written


def upgrade() -> None:
    op.create_index("ix_outbox_unsent", "outbox", ["next_attempt_at"], unique=False,
                    sqlite_where=sa.text(UNSENT), postgresql_where=sa.text(UNSENT))
    op.drop_index("ix_outbox_status", table_name="outbox")
    op.drop_index("ix_outbox_next_attempt_at", table_name="outbox")


def downgrade() -> None:
    op.create_index("ix_outbox_next_attempt_at", "outbox", ["next_attempt_at"], unique=False)
    op.create_index("ix_outbox_status", "outbox", ["status"], unique=False)
    op.drop_index("ix_outbox_unsent", table_name="outbox")
