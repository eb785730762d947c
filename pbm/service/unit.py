"""The one unit of work every door uses.

``run(engine, settings, work)`` opens the write transaction, gives ``work`` a
``Unit`` to act through, retries the whole of it when another writer changed
the same board first (a version conflict) or PostgreSQL broke a deadlock by
rolling it back (two mails locking two players' rows in opposite order),
writes the mails the work queued to the outbox (and the marks "sent" of mails
this process delivered since its last commit, ``courier.carried_marks``), commits, and only then hands
those mails to the process's delivery thread (``courier.deliver_after_commit``:
the caller answers without waiting for them) and publishes the boards it
changed to live pages.

A board's ``version`` (the optimistic-locking counter, raised by every write of
the board row) is also what live pages know the board by: every change a page
shows (a move, a request and its answer, a queued or submitted move, a chat, a
vacation, a vote for a new round) passes ``Unit.board_changed``, which writes the
row in this transaction, so its version rises; the new versions are published.
Nothing is sent for work that rolled back; a ``PlayerError`` raised by the
work rolls everything back and reaches the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, TypeVar

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm.attributes import flag_modified
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session

from ..config import Settings
from ..db import NeedsLock, begin_writing, transaction, write
from ..versioned_writes import write_changes
from ..mail.inbound import InboundMail
from ..mail.outbound import Composed
from ..models import Board, utcnow
from ..courier import carried_marks, deliver_after_commit
from ..outbox import Outgoing, outgoing, queue
from . import events, passwords

T = TypeVar("T")
# Called after every commit that changed boards, with the committed unit; the
# computer player registers here to think about its next move.
AFTER_COMMIT: list[Callable[[Engine, "Unit"], None]] = []
ATTEMPTS = 3  # a version conflict (or a deadlock) is retried this often before it is an error
DEADLOCK = "40P01"  # PostgreSQL's SQLSTATE for a transaction rolled back to break a deadlock
# Every notice of a commit in one statement (the versions, and who sits at the boards).
_NOTIFY = text("SELECT pg_notify(c, p) FROM unnest(CAST(:channels AS text[]), CAST(:payloads AS text[])) AS n(c, p)")


@dataclass
class Unit:
    """What one unit of work may touch: the session, the time, the mail it answers
    (if any), and what it queued for after the commit."""

    session: Session
    settings: Settings
    now: datetime
    mail: InboundMail | None = None
    outbox: list[Outgoing] = field(default_factory=list)  # written to the outbox as the unit ends
    changed: dict[int, Board] = field(default_factory=dict)  # board id -> a board whose pages must refresh
    seated: dict[int, tuple[int, int]] = field(default_factory=dict)  # changed board id -> its players
    aside: set[int] = field(default_factory=set)  # changed boards the command was not about (their pages refresh)
    board: Board | None = None  # the board the running command is about (errors name it)
    held: list = field(default_factory=list)  # read ahead (a board's players): the session keeps only what is held
    passwords: dict = field(default_factory=dict)  # (userid, password) -> passwords.Verdict, checked beforehand
    new_hashes: dict = field(default_factory=dict)  # new password -> its hash, made beforehand
    answers: int = 0  # mails this unit queued to the sender of the mail it answers
    strangers: int = 0  # mails this unit queued to addresses without an account (invitations, confirmations)
    relayed: int = 0  # mails this unit queued passing a player's words on (chat, message)
    new_boards: int = 0  # boards this unit started
    answer_budget: int | None = None  # answers the sender may still get this hour (counted once per unit)
    played: dict = field(default_factory=dict)  # (board id, log number) -> what that move did, when known

    def moves_played(self, board: Board) -> dict:
        """What the moves this unit logged on ``board`` did, by log number (``BoardView.current``)."""
        return {number: done for (board_id, number), done in self.played.items() if board_id == board.id}

    def queue(self, mail: Composed, board_id: int | None) -> None:
        """Put one composed mail in the outbox, in this transaction (written as the work ends)."""
        self.outbox.append(outgoing(mail, board_id))

    def write(self, statement, params: dict) -> None:
        """Run a Core write (an INSERT) in this transaction (``db.write``)."""
        write(self.session, statement, params)

    def new_password_hash(self, password: str) -> str:
        """The hash of a password this unit sets: made before the transaction when
        the mail was read (``new_hashes``), otherwise now."""
        return self.new_hashes.get(password) or passwords.hashed(password)

    def board_changed(self, board: Board, *, aside: bool = False) -> None:
        """Tell live pages about this board once the transaction commits: the board row
        is written in this transaction even when nothing else of it changed (a chat, a
        vacation), so its version rises, and that version is published. ``aside``: the
        command was not about this board (a watcher leaving every board of a game), so
        its answer does not name it."""
        if aside and board.id not in self.changed:
            self.aside.add(board.id)
        elif not aside:
            self.aside.discard(board.id)
        # An unindexed column, written unchanged: a flagged indexed one (status) cost SQLite
        # a write of its index for every move. Loaded again first if a savepoint's rollback
        # expired it: flag_modified needs the value.
        board.move_count
        flag_modified(board, "move_count")
        self.changed[board.id] = board
        self.seated[board.id] = (board.seat0_id, board.seat1_id)

    def versions(self) -> dict[int, int]:
        """The changed boards' versions as this transaction leaves them (after its last flush)."""
        return {board_id: board.version for board_id, board in self.changed.items()}


