"""Players among themselves: watching boards (``subscribe``), ``chat`` about a
board, ``message`` to other players, and ``vacation``.

A watcher gets every board mail of the boards watched (see
``letters.board_mails``), without what is the players' own. A chat goes to both
players and the watchers and is kept beside the move log (``Chat``); a message
goes to players by userid, from the server, so nobody learns an address. Words
passed on count in the per-mail limits of ``letters.within_limits``.

A vacation holds the reminders and the expiry of every board of the player (the
sweeps in ``deadlines`` leave those boards alone); when it ends (``off``, or the
scheduler when its days have run out) every deadline of the player's running
boards moves on by the days taken. A player may take VACATION_DAYS days in any
VACATION_YEAR (a rolling year: the days of vacations begun in the last 365 days
count); a vacation ended early counts the days begun.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import timedelta

from sqlalchemy import and_, func, or_, update
from sqlmodel import select

from ..commands import Command
from ..usage import USAGE, Usage
from ..games import as_typed, get_game
from ..i18n import LazyText, lazy_gettext, number
from ..models import Board, Chat, Player, Subscription, Vacation
from . import accounts, boards, letters
from .errors import PlayerError
from .computer import USERID as COMPUTER
from .unit import Unit

MAX_WATCHERS = 50  # watchers of one board, and all-boards subscribers of one game
MAX_TEXT = 2000  # characters of a chat or a message
MAX_RECIPIENTS = 10  # players one message may go to
VACATION_DAYS = 30  # days of vacation a player may take in VACATION_YEAR
VACATION_YEAR = timedelta(days=365)
DAY = timedelta(days=1)


# Watching

def subscribe(unit: Unit, command: Command, comment: str) -> None:
    """Watch one board, or (no board) every board of the game begun from now on."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["subscribe"], changing=True)
    title = get_game(command.game).title
    if command.board is None:
        if _all_boards(unit, player, command.game) is not None:
            raise PlayerError(lazy_gettext("%(userid)s watches every new %(game)s board already.",
                                           userid=player.userid, game=title), USAGE["unsubscribe"])
        count = unit.session.exec(select(func.count()).select_from(Subscription).where(
            Subscription.game == command.game, Subscription.board_id.is_(None))).one()
        if count >= MAX_WATCHERS:
            raise PlayerError(lazy_gettext("Every new %(game)s board has %(count)s watchers already, the most "
                                           "allowed.", game=title, count=MAX_WATCHERS),
                              Usage(USAGE["subscribe"].forms[0]))  # one board at a time
        unit.session.add(Subscription(player_id=player.id, game=command.game, created_at=unit.now))
    else:
        board = boards.lock(unit, command.board, command.game)
        if board.seat_of(player.id) is not None:
            raise PlayerError(lazy_gettext("%(userid)s plays on board %(board)s; its mails come anyway.",
                                           userid=player.userid, board=board.id),
                              lazy_gettext("a subscription to a board you do not play"))
        if board.status != "active":
            raise PlayerError(lazy_gettext("Board %(board)s is over; there is nothing more to watch.",
                                           board=board.id), USAGE["show"])  # the final position
        watching = letters.watchers(unit.session, board)
        if player in watching:
            raise PlayerError(lazy_gettext("%(userid)s watches board %(board)s already.", userid=player.userid,
                                           board=board.id), USAGE["unsubscribe"])
        if len(watching) >= MAX_WATCHERS:
            raise PlayerError(lazy_gettext("Board %(board)s has %(count)s watchers already, the most allowed.",
                                           board=board.id, count=MAX_WATCHERS), USAGE["show"])  # look now and then
        choose(unit, player, board, watching=True)
    _tell(unit, player, command, watching=True)


