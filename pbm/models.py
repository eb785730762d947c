"""Database tables. The move log (``MoveRecord``) is the truth; ``Board.state``
is a cache that always equals a replay of the log."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(sa.types.TypeDecorator):
    """A timezone-aware UTC timestamp on every backend (SQLite stores it naive)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use timezone-aware UTC")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Player(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    userid: str = Field(max_length=32, unique=True, index=True)
    email: Optional[str] = Field(default=None, max_length=254, unique=True, index=True)  # None: no mail
    # (the server's own player, and browser seats without an address)
    password_hash: Optional[str] = Field(default=None, max_length=255)
    invited: bool = False  # created by a challenge; no password until signup
    display_name: Optional[str] = Field(default=None, max_length=40)  # how pages name a browser seat
    # (Host, Guest, or what was chosen on /new); None: the userid
    language: str = Field(default="en", max_length=2, sa_column_kwargs={"server_default": "en"})  # of the
    # mails this player gets: en or de (command "language"); pbm.i18n.LANGUAGES
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    closed_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime)  # signed off: no login,
    # no address; the userid stays so records read and nobody takes it again


class Room(SQLModel, table=True):
    """A game started in the browser (``/new``), without accounts; its boards (one
    per round) point to it.

    ``mode``: ``same-device`` (both seats on one screen: either seat's link acts for
    the side to act), ``friend`` (the second seat goes to the first browser that opens
    ``/join/<invite>``) or ``computer``. A browser that holds a seat of a friend room
    keeps a key in a cookie; only its SHA-256 is stored here."""

    __tablename__ = "room"

    id: Optional[int] = Field(default=None, primary_key=True)
    mode: str = Field(max_length=12)
    invite: Optional[str] = Field(default=None, max_length=40, unique=True)  # friend rooms
    host_key: Optional[str] = Field(default=None, max_length=64)
    guest_key: Optional[str] = Field(default=None, max_length=64)  # None until someone joined
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


_board_version = sa.Column("version", sa.Integer, nullable=False)


class Board(SQLModel, table=True):
    """One game between two seats. Seat 0 moves first."""

    __tablename__ = "board"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Optional[int] = Field(default=None, sa_column=sa.Column(
        sa.Integer, sa.Identity(start=101), primary_key=True))
    game: str = Field(max_length=20, index=True)
    options: dict = Field(default_factory=dict, sa_type=sa.JSON)
    seat0_id: int = Field(foreign_key="player.id", index=True)
    seat1_id: int = Field(foreign_key="player.id", index=True)
    token0: str = Field(max_length=40, unique=True)
    token1: str = Field(max_length=40, unique=True)
    state: dict = Field(default_factory=dict, sa_type=sa.JSON)
    status: str = Field(default="active", max_length=12, index=True)  # active | finished
    outcome: Optional[dict] = Field(default=None, sa_type=sa.JSON)
    move_count: int = 0
    to_move: Optional[int] = None  # seat index, None when over
    nag_days: float = 4.0
    expire_days: float = 7.0
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    last_move_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, index=True)
    nag_due_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime, index=True)
    expire_due_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime, index=True)
    nagged_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime)
    challenger_seat: Optional[int] = None  # the seat of the player whose challenge began the board (not
    # theirs to decline); None for a new round, a browser game, and boards from before it was kept
    newround_votes: int = 0  # bit per seat: asked for a new round after the game
    next_board_id: Optional[int] = None  # the new round's board
    room_id: Optional[int] = Field(default=None, foreign_key="room.id", index=True)  # started in the browser
    # An open request to the other seat (``requests``): ``undo`` (take back to before
    # log entry ``request_move``) or ``draw`` (an offer); any new log entry ends it.
    request_kind: Optional[str] = Field(default=None, max_length=6)
    request_seat: Optional[int] = None
    request_move: Optional[int] = None
    # A move kept for ``queued_seat`` until its turn comes, played then (``queue``).
    queued_seat: Optional[int] = None
    queued_move: Optional[str] = Field(default=None, max_length=200)
    # A move shown by ``submit``, played by ``confirm`` while the log still has
    # ``submitted_at_move`` entries.
    submitted_seat: Optional[int] = None
    submitted_move: Optional[str] = Field(default=None, max_length=200)
    submitted_at_move: Optional[int] = None
    version: Optional[int] = Field(default=None, sa_column=_board_version)

    # A stale write (someone else changed the board first) raises StaleDataError.
    __mapper_args__: Any = {"version_id_col": _board_version}

    def seat_of(self, player_id: int) -> int | None:
        if player_id == self.seat0_id:
            return 0
        if player_id == self.seat1_id:
            return 1
        return None

    def token(self, seat: int) -> str:
        return self.token0 if seat == 0 else self.token1

    def seat_of_token(self, token: str) -> int:
        """The seat whose private link ``token`` is (one of this board's tokens)."""
        return 0 if token == self.token0 else 1

    def player_id(self, seat: int) -> int:
        return self.seat0_id if seat == 0 else self.seat1_id


