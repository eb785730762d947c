"""The service: every door (``pbm ingest``, the webhook, the SMTP listener, the play
page, the scheduler) calls one of these few methods, each of which runs its work
through the one unit of work (``unit.run``).

Module map: ``inbound`` reads a mail into command lines; ``handlers`` is the
table of commands; ``accounts`` (with ``addresses`` and ``account_addresses``),
``boards`` (the only writer of the move log; ``forced`` the moves the rules leave; ``rounds`` starts new rounds;
``rebuild`` checks the caches against the logs),
``queries`` (read-only), ``deadlines``; ``letters`` + ``templates/`` write every
mail; ``errors`` maps what went wrong to each door's answer.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import bindparam, insert
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import delete, select

from ..config import Settings
from ..db import make_engine, reading, reading_rows
from ..mail.inbound import InboundMail, MalformedMail, parse_mail
from ..command_passwords import redact
from ..models import Board, InboundMessage, Player, UsedToken, utcnow
from . import addresses, boards, computer, deadlines, inbound, letters, passwords, rebuild, social, unsubscribe
from .errors import PlayerError, Result, Status
from .unit import Unit, run

log = logging.getLogger(__name__)
# Built once: they run for every mail (a statement made per call costs more Python than its round trip).
_RECORD_MAIL = insert(InboundMessage)
_SEEN = select(InboundMessage.id).where(InboundMessage.sender == bindparam("sender"),
                                        InboundMessage.message_id == bindparam("message_id"))

__all__ = ["Service", "Result", "Status", "PlayerError"]


class Service:
    """The play-by-mail service over one database and one set of settings."""

    def __init__(self, settings: Settings, engine=None):
        self.settings = settings
        self.engine = engine or make_engine(settings.database_url)

    def handle_raw(self, raw: bytes, envelope_recipients: list[str] | None = None,
                   now: datetime | None = None) -> Result:
        """Handle one raw RFC 5322 message (callers check the size limit first).
        Never raises: what went wrong is the result's status."""
        try:
            mail = parse_mail(raw, envelope_recipients)
        except MalformedMail as error:
            return Result(Status.MALFORMED, error=f"The message could not be used: {error}.")
        try:
            return self.handle(mail, now)
        except DBAPIError as error:
            log.warning("database unavailable for %s: %s", mail.message_id, error.__class__.__name__)
        except Exception:
            log.exception("handling %s failed", mail.message_id)
        return Result(Status.RETRY, error="The server is busy; try again later.")

    @staticmethod
    def _seen(connection, mail: InboundMail) -> bool:
        """Whether this sender's mail with this Message-ID was handled before (a Message-ID
        is the sender's own: another sender's mail with it is no repeat of this one)."""
        return connection.execute(_SEEN, {"sender": mail.sender[:320],
                                          "message_id": mail.message_id}).first() is not None

    def handle(self, mail: InboundMail, now: datetime | None = None) -> Result:
        """Answer one parsed mail in one unit of work; a Message-ID its sender sent before is a duplicate."""
        mail = replace(mail, sender=addresses.sender_address(mail.sender))
        if mail.automatic is None and addresses.is_server_address(self.settings, mail.sender):
            mail = replace(mail, automatic="sent from the server's own address")  # answering it would loop
        request = None if mail.automatic else inbound.read(mail, self.settings)
        # A repeat is caught by the unique (sender, Message-ID) as the unit ends; a mail with
        # passwords looks first, in the read that fetches the hashes, to spare a
        # repeat the slow hash.
        checked, pairs = {}, request.credentials if request is not None else []
        if pairs:
            at = now or utcnow()
            with reading_rows(self.engine) as connection:
                if self._seen(connection, mail):
                    return Result(Status.DUPLICATE)
                stored = passwords.look_up(connection, pairs, mail.sender, at)
            checked = passwords.precheck(self.engine, pairs, mail.sender, at, stored)
        new_hashes = passwords.hashed_beforehand(request.commands if request else ())

        def work(unit: Unit) -> Result:
            unit.passwords, unit.new_hashes = checked, new_hashes
            if request is None:
                log.info("ignored automatic mail %s from %s (%s)", mail.message_id, mail.sender, mail.automatic)
                result, why = Result(Status.IGNORED), mail.automatic
            else:
                inbound.answer(unit, request)
                board_id = unit.board.id if unit.board is not None else _last_board(unit)
                why = " ".join(request.errors) or None
                result = Result(Status.REJECTED if request.errors else Status.APPLIED, board_id, why)
            # Recorded as the work ends, in its transaction: a twin that ran at the same
            # time fails here on the unique (sender, Message-ID) and rolls back whole (``duplicate``).
            unit.write(_RECORD_MAIL, {
                "message_id": mail.message_id, "sender": mail.sender[:320], "subject": redact(mail.subject)[:500],
                "status": result.status.value, "board_id": result.board, "error": why, "received_at": unit.now})
            return result

        again = True  # once: another mail made the same row at the same time (a userid, an
        while True:  # address); run again, the command sees that row and answers as after it
            try:
                return run(self.engine, self.settings, work, now=now, mail=mail, optimistic=True)
            except IntegrityError:
                with reading_rows(self.engine) as connection:
                    if self._seen(connection, mail):
                        return Result(Status.DUPLICATE)
                if not again:
                    raise
                again = False

    def play_by_token(self, token: str, move_text: str, comment: str = "", number: int | None = None,
                      now: datetime | None = None) -> Result:
        """A move from a player's private web page (the token is the credential)."""
        def work(unit: Unit) -> Result:
            board, seat, players = boards.by_token(unit.session, token, move=move_text)  # players held for play
            if board is None:
                return Result(Status.REJECTED, None, "This private link is not valid.")
            unit.board = board
            boards.play(unit, board, seat, move_text, comment, number)
            return Result(Status.APPLIED, board.id)

        try:
            return run(self.engine, self.settings, work, now=now, optimistic=True)
        except PlayerError as error:
            with reading(self.engine) as session:
                board, _seat, _players = boards.by_token(session, token, lock=False)
            return Result(Status.REJECTED, board.id if board else None, str(error))

    def send_reminders(self, now: datetime | None = None) -> int:
        return deadlines.send_reminders(self.engine, self.settings, now)

    def expire_boards(self, now: datetime | None = None) -> int:
        return deadlines.expire_boards(self.engine, self.settings, now)

    def take_token(self, token: str, digest: str) -> bool:
        """Take a webhook signature token for the request whose mail has the SHA-256
        ``digest``, before the mail is handled (and forget tokens too old to matter):
        True when it was free or is that request's own (a provider's retry of it),
        False when another request has it, however near at the same time (the unique
        token decides). Raises DBAPIError when the database cannot say."""
        def take(unit: Unit) -> None:
            unit.session.execute(delete(UsedToken).where(UsedToken.used_at < unit.now - timedelta(hours=1)))
            unit.session.add(UsedToken(token=token[:100], used_at=unit.now, digest=digest))

        try:
            run(self.engine, self.settings, take)
        except IntegrityError:  # taken: by this very request before, or by another
            with reading(self.engine) as session:
                taken = session.get(UsedToken, token[:100])
            return taken is not None and taken.digest == digest
        return True

    def watched_by_link(self, token: str) -> tuple[int, str, bool] | None:
        """What a one-click unsubscribe link names (``unsubscribe``): (board, game,
        whether its watcher watches it now); None for a link this server did not sign,
        or whose watcher or board is gone."""
        named = unsubscribe.read(self.settings, token)
        if named is None:
            return None
        with reading(self.engine) as session:
            player, board = session.get(Player, named[0]), session.get(Board, named[1])
            if player is None or board is None:
                return None
            return board.id, board.game, player in letters.watchers(session, board)

    def stop_watching_by_link(self, token: str) -> bool:
        """Follow a one-click unsubscribe link: its watcher no longer gets the board's
        mails (done already is done). False for a link this server did not sign."""
        named = unsubscribe.read(self.settings, token)
        if named is None:
            return False
        return run(self.engine, self.settings, lambda unit: social.stop_watching(unit, *named)) is not None

    def computer_moves(self) -> int:
        """Let the computer move wherever it is to act; returns how many moves it made."""
        return computer.sweep(self.engine, self.settings)

    def rebuild(self) -> list[str]:
        """Replay every board's log into its cache; a line per board that differed."""
        return rebuild.rebuild(self.engine, self.settings)


def _last_board(unit: Unit) -> int | None:
    """The board a mail's last successful command created or changed, if any (not one
    it changed only for its pages, ``Unit.board_changed(aside=True)``)."""
    return next((board_id for board_id in reversed(unit.changed) if board_id not in unit.aside), None)