def unsubscribe(unit: Unit, command: Command, comment: str) -> None:
    """Stop watching one board, or every board the all-boards subscription brought."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["unsubscribe"], changing=True)
    if command.board is None:
        every = _all_boards(unit, player, command.game)
        if every is None:
            raise PlayerError(lazy_gettext("%(userid)s does not watch every new %(game)s board.",
                                           userid=player.userid, game=get_game(command.game).title),
                              USAGE["subscribe"])
        watching_ends(unit, player, command.game)
        unit.session.delete(every)
    else:
        board = boards.lock(unit, command.board, command.game)
        if player not in letters.watchers(unit.session, board):
            raise PlayerError(lazy_gettext("%(userid)s does not watch board %(board)s.", userid=player.userid,
                                           board=board.id), USAGE["subscribe"])
        choose(unit, player, board, watching=False)
    _tell(unit, player, command, watching=False)


def _all_boards(unit: Unit, player: Player, game: str) -> Subscription | None:
    return unit.session.exec(select(Subscription).where(
        Subscription.player_id == player.id, Subscription.game == game, Subscription.board_id.is_(None))).first()


def choose(unit: Unit, player: Player, board: Board, *, watching: bool) -> None:
    """Record the player's choice for one board (an all-boards subscription is kept);
    the board's pages show the new count of watchers."""
    row = unit.session.exec(select(Subscription).where(
        Subscription.player_id == player.id, Subscription.board_id == board.id)).first()
    if row is None:
        row = Subscription(player_id=player.id, game=board.game, board_id=board.id, created_at=unit.now)
    row.watching = watching
    unit.session.add(row)
    unit.board_changed(board)


def stop_watching(unit: Unit, player_id: int, board_id: int) -> Board | None:
    """The watcher no longer gets the board's mails (an all-boards subscription stays,
    this board left out of it); nothing to do when they do not watch it now. The
    board, or None when it or the watcher is gone."""
    board, player = unit.session.get(Board, board_id), unit.session.get(Player, player_id)
    if board is None or player is None:
        return None
    if player in letters.watchers(unit.session, board):
        choose(unit, player, board, watching=False)
    return board


def watching_ends(unit: Unit, player: Player, game: str | None = None) -> None:
    """Before the player's all-boards subscription of ``game`` goes (or, with no game,
    every subscription of theirs: ``signoff``): the open pages of the running boards
    that lose a watcher by it are told, so their count of watchers follows. A board
    the player chose on its own keeps them, unless every subscription goes."""
    rows = unit.session.exec(select(Subscription).where(
        Subscription.player_id == player.id, *([Subscription.game == game] if game else []))).all()
    chosen = {row.board_id: row.watching for row in rows if row.board_id is not None}
    ids = {board_id for board_id, watching in chosen.items() if watching} if game is None else set()
    every = [and_(Board.game == row.game, Board.created_at >= row.created_at) for row in rows if row.board_id is None]
    if every:
        brought = unit.session.exec(select(Board.id).where(
            Board.status == "active", or_(*every), Board.seat0_id != player.id, Board.seat1_id != player.id)).all()
        ids |= {board_id for board_id in brought if board_id not in chosen}
    if ids:
        for board in unit.session.exec(select(Board).where(Board.id.in_(ids), Board.status == "active")
                                       .order_by(Board.id).with_for_update()).all():
            unit.board_changed(board, aside=True)


def _tell(unit: Unit, player: Player, command: Command, *, watching: bool) -> None:
    letters.send(unit, unit.mail.sender, "subscription", game=get_game(command.game), board_id=command.board,
                 userid=player.userid, watching=watching)


# Chat and messages

def _words(comment: str, what: str) -> str:
    """The body of a chat or message (``what``): not empty, at most MAX_TEXT characters."""
    text = comment.strip()
    length, most = number(len(text)), number(MAX_TEXT)
    if what == "chat" and not text:
        raise PlayerError(lazy_gettext("The chat is empty: write it in the body of the mail."), USAGE[what])
    if not text:
        raise PlayerError(lazy_gettext("The message is empty: write it in the body of the mail."), USAGE[what])
    if what == "chat" and len(text) > MAX_TEXT:
        raise PlayerError(lazy_gettext("The chat is %(length)s characters long; at most %(most)s are passed on.",
                                       length=length, most=most), USAGE[what])
    if len(text) > MAX_TEXT:
        raise PlayerError(lazy_gettext("The message is %(length)s characters long; at most %(most)s are passed "
                                       "on.", length=length, most=most), USAGE[what])
    return text