def run(engine: Engine, settings: Settings, work: Callable[[Unit], T], *, now: datetime | None = None,
        mail: InboundMail | None = None, optimistic: bool = False) -> T:
    """Run ``work`` in one write transaction with the mails it queued, retried on a
    version conflict; after the commit, hand those mails to the delivery thread and
    publish its board changes. Returns what ``work`` returns; any exception rolls
    back and propagates.

    ``optimistic``: on SQLite, work the unit out before taking the write lock, and
    on PostgreSQL without a savepoint per command (see ``db.transaction``); when
    that cannot be done (a refusal, a board changed meanwhile), or when it fails in
    any other way (reads from two commits), the work runs again the usual way."""
    now = now or utcnow()
    attempt = 0
    while True:
        unit = Unit(None, settings, now, mail)  # type: ignore[arg-type]
        try:
            with carried_marks(engine) as marks, transaction(engine, optimistic=optimistic) as session:
                unit.session = session
                result = work(unit)
                queue(session, unit.outbox, now)
                marks.write(session)  # this process's delivered mails marked sent: no transaction of their own
                begin_writing(session, versioned=(Board,))  # an optimistic unit's writes, under the lock
                write_changes(session)
                versions = unit.versions()
                if versions and engine.dialect.name == "postgresql":
                    channels, payloads = zip(*events.notices(versions, unit.seated))
                    session.execute(_NOTIFY, {"channels": list(channels), "payloads": list(payloads)})
        except NeedsLock:
            optimistic = False
            continue
        except StaleDataError:
            attempt, optimistic = attempt + 1, False
            if attempt == ATTEMPTS:
                raise
            continue
        except DBAPIError as error:  # PostgreSQL chose this unit to break a deadlock: it did nothing; again
            attempt += 1
            if getattr(error.orig, "sqlstate", None) != DEADLOCK or attempt == ATTEMPTS:
                raise
            continue
        except Exception:
            if not optimistic:
                raise
            # On SQLite an optimistic unit's reads are outside a transaction: a board row read
            # before another move's commit and its move log read after it disagree (the rules
            # then refuse a move the board allowed). Whatever failed, it is decided under the lock.
            optimistic = False
            continue
        deliver_after_commit(engine, settings, unit.outbox)
        events.publish(versions, unit.seated)
        events.tell_other_processes(engine, versions, unit.seated)
        if versions:
            for hook in AFTER_COMMIT:
                hook(engine, unit)
        return result