class MoveRecord(SQLModel, table=True):
    """One entry of a board's append-only log.

    kind: ``move`` (text is the canonical move), ``auto`` (a forced move the
    server played for that seat), ``queued`` (a move the seat queued, played
    when its turn came), ``resign``, ``decline`` (refused before
    the seat's first move), ``forfeit`` (the seat to move ran out of time),
    ``cancel`` (expired before both players had moved), ``expire``
    (expired while both could act, as in Go's scoring), ``undo`` (text
    ``undo N``: entries N onward are taken back, by agreement) or ``draw``
    (a draw offer accepted, or still open at expiry: seat None).
    """

    __tablename__ = "move"
    __table_args__ = (sa.UniqueConstraint("board_id", "number"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    board_id: int = Field(foreign_key="board.id")  # found by the unique (board_id, number) index
    number: int
    seat: Optional[int] = None
    kind: str = Field(default="move", max_length=10)
    text: str = Field(default="", max_length=200)
    comment: str = Field(default="", sa_type=sa.Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class InboundMessage(SQLModel, table=True):
    """Every inbound mail we handled, by sender and Message-ID, so a repeat is applied once.

    Unique per (normalised sender, Message-ID), not per Message-ID alone: a mail from
    someone else that carries a player's Message-ID must not make the player's own
    mail a "duplicate". The index also serves the count of a sender's mails."""

    __tablename__ = "inbound_message"
    __table_args__ = (sa.UniqueConstraint("sender", "message_id", name="uq_inbound_message_sender_message_id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    message_id: str = Field(max_length=255)
    sender: str = Field(default="", max_length=320)
    subject: str = Field(default="", max_length=500)
    status: str = Field(max_length=12)  # applied | rejected | ignored
    board_id: Optional[int] = None
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    received_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


# The outbox rows still to send, as the sweep's statements and the index of them both
# write it: a planner uses a partial index only for a query whose condition holds its own.
OUTBOX_UNSENT = "status IN ('pending', 'sending')"


class OutboxMail(SQLModel, table=True):
    """An outgoing mail, written in the transaction that caused it. Only the mails still
    to send are indexed for the sweep (``ix_outbox_unsent``): the sent ones, nearly
    every row, are never looked for by their status or times."""

    __tablename__ = "outbox"
    __table_args__ = (sa.Index("ix_outbox_unsent", "next_attempt_at", sqlite_where=sa.text(OUTBOX_UNSENT),
                               postgresql_where=sa.text(OUTBOX_UNSENT)),)

    id: Optional[int] = Field(default=None, primary_key=True)
    message_id: str = Field(max_length=255, unique=True)
    board_id: Optional[int] = Field(default=None, index=True)
    recipient: str = Field(max_length=320)
    subject: str = Field(default="", max_length=500)
    raw: bytes = Field(sa_type=sa.LargeBinary)
    status: str = Field(default="pending", max_length=10)  # pending | sending | sent | failed
    attempts: int = 0
    next_attempt_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    claimed_until: Optional[datetime] = Field(default=None, sa_type=UTCDateTime)
    claim: Optional[str] = Field(default=None, max_length=32)  # who is sending it now
    last_error: Optional[str] = Field(default=None, sa_type=sa.Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    sent_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime)


class Confirmation(SQLModel, table=True):
    """An address waiting to be confirmed by a reply from it (to ``pbm+0.<token>@``).

    ``action`` ``signup``: make the account ``userid`` (password hash kept here)
    with this address; ``address``: move the account ``player_id`` to it;
    ``add``: add it to that account; ``disown``: the welcome mail of the account
    ``userid``, whose reply "not me" takes the account's password away."""

    __tablename__ = "confirmation"

    id: Optional[int] = Field(default=None, primary_key=True)
    token: str = Field(max_length=40, unique=True)
    action: str = Field(max_length=10)
    address: str = Field(max_length=254, index=True)
    userid: str = Field(default="", max_length=32)
    password_hash: Optional[str] = Field(default=None, max_length=255)
    player_id: Optional[int] = Field(default=None, foreign_key="player.id")
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime)


class PasswordFailure(SQLModel, table=True):
    """A wrong password: counted per account and per sender to lock out guessing."""

    __tablename__ = "password_failure"

    id: Optional[int] = Field(default=None, primary_key=True)
    userid: str = Field(max_length=32, index=True)
    sender: str = Field(max_length=320, index=True)
    at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, index=True)


class UsedToken(SQLModel, table=True):
    """A webhook signature token (Mailgun's ``token``) taken by a request: never again
    for another one (the signature covers the token, not the mail)."""

    __tablename__ = "used_token"

    token: str = Field(primary_key=True, max_length=100)
    used_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, index=True)
    digest: Optional[str] = Field(default=None, max_length=64)  # SHA-256 of the request's mail: its retry may again


class PlayerAddress(SQLModel, table=True):
    """Another address of an account (``add``), confirmed by a reply from it: mail
    from it counts as the player's; board mails still go to ``Player.email``."""

    __tablename__ = "player_address"

    id: Optional[int] = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id", index=True)
    email: str = Field(max_length=254, unique=True)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class Subscription(SQLModel, table=True):
    """A player watching boards: ``board_id`` one board; None every board of ``game``
    created from ``created_at`` on. ``watching`` False: this board is left out of an
    all-boards subscription (``unsubscribe <board>``)."""

    __tablename__ = "subscription"
    __table_args__ = (sa.UniqueConstraint("player_id", "game", "board_id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id", index=True)
    game: str = Field(max_length=20, index=True)
    board_id: Optional[int] = Field(default=None, foreign_key="board.id", index=True)
    watching: bool = True
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class Chat(SQLModel, table=True):
    """Words about a board (``chat``) from a player or a watcher; part of the board's
    record beside the move log (``after_move``: how many log entries came before)."""

    __tablename__ = "chat"

    id: Optional[int] = Field(default=None, primary_key=True)
    board_id: int = Field(foreign_key="board.id", index=True)
    player_id: int = Field(foreign_key="player.id")
    after_move: int
    text: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class Vacation(SQLModel, table=True):
    """A player away: no reminders and no expiry on their boards until ``until``
    (or ``off``); ``ended_at`` None while it runs. ``days``: the days it counts
    against the yearly allowance (the days taken, once it has ended)."""

    __tablename__ = "vacation"

    id: Optional[int] = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id", index=True)
    started_at: datetime = Field(sa_type=UTCDateTime, index=True)
    until: datetime = Field(sa_type=UTCDateTime, index=True)
    ended_at: Optional[datetime] = Field(default=None, sa_type=UTCDateTime, index=True)
    days: int


class Rating(SQLModel, table=True):
    """A player's Glicko-2 rating in one game, and their rated results in it. Changed
    only by ``service.ratings`` when a rated game ends (each change is a ``RatingChange``)."""

    __tablename__ = "rating"
    __table_args__ = (sa.UniqueConstraint("player_id", "game"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id")
    game: str = Field(max_length=20, index=True)
    rating: float
    deviation: float  # Glicko's RD, in rating points
    volatility: float
    games: int = 0  # rated games finished
    wins: int = 0
    losses: int = 0
    draws: int = 0
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class RatingChange(SQLModel, table=True):
    """How one rated game moved one player's rating: written once, in the transaction
    that ended the board (the unique key makes a second count impossible)."""

    __tablename__ = "rating_change"
    __table_args__ = (sa.UniqueConstraint("board_id", "player_id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    board_id: int = Field(foreign_key="board.id")
    player_id: int = Field(foreign_key="player.id", index=True)
    game: str = Field(max_length=20)
    score: float  # 1 won, 0.5 drawn, 0 lost
    rating_before: float
    deviation_before: float
    rating_after: float
    deviation_after: float
    volatility_after: float
    games: int  # the player's rated games of this game, this one included
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class ChallengePolicy(SQLModel, table=True):
    """Whether a player takes challenges to one game, and at most how many active
    boards of it they want (None: no limit). No row: accepts, no limit."""

    __tablename__ = "challenge_policy"
    __table_args__ = (sa.UniqueConstraint("player_id", "game"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    player_id: int = Field(foreign_key="player.id")
    game: str = Field(max_length=20)
    accepts: bool = True
    board_limit: Optional[int] = None