def chat(unit: Unit, command: Command, comment: str) -> None:
    """The body goes to both players and the watchers, and into the board's record."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["chat"])
    board = boards.lock(unit, command.board, command.game)
    watching = letters.watchers(unit.session, board)
    seated = [unit.session.get(Player, board.player_id(seat)) for seat in (0, 1)]
    if player not in seated and player not in watching:
        raise PlayerError(lazy_gettext("Only the players and the watchers of board %(board)s may chat there; "
                                       "%(userid)s is neither.", board=board.id, userid=player.userid),
                          USAGE["subscribe"])
    text = _words(comment, "chat")
    readers = list({p.email: p for p in seated + watching if p.email}.values())
    letters.check_relay(unit, len(readers))
    unit.session.add(Chat(board_id=board.id, player_id=player.id, after_move=board.move_count, text=text,
                          created_at=unit.now))
    unit.board_changed(board)  # the players' pages show the chat
    game = get_game(board.game)
    for reader in readers:
        letters.send(unit, reader.email, "chat", board=board, relayed=True, auto="auto-generated", game=game,
                     writer=player.userid, text=text, players=seated)


def message(unit: Unit, command: Command, comment: str) -> None:
    """The body goes to the named players, from the server: no address is shown."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["message"])
    names = list(dict.fromkeys(command.args))
    if len(names) > MAX_RECIPIENTS:
        raise PlayerError(lazy_gettext("A message may go to at most %(most)s players; this one names %(count)s.",
                                       most=MAX_RECIPIENTS, count=len(names)), USAGE["message"])
    text = _words(comment, "message")
    recipients, missing = [], []
    for name in names:
        found = accounts.by_userid(unit.session, name)
        if name.lower() == COMPUTER:
            missing.append(lazy_gettext("%(userid)s is the server's own player and reads no messages.", userid=COMPUTER))
        elif found is None:
            missing.append(lazy_gettext("There is no player called %(name)s.", name=as_typed(name)))
        elif found.closed_at is not None:
            missing.append(lazy_gettext("%(userid)s has signed off.", userid=found.userid))
        elif found.email is None:
            missing.append(lazy_gettext("%(userid)s gets no mail.", userid=found.userid))
        else:
            recipients.append(found)
    if not recipients:
        raise PlayerError(lazy_gettext("%(missing)s Nobody got the message.",
                                       missing=LazyText(lambda: " ".join(map(str, missing)))), USAGE["message"])
    letters.check_relay(unit, len(recipients))
    for recipient in recipients:
        letters.send(unit, recipient.email, "message", relayed=True, auto="auto-generated", writer=player.userid,
                     text=text)
    letters.send(unit, unit.mail.sender, "message_sent", recipients=[r.userid for r in recipients], missing=missing)


# Vacation

def running_vacation(unit: Unit, player: Player) -> Vacation | None:
    return unit.session.exec(select(Vacation).where(
        Vacation.player_id == player.id, Vacation.ended_at.is_(None))).first()


def days_left(unit: Unit, player: Player) -> int:
    """Vacation days the player may still take (those of the last VACATION_YEAR count)."""
    taken = unit.session.exec(select(func.coalesce(func.sum(Vacation.days), 0)).where(
        Vacation.player_id == player.id, Vacation.started_at > unit.now - VACATION_YEAR)).one()
    return max(0, VACATION_DAYS - taken)


