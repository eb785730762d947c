"""social: watchers (subscription), chat, vacations, more addresses of an account,
closed accounts (signoff)

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-30
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel
import pbm.models

revision: str = '0010'
down_revision: Union[str, None] = '0008'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('player_address',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('email', sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False),
    sa.Column('created_at', pbm.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('email')
    )
    with op.batch_alter_table('player_address', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_player_address_player_id'), ['player_id'], unique=False)

    op.create_table('vacation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('started_at', pbm.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('until', pbm.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ended_at', pbm.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('days', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('vacation', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_vacation_ended_at'), ['ended_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_vacation_player_id'), ['player_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_vacation_started_at'), ['started_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_vacation_until'), ['until'], unique=False)

    op.create_table('chat',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('after_move', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('created_at', pbm.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['board.id'], ),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('chat', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_chat_board_id'), ['board_id'], unique=False)

    op.create_table('subscription',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('game', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=True),
    sa.Column('watching', sa.Boolean(), nullable=False),
    sa.Column('created_at', pbm.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['board.id'], ),
    sa.ForeignKeyConstraint(['player_id'], ['player.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('player_id', 'game', 'board_id')
    )
    with op.batch_alter_table('subscription', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_subscription_board_id'), ['board_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_subscription_game'), ['game'], unique=False)
        batch_op.create_index(batch_op.f('ix_subscription_player_id'), ['player_id'], unique=False)

    with op.batch_alter_table('player', schema=None) as batch_op:
        batch_op.add_column(sa.Column('closed_at', pbm.models.UTCDateTime(timezone=True), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('player', schema=None) as batch_op:
        batch_op.drop_column('closed_at')

    with op.batch_alter_table('subscription', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_subscription_player_id'))
        batch_op.drop_index(batch_op.f('ix_subscription_game'))
        batch_op.drop_index(batch_op.f('ix_subscription_board_id'))

    op.drop_table('subscription')
    with op.batch_alter_table('chat', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chat_board_id'))

    op.drop_table('chat')
    with op.batch_alter_table('vacation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_vacation_until'))
        batch_op.drop_index(batch_op.f('ix_vacation_started_at'))
        batch_op.drop_index(batch_op.f('ix_vacation_player_id'))
        batch_op.drop_index(batch_op.f('ix_vacation_ended_at'))

    op.drop_table('vacation')
    with op.batch_alter_table('player_address', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_player_address_player_id'))

    op.drop_table('player_address')
