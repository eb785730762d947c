"""inbound_message.sender indexed: mails per address per hour are counted

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""
from typing import Sequence, Union

from alembic import op

revision: str = "0007"
down_revision: Union[str, None] = "0006"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_inbound_message_sender"), ["sender"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("inbound_message", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inbound_message_sender"))