def vacation(unit: Unit, command: Command, comment: str) -> None:
    """``<days>``: away from now for that many days; ``off``: back now."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["vacation"], changing=True)
    running = running_vacation(unit, player)
    if running is not None and running.until <= unit.now:  # over; the scheduler has not run since
        end_vacation(unit, running.id)
        running = None
    if command.args[0] == "off":
        if running is None or not end_vacation(unit, running.id):
            raise PlayerError(lazy_gettext("%(userid)s is not on vacation.", userid=player.userid),
                              USAGE["vacation"])
        return
    days = int(command.args[0])
    if running is not None:
        raise PlayerError(lazy_gettext("%(userid)s is on vacation until %(until)s already; send 'off' first to take "
                                       "another.", userid=player.userid, until=f"{running.until:%Y-%m-%d %H:%M UTC}"),
                          USAGE["vacation"])
    left = days_left(unit, player)
    if days < 1:
        raise PlayerError(lazy_gettext("A vacation lasts at least 1 day."), USAGE["vacation"])
    if days > left:
        raise PlayerError(lazy_gettext("%(userid)s has %(left)s of %(allowance)s vacation days left (days count "
                                       "for 365 days from the start of their vacation); %(days)s is too many.",
                                       userid=player.userid, left=left, allowance=VACATION_DAYS, days=days),
                          USAGE["vacation"])
    away = Vacation(player_id=player.id, started_at=unit.now, until=unit.now + days * DAY, days=days)
    unit.session.add(away)
    running = boards.lock_seated(unit, player, running=True)
    for board in running:  # their pages say who is away
        unit.board_changed(board, aside=True)  # the answer is about the player, not a board
    held = [board for board in running if not _past_deadline(board, unit.now)]
    _tell_boards(unit, player, away, held, started=True, left=left - days,
                 overdue=[board.id for board in running if board not in held])


def _past_deadline(board: Board, when) -> bool:
    """Whether ``board``'s expiry had come by ``when`` (the sweep was late): a vacation
    begun then does not hold it (``deadlines.expire_boards``)."""
    return board.expire_due_at is not None and board.expire_due_at <= when


def end_vacation(unit: Unit, vacation_id: int) -> bool:
    """End a running vacation now (claimed with a conditional UPDATE, so it ends once):
    the days taken are counted, every deadline of the player's running boards moves
    on by them, and the player and their opponents are told. False when it had ended."""
    claimed = unit.session.execute(update(Vacation).where(Vacation.id == vacation_id, Vacation.ended_at.is_(None))
                                   .values(ended_at=unit.now))
    if claimed.rowcount != 1:
        return False
    away = unit.session.get(Vacation, vacation_id)
    unit.session.refresh(away)
    away.days = max(1, math.ceil((min(unit.now, away.until) - away.started_at) / DAY))
    player = unit.session.get(Player, away.player_id)
    running = boards.lock_seated(unit, player, running=True)
    opponents = {board.player_id(1 - board.seat_of(player.id)) for board in running}
    also_away = {v.player_id: v for v in unit.session.exec(select(Vacation).where(
        Vacation.player_id.in_(opponents), Vacation.ended_at.is_(None)))} if opponents else {}
    held = []  # boards that wait for the opponent's vacation too: it moves them on as it ends
    for board in running:
        other = also_away.get(board.player_id(1 - board.seat_of(player.id)))
        if other is not None:
            held.append(board.id)
        shift = _held_alone(away, board, other) * DAY
        board.nag_due_at = board.nag_due_at + shift if board.nag_due_at else None
        board.expire_due_at = board.expire_due_at + shift if board.expire_due_at else None
        unit.session.add(board)
        unit.board_changed(board, aside=True)
    unit.session.flush()
    _tell_boards(unit, player, away, running, started=False, left=days_left(unit, player), held=held)
    return True


def _held_alone(away: Vacation, board: Board, other: Vacation | None) -> int:
    """The days an ending vacation held a board that the opponent's running one (if any)
    does not: the time before the opponent left; from then on the board waits for them
    too, and their vacation moves it on as it ends. So two vacations at once move the
    deadlines by the time the board waited, once. 0 for a board past its deadline
    when the vacation began: not held."""
    if _past_deadline(board, away.started_at):
        return 0
    if other is None:
        return away.days
    return min(away.days, max(0, math.ceil((other.started_at - away.started_at) / DAY)))


def _tell_boards(unit: Unit, player: Player, away: Vacation, running: list[Board], *, started: bool,
                 left: int, held: list[int] = (), overdue: list[int] = ()) -> None:
    """The player learns the days left; each opponent of a ``running`` board, once,
    which of their boards wait (or go on). ``held``: boards whose other player is
    away too, so they wait on for that vacation; ``overdue``: boards past their
    deadline as the vacation began, which it does not hold."""
    shared: dict[int, list[int]] = defaultdict(list)
    for board in running:
        shared[board.player_id(1 - board.seat_of(player.id))].append(board.id)
    auto = "auto-replied" if started else "auto-generated"
    letters.send(unit, player.email, "vacation", auto=auto, userid=player.userid, away=away, started=started,
                 left=left, boards=[b.id for b in running], allowance=VACATION_DAYS, held=held, overdue=overdue)
    for opponent_id, board_ids in shared.items():
        opponent = unit.session.get(Player, opponent_id)
        letters.send(unit, opponent.email, "vacation_notice", auto="auto-generated", userid=player.userid,
                     away=away, started=started, boards=board_ids, still_away=bool(set(board_ids) & set(held)))
