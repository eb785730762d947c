"""The service: authorise, load, apply, record, notify, in one transaction.

``Server.handle_raw`` is the single path every inbound mail takes (``pbm
ingest``, the webhook, the SMTP listener); ``Server.play_by_token`` is the
web form's path into the same move logic. One inbound message is one
database transaction: the log entry, the board's cached state, the record
of the processed Message-ID and the outgoing mails commit together or not
at all; the mails are handed to the transport after the commit.
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import or_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, select
from werkzeug.security import check_password_hash, generate_password_hash

from . import help as helptext
from .boardview import BoardView, ending, game_record, load_players, load_records
from .commands import USAGE, Command, CommandError, parse_command
from .config import Settings
from .db import make_engine, reading, transaction
from .games import Game, MoveError, OptionError, Outcome, game_names, get_game
from .mail.inbound import InboundMail, find_reply_tag, parse_mail, split_command, visible_reply
from .mail.outbound import compose, quote, reply_address
from .models import Board, InboundMessage, MoveRecord, OutboxMail, Player, utcnow
from .outbox import deliver_after_commit, queue

log = logging.getLogger(__name__)

USERID = re.compile(r"^[a-z][a-z0-9_.-]{1,19}$")
MIN_PASSWORD = 4
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
RECENT_MOVES = 10  # moves listed in a board mail
MAX_COMMANDS = 50  # lines one 'multiple' mail may hold
MAX_COMMENT = 4000  # characters of a comment passed on to the opponent


class PlayerError(Exception):
    """A player's mistake: ``str()`` is the sentence, ``usage`` what to send instead.
    The error mail names the board the command was about (``_Work.current``)."""

    def __init__(self, sentence: str, usage: str | None = None):
        super().__init__(sentence)
        self.usage = usage


@dataclass
class HandleResult:
    status: str  # applied | rejected | duplicate | ignored
    board: int | None = None
    error: str | None = None

    def to_json(self) -> dict:
        return {"status": self.status, "board": self.board, "error": self.error}


def new_token() -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(20))


def normalise_address(address: str) -> str:
    try:
        return validate_email(address, check_deliverability=False, test_environment=True).normalized.lower()
    except EmailNotValidError as error:
        raise PlayerError(f"{address!r} is not a usable email address: {error}") from None


@dataclass
class _Work:
    """What one inbound message did inside its transaction."""

    session: Session
    now: datetime
    mail: InboundMail | None
    mails: list[OutboxMail] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    board_id: int | None = None
    current: Board | None = None  # the board the running command is about


class Server:
    """The play-by-mail service over one database and one set of settings."""

    def __init__(self, settings: Settings, engine=None):
        self.settings = settings
        self.engine = engine or make_engine(settings.database_url)

    # -- entry points --------------------------------------------------------

    def handle_raw(self, raw: bytes, envelope_recipients: list[str] | None = None,
                   now: datetime | None = None) -> HandleResult:
        """Handle one raw RFC 5322 message; callers check size limits beforehand.

        Raises MalformedMail for bytes that hold no answerable message (no
        sender): there is no one to tell, so the caller refuses it."""
        return self.handle(parse_mail(raw, envelope_recipients), now)

    def handle(self, mail: InboundMail, now: datetime | None = None) -> HandleResult:
        now = now or utcnow()
        with reading(self.engine) as session:
            if session.exec(select(InboundMessage.id).where(
                    InboundMessage.message_id == mail.message_id)).first() is not None:
                return HandleResult("duplicate")
        for attempt in range(3):
            try:
                return self._handle_once(mail, now)
            except StaleDataError:
                if attempt == 2:
                    raise
            except IntegrityError:
                with reading(self.engine) as session:
                    if session.exec(select(InboundMessage.id).where(
                            InboundMessage.message_id == mail.message_id)).first() is not None:
                        return HandleResult("duplicate")
                raise
        raise AssertionError("unreachable")

    def _handle_once(self, mail: InboundMail, now: datetime) -> HandleResult:
        with transaction(self.engine) as session:
            record = InboundMessage(message_id=mail.message_id, sender=mail.sender[:320],
                                    subject=mail.subject[:500], status="pending", received_at=now)
            session.add(record)
            session.flush()  # a concurrent twin fails here, before any work
            work = _Work(session, now, mail)
            if mail.automatic:
                record.status, record.error = "ignored", mail.automatic
                log.info("ignored automatic mail %s from %s (%s)", mail.message_id, mail.sender,
                         mail.automatic)
            else:
                self._run_mail(work)
                record.status = "rejected" if work.errors else "applied"
                record.error = " ".join(work.errors) or None
                record.board_id = work.board_id
            session.flush()
            outgoing = list(work.mails)
        deliver_after_commit(self.engine, self.settings, outgoing)
        return HandleResult(record.status, work.board_id, record.error)

    def play_by_token(self, token: str, move_text: str, comment: str = "",
                      number: int | None = None, now: datetime | None = None) -> HandleResult:
        """A move from a player's private web page (the token is the credential)."""
        now = now or utcnow()
        for attempt in range(3):
            try:
                with transaction(self.engine) as session:
                    work = _Work(session, now, None)
                    board, seat = self._board_by_token(session, token)
                    if board is None:
                        return HandleResult("rejected", None, "This private link is not valid.")
                    work.board_id = board.id
                    try:
                        self._move(work, board, seat, move_text, comment, number)
                    except (PlayerError, MoveError) as error:
                        return HandleResult("rejected", board.id, str(error))
                    session.flush()
                    outgoing = list(work.mails)
                deliver_after_commit(self.engine, self.settings, outgoing)
                return HandleResult("applied", work.board_id)
            except StaleDataError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    # -- reading the mail ------------------------------------------------------

    def _run_mail(self, work: _Work) -> None:
        mail = work.mail
        tag = find_reply_tag(mail.recipients, self.settings.server_local_part)
        body = visible_reply(mail.body)
        if tag is not None:
            line, comment = split_command(body)
            if not line and not mail.is_reply_subject:
                line = mail.subject
            self._guard(work, None, lambda: self._reply_move(work, tag, line, comment))
            return
        subject = mail.subject.strip()
        if subject and not mail.is_reply_subject:
            line, comment = subject, body
        else:
            line, comment = split_command(body)
        if line.split()[:1] and line.split()[0].lower() == "multiple":
            lines = [ln.strip() for ln in (body if subject.lower().startswith("multiple") else comment)
                     .split("\n") if ln.strip()]
            if not lines:
                self._guard(work, None, self._empty_multiple)
            if len(lines) > MAX_COMMANDS:
                self._guard(work, None, lambda: self._too_many(len(lines)))
                return
            for one in lines:
                self._guard(work, one, lambda one=one: self._command(work, one, ""))
            return
        self._guard(work, line, lambda: self._command(work, line, comment))

    @staticmethod
    def _empty_multiple() -> None:
        raise PlayerError("A 'multiple' mail needs one command per line in its body.", USAGE["help"])

    @staticmethod
    def _too_many(count: int) -> None:
        raise PlayerError(f"A 'multiple' mail may hold at most {MAX_COMMANDS} commands, and this one holds "
                          f"{count}; nothing was done.", "the commands in several mails")

    def _guard(self, work: _Work, line: str | None, action) -> None:
        """Run one command; a player's mistake becomes an error mail, nothing else changes."""
        queued = len(work.mails)
        work.current = None
        try:
            with work.session.begin_nested():
                action()
        except (PlayerError, CommandError, MoveError, OptionError) as error:
            del work.mails[queued:]  # rolled back with the savepoint
            board = work.current
            usage = getattr(error, "usage", None)
            game = get_game(board.game) if board is not None else _game_of_line(line)
            work.errors.append(str(error))
            if board is not None:
                work.board_id = board.id
            self._error_mail(work, str(error), usage, game, board)

    # -- commands ------------------------------------------------------------

    def _command(self, work: _Work, line: str, comment: str) -> None:
        if not line:
            raise PlayerError("The message holds no command: the subject is empty and so is the body.",
                              "help")
        command = parse_command(line)
        handler = getattr(self, f"_cmd_{command.verb}")
        handler(work, command, comment)

    def _cmd_help(self, work: _Work, command: Command, comment: str) -> None:
        game = get_game(command.game) if command.game else None
        if game:
            subject, body = f"{game.title} help", game.help_text()
        else:
            subject, body = "pbm help", helptext.general(self.settings)
        self._send(work, work.mail.sender, subject, body, None)

    def _cmd_signup(self, work: _Work, command: Command, comment: str) -> None:
        s = work.session
        userid = command.userid
        if not USERID.match(userid):
            raise PlayerError(f"{userid!r} cannot be a userid: use 2 to 20 letters, digits, '.', '-' or '_', "
                              "starting with a letter.", USAGE["signup"])
        if len(command.password) < MIN_PASSWORD:
            raise PlayerError(f"The password is too short; use at least {MIN_PASSWORD} characters.",
                              USAGE["signup"])
        address = normalise_address(command.args[0] if command.args else work.mail.sender)
        if s.exec(select(Player).where(Player.userid == userid)).first():
            raise PlayerError(f"The userid {userid} is taken; choose another.", USAGE["signup"])
        existing = s.exec(select(Player).where(Player.email == address)).first()
        if existing and not existing.invited:
            raise PlayerError(f"{address} already belongs to the userid {existing.userid}.",
                              USAGE["change"])
        if existing:  # an invited player claims the account the challenge made
            existing.userid, existing.invited = userid, False
            existing.password_hash = generate_password_hash(command.password)
        else:
            s.add(Player(userid=userid, email=address, password_hash=generate_password_hash(command.password),
                         created_at=work.now))
        body = (f"Welcome to pbm, {userid}.\n\nYour address is {address}. Challenge someone with\n"
                f"    <game> challenge {userid} <opponent>\nand send \"help\" for all commands.")
        self._send(work, address, "pbm signup", body, None)

    def _authenticate(self, session: Session, userid: str, password: str, usage: str) -> Player:
        player = session.exec(select(Player).where(Player.userid == userid)).first()
        if player is None:
            raise PlayerError(f"There is no player called {userid}; sign up first with: "
                              f"signup {userid} <password>", usage)
        if player.password_hash is None:
            raise PlayerError(f"{userid} has no password yet: reply to a board mail to play, or send "
                              f"signup {userid} <password> from {player.email}.", usage)
        if not check_password_hash(player.password_hash, password):
            raise PlayerError(f"The password for {userid} is wrong.", usage)
        return player

    def _cmd_change_password(self, work: _Work, command: Command, comment: str) -> None:
        player = self._authenticate(work.session, command.userid, command.password, USAGE["change"])
        new = command.args[0]
        if len(new) < MIN_PASSWORD:
            raise PlayerError(f"The new password is too short; use at least {MIN_PASSWORD} characters.",
                              USAGE["change"])
        player.password_hash = generate_password_hash(new)
        self._send(work, player.email, "pbm password changed",
                   f"The password of {player.userid} has been changed.", None)

    def _cmd_change_address(self, work: _Work, command: Command, comment: str) -> None:
        player = self._authenticate(work.session, command.userid, command.password, USAGE["change"])
        address = normalise_address(command.args[0])
        other = work.session.exec(select(Player).where(Player.email == address)).first()
        if other and other.id != player.id:
            raise PlayerError(f"{address} already belongs to the userid {other.userid}.", USAGE["change"])
        old, player.email = player.email, address
        text = f"The address of {player.userid} is now {address} (it was {old})."
        self._send(work, old, "pbm address changed", text, None)
        if old != address:
            self._send(work, address, "pbm address changed", text, None)

    def _cmd_challenge(self, work: _Work, command: Command, comment: str) -> None:
        s = work.session
        game = get_game(command.game)
        challenger = s.exec(select(Player).where(Player.email == work.mail.sender)).first()
        if challenger is None or challenger.invited:
            raise PlayerError("Only players with an account can challenge; sign up first with: "
                              "signup <userid> <password>", USAGE["signup"])
        seats = [self._resolve_player(work, name) for name in command.args]
        if seats[0].id == seats[1].id:
            raise PlayerError("A game needs two different players.", USAGE["challenge"])
        if challenger.id not in (seats[0].id, seats[1].id):
            raise PlayerError(f"You ({challenger.userid}) can only start games you play in yourself.",
                              USAGE["challenge"])
        options = game.parse_options(command.options)
        nag = command.timing.get("nagtime", self.settings.nag_days)
        expire = command.timing.get("expiretime", self.settings.expire_days)
        if nag >= expire:
            raise PlayerError(f"The reminder (--nagtime={nag:g}) must come before the expiry "
                              f"(--expiretime={expire:g}).", USAGE["challenge"])
        board = self._new_board(work, game, options, (seats[0], seats[1]), nag, expire)
        self._board_mails(work, board, (seats[0], seats[1]), comment="", mover=None,
                          invited={p.id for p in seats if p.invited}, challenger=challenger)

    def _new_board(self, work: _Work, game: Game, options: dict, seats: tuple[Player, Player],
                   nag: float, expire: float) -> Board:
        state = game.initial_state(options)
        board = Board(game=game.name, options=options, seat0_id=seats[0].id, seat1_id=seats[1].id,
                      token0=new_token(), token1=new_token(), state=game.to_json(state),
                      to_move=game.to_move(state), nag_days=nag, expire_days=expire, created_at=work.now,
                      last_move_at=work.now, nag_due_at=work.now + timedelta(days=nag),
                      expire_due_at=work.now + timedelta(days=expire))
        work.session.add(board)
        work.session.flush()
        work.board_id = board.id
        return board

    def _new_round(self, work: _Work, board: Board, seat: int, players) -> None:
        """``newround`` on a finished board: when both players asked, a fresh board starts
        with the same players, sides and options."""
        game = get_game(board.game)
        if board.status == "active":
            raise PlayerError(f"Board {board.id} is still being played; a new round can start once it "
                              "is over.")
        if board.next_board_id is not None:
            raise PlayerError(f"The new round of board {board.id} has already started as board "
                              f"{board.next_board_id}.")
        board.newround_votes |= 1 << seat
        if board.newround_votes != 0b11:
            work.session.add(board)
            note = (f"{players[seat].userid} asks for a new round of {game.title} board {board.id}, same "
                    f"sides and options. To agree, reply \"newround\" or send:\n"
                    f"    {game.name} move {board.id} <userid> <password> newround")
            for player in players:
                self._send(work, player.email, f"{game.title} Board {board.id} new round?", note, board)
            return
        new = self._new_board(work, game, board.options, players, board.nag_days, board.expire_days)
        board.next_board_id = new.id
        work.session.add(board)
        self._board_mails(work, new, players, comment="", mover=None,
                          notice=f"New round: board {new.id} follows board {board.id}, same players, "
                                 "sides and options.")

    def _resolve_player(self, work: _Work, name: str) -> Player:
        s = work.session
        if "@" not in name:
            player = s.exec(select(Player).where(Player.userid == name.lower())).first()
            if player is None:
                raise PlayerError(f"There is no player called {name}; name them by email address "
                                  "to invite them.", USAGE["challenge"])
            return player
        address = normalise_address(name)
        player = s.exec(select(Player).where(Player.email == address)).first()
        if player:
            return player
        base = re.sub(r"[^a-z0-9_.-]", "", address.split("@")[0])[:16] or "player"
        if not base[0].isalpha():
            base = "p" + base[:15]
        userid, n = base, 1
        while s.exec(select(Player.id).where(Player.userid == userid)).first() is not None:
            n += 1
            userid = f"{base[:16]}{n}"
        if len(userid) < 2:
            userid = userid + "1"
        player = Player(userid=userid, email=address, invited=True, created_at=work.now)
        s.add(player)
        s.flush()
        return player

    def _cmd_move(self, work: _Work, command: Command, comment: str) -> None:
        board = self._load_board(work, command.board, command.game, lock=True)
        player = self._authenticate(work.session, command.userid, command.password, USAGE["move"])
        seat = board.seat_of(player.id)
        if seat is None:
            raise PlayerError(f"{player.userid} is not a player on board {board.id}.")
        self._move(work, board, seat, command.move, comment, command.number)

    def _reply_move(self, work: _Work, tag: tuple[int, str], line: str, comment: str) -> None:
        board_id, token = tag
        board, seat = self._board_by_token(work.session, token)
        work.current = board if board is not None and board.id == board_id else None
        if board is None or board.id != board_id:
            raise PlayerError(f"The address you replied to does not belong to board {board_id} or any "
                              "other board; reply to your latest board mail, or use the move command.",
                              USAGE["move"])
        player = work.session.get(Player, board.player_id(seat))
        if player.email != work.mail.sender:
            raise PlayerError(f"This reply address belongs to {player.userid} on board {board.id}; only "
                              f"{player.userid}'s registered address may use it, and yours is "
                              f"{work.mail.sender}.", USAGE["move"])
        word = line.split()[0].lower() if line.split() else ""
        if word in ("show", "history"):
            getattr(self, f"_cmd_{word}")(work, Command(word, board=board.id), "")
            return
        if not line:
            raise PlayerError("Your reply holds no move: write the move on the first line.",
                              "a move such as D4, pass or resign")
        self._move(work, board, seat, line, comment, None)

    def _board_by_token(self, session: Session, token: str) -> tuple[Board | None, int]:
        board = session.exec(select(Board).where(or_(Board.token0 == token, Board.token1 == token))
                             .with_for_update()).first()
        if board is None:
            return None, 0
        return board, 0 if board.token0 == token else 1

    def _load_board(self, work: _Work, board_id: int, game_name: str | None, lock: bool) -> Board:
        query = select(Board).where(Board.id == board_id)
        board = work.session.exec(query.with_for_update() if lock else query).first()
        if board is None:
            raise PlayerError(f"There is no board {board_id}.", USAGE["games"])
        work.board_id, work.current = board.id, board
        if game_name and game_name != board.game:
            raise PlayerError(f"Board {board.id} is a {get_game(board.game).title} board, not "
                              f"{get_game(game_name).title}.")
        return board

    def _move(self, work: _Work, board: Board, seat: int, text: str, comment: str,
              number: int | None) -> None:
        s = work.session
        game = get_game(board.game)
        players = load_players(s, board)
        if text.strip().lower() == "newround":
            self._new_round(work, board, seat, players)
            return
        if board.status != "active":
            view = BoardView.current(board, players, [])
            raise PlayerError(f"Board {board.id} is finished ({view.status_line()}); no more moves can "
                              "be made.")
        expected = board.move_count + 1
        if number is not None and number != expected:
            raise PlayerError(f"You sent move #{number}, but the next move on board {board.id} is "
                              f"#{expected}; the board changed since you looked.")
        state = game.from_json(board.state)
        text = text.strip()
        if text.lower() == "resign":
            record = MoveRecord(board_id=board.id, number=expected, seat=seat, kind="resign", text="resign",
                                comment=comment, created_at=work.now)
            self._record(work, board, players, record, state, ending(game, "resign", seat))
            return
        if seat not in game.actors(state):
            turn = game.to_move(state)
            raise PlayerError(f"It is not your turn on board {board.id}: it is {players[turn].userid}'s "
                              f"turn ({game.sides[turn]}).")
        try:
            move = game.parse_move(text, state)
            state = game.apply(state, seat, move)
        except MoveError as error:
            raise PlayerError(str(error),
                              f"a move in {game.title} notation (send \"{game.name} help\")") from None
        record = MoveRecord(board_id=board.id, number=expected, seat=seat, kind="move",
                            text=game.format_move(move), comment=comment, created_at=work.now)
        self._record(work, board, players, record, state, game.outcome(state))

    def _record(self, work: _Work, board: Board, players, record: MoveRecord, state,
                outcome: Outcome | None) -> None:
        """Append to the log, update the cached board, queue both board mails."""
        game = get_game(board.game)
        if len(record.comment) > MAX_COMMENT:
            record.comment = record.comment[:MAX_COMMENT].rstrip() + "\n[... the rest was cut]"
        work.session.add(record)
        board.state = game.to_json(state)
        board.move_count = record.number
        board.last_move_at = work.now
        if outcome is not None:
            board.status, board.outcome, board.to_move = "finished", outcome.to_json(), None
            board.nag_due_at = board.expire_due_at = None
        else:
            board.to_move = game.to_move(state)
            board.nag_due_at = work.now + timedelta(days=board.nag_days)
            board.expire_due_at = work.now + timedelta(days=board.expire_days)
            board.nagged_at = None
        work.session.add(board)
        work.session.flush()
        self._board_mails(work, board, players, comment=record.comment, mover=record.seat)

    def _cmd_show(self, work: _Work, command: Command, comment: str) -> None:
        board = self._load_board(work, command.board, command.game, lock=False)
        players = load_players(work.session, board)
        records = load_records(work.session, board)
        if command.number is not None:
            if not 0 <= command.number <= board.move_count:
                raise PlayerError(f"Board {board.id} has moves 0 to {board.move_count}; there is no move "
                                  f"#{command.number}.", USAGE["show"])
            view = BoardView.at(board, players, records, command.number)
        else:
            view = BoardView.current(board, players, records)
        seat = next((i for i, p in enumerate(players) if p.email == work.mail.sender), None)
        self._send(work, work.mail.sender, self._subject(view), self._board_body(view, seat, "", legal=True),
                   board,
                   reply_to=reply_address(self.settings, board.id, board.token(seat)) if seat is not None
                   else None)

    def _cmd_history(self, work: _Work, command: Command, comment: str) -> None:
        board = self._load_board(work, command.board, command.game, lock=False)
        players = load_players(work.session, board)
        view = BoardView.current(board, players, load_records(work.session, board))
        lines = [f"{view.game.title} Board {board.id}: {view.side(0)} vs {view.side(1)}",
                 view.status_line(), ""]
        for record, line in zip(view.records, view.move_lines()):
            lines.append(line)
            if record.comment:
                lines.extend("        | " + c for c in record.comment.split("\n"))
        if not view.records:
            lines.append("No moves yet.")
        self._send(work, work.mail.sender, f"{view.game.title} Board {board.id} history", "\n".join(lines),
                   board)

    def _cmd_games(self, work: _Work, command: Command, comment: str) -> None:
        s = work.session
        query = select(Board).order_by(Board.id)
        title = "All boards"
        if command.game:
            query = query.where(Board.game == command.game)
            title = f"{get_game(command.game).title} boards"
        if command.userid:
            player = s.exec(select(Player).where(Player.userid == command.userid)).first()
            if player is None:
                raise PlayerError(f"There is no player called {command.userid}.", USAGE["games"])
            query = query.where(or_(Board.seat0_id == player.id, Board.seat1_id == player.id))
            title += f" of {player.userid}"
        boards = s.exec(query).all()
        names = {p.id: p.userid for p in s.exec(select(Player).where(Player.id.in_(
            {b.seat0_id for b in boards} | {b.seat1_id for b in boards}))).all()} if boards else {}
        lines = [f"{title}:", ""]
        for b in boards:
            turn = names[b.player_id(b.to_move)] + " to move" if b.to_move is not None else b.status
            lines.append(f"{b.id:>5}  {b.game:<13} {names[b.seat0_id]:>12} vs {names[b.seat1_id]:<12} "
                         f"move {b.move_count:<4} {turn}")
        if not boards:
            lines.append("No boards.")
        self._send(work, work.mail.sender, title, "\n".join(lines), None)

    def _cmd_multiple(self, work: _Work, command: Command, comment: str) -> None:
        raise PlayerError("'multiple' goes in the subject, with one command per line in the body.",
                          USAGE["help"])

    # -- outgoing mail -----------------------------------------------------------

    def _send(self, work: _Work, to: str, subject: str, body: str, board: Board | None, *,
              reply_to: str | None = None, auto: str = "auto-replied", attachments=()) -> None:
        in_reply_to = work.mail.message_id if work.mail else None
        message = compose(self.settings, to=to, subject=subject, body=body, now=work.now, auto=auto,
                          reply_to=reply_to, board_id=board.id if board else None, in_reply_to=in_reply_to,
                          attachments=attachments)
        mail = queue(work.session, message, board.id if board else None, work.now)
        work.mails.append(mail)

    def _error_mail(self, work: _Work, sentence: str, usage: str | None, game: Game | None,
                    board: Board | None) -> None:
        if work.mail is None:
            return
        if board is not None:
            subject = f"{get_game(board.game).title} Board {board.id} Error"
        else:
            subject = f"{game.title} error" if game else "pbm error"
        body = [sentence, ""]
        if usage:
            body += [f"Send instead: {usage}", ""]
        body += ["Send a mail with the subject \"help\" for the list of commands.", "",
                 "Your message was:", quote(work.mail.raw_text)]
        self._send(work, work.mail.sender, subject, "\n".join(body), board)

    def _subject(self, view: BoardView) -> str:
        seat = view.to_move()
        tail = view.name(seat) if seat is not None else ("game over" if view.outcome else "either player")
        return f"{view.game.title} Board {view.board.id} {tail}"

    def _board_body(self, view: BoardView, seat: int | None, comment: str, intro: str = "",
                    mover: int | None = None, legal: bool = False) -> str:
        parts = []
        if intro:
            parts += [intro, ""]
        parts.append(view.text(legal=legal))
        if comment and mover is not None:
            parts += [f"{view.name(mover)} says:", quote(comment), ""]
        if seat is not None and view.board.status == "active":
            parts += ["To move, reply to this mail with your move on the first line",
                      "(anything after the first line is sent to your opponent as a comment).",
                      f"Your private page: {self.settings.base_url}/play/{view.board.token(seat)}"]
        parts.append(f"Board page: {self.settings.base_url}/games/{view.board.id}")
        return "\n".join(parts)

    def _board_mails(self, work: _Work, board: Board, players, comment: str, mover: int | None,
                     invited: set[int] = frozenset(), challenger: Player | None = None,
                     auto: str = "auto-replied", notice: str = "") -> None:
        view = BoardView.current(board, players, load_records(work.session, board, last=RECENT_MOVES))
        record = []
        if board.status == "finished" and hasattr(view.game, "game_record"):
            record = [game_record(view.game, board, players, load_records(work.session, board))]
        for seat in (0, 1):
            player = players[seat]
            intro = notice
            if player.id in invited:
                intro = (f"{challenger.userid} has challenged you to a game of {view.game.title} "
                         f"(board {board.id}).\nYou need no account: reply to this mail with your move, or "
                         "use your private page below.\nFor an account with a password, send "
                         f"\"signup {player.userid} <password>\" from this address.\n"
                         f"For the rules, send \"{view.game.name} help\".")
            elif mover is None and challenger is not None:
                intro = f"New game of {view.game.title} on board {board.id}, started by {challenger.userid}."
            self._send(work, player.email, self._subject(view),
                       self._board_body(view, seat, comment, intro, mover), board,
                       reply_to=reply_address(self.settings, board.id, board.token(seat)), auto=auto,
                       attachments=record)

    # -- the scheduler's sweeps ------------------------------------------------------

    def send_reminders(self, now: datetime | None = None) -> int:
        """Remind the player to move on every board past its nag time, once per idle spell."""
        now = now or utcnow()
        with reading(self.engine) as session:
            due = session.exec(select(Board.id).where(Board.status == "active", Board.nag_due_at <= now,
                                                      Board.nagged_at.is_(None))).all()
        sent = 0
        for board_id in due:
            outgoing: list = []
            with transaction(self.engine) as session:
                claimed = session.execute(
                    Board.__table__.update()
                    .where(Board.id == board_id, Board.status == "active", Board.nag_due_at <= now,
                           Board.nagged_at.is_(None))
                    .values(nagged_at=now, version=Board.version + 1))
                if claimed.rowcount != 1:
                    continue
                board = session.get(Board, board_id)
                session.refresh(board)
                work = _Work(session, now, None)
                players = load_players(session, board)
                view = BoardView.current(board, players, load_records(session, board, last=RECENT_MOVES))
                deadline = board.expire_due_at.strftime("%Y-%m-%d %H:%M UTC")
                seat = view.to_move()
                if seat is not None:
                    seats = [seat]
                    notice = (f"Reminder: it is your move on board {board.id}. If no move arrives by "
                              f"{deadline}, the game ends and you forfeit.")
                else:  # both may act (Go's scoring): remind both
                    seats = list(view.game.actors(view.state))
                    notice = (f"Reminder: board {board.id} waits for both players. If it is not "
                              f"finished by {deadline}, it ends without a winner.")
                for seat in seats:
                    self._send(work, players[seat].email, f"{view.game.title} Board {board.id} reminder",
                               notice + "\n\n" + self._board_body(view, seat, ""), board,
                               reply_to=reply_address(self.settings, board.id, board.token(seat)),
                               auto="auto-generated")
                session.flush()
                outgoing = list(work.mails)
                sent += 1
            deliver_after_commit(self.engine, self.settings, outgoing)
        return sent

    def expire_boards(self, now: datetime | None = None) -> int:
        """End every board past its expiry: the player to move forfeits a started game,
        a game that never started (not both players have moved) is cancelled."""
        now = now or utcnow()
        with reading(self.engine) as session:
            due = session.exec(select(Board.id).where(Board.status == "active",
                                                      Board.expire_due_at <= now)).all()
        ended = 0
        for board_id in due:
            with transaction(self.engine) as session:
                claimed = session.execute(
                    Board.__table__.update()
                    .where(Board.id == board_id, Board.status == "active", Board.expire_due_at <= now)
                    .values(status="finished", version=Board.version + 1))
                if claimed.rowcount != 1:
                    continue
                board = session.get(Board, board_id)
                session.refresh(board)
                game = get_game(board.game)
                players = load_players(session, board)
                movers = set(session.exec(select(MoveRecord.seat).where(
                    MoveRecord.board_id == board.id, MoveRecord.kind == "move")).all())
                seat = board.to_move
                kind = "cancel" if not movers >= {0, 1} else "forfeit" if seat is not None else "expire"
                number = board.move_count + 1
                record = MoveRecord(board_id=board.id, number=number, seat=seat if kind == "forfeit" else None,
                                    kind=kind, text=kind, created_at=now)
                outcome = ending(game, kind, record.seat)
                session.add(record)
                board.move_count, board.outcome, board.to_move = number, outcome.to_json(), None
                board.nag_due_at = board.expire_due_at = None
                session.add(board)
                session.flush()
                work = _Work(session, now, None)
                self._board_mails(work, board, players, comment="", mover=None, auto="auto-generated",
                                  notice=f"Board {board.id} has expired: no move arrived in "
                                         f"{board.expire_days:g} days.")
                session.flush()
                outgoing = list(work.mails)
                ended += 1
            deliver_after_commit(self.engine, self.settings, outgoing)
        return ended


def _game_of_line(line: str | None) -> Game | None:
    """The game a failed command line names (for the error mail's subject), if any."""
    words = (line or "").split()
    if not words:
        return None
    found = [name for name in game_names() if name.startswith(words[0].lower())]
    return get_game(found[0]) if len(found) == 1 else None
