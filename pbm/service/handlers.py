"""The typed table of commands: each verb of ``pbm.commands`` -> its handler.

A handler takes the unit of work, the parsed ``Command`` and the comment (the
rest of the mail), and either does its work (queueing mails) or raises a
``PlayerError``. Handlers that change boards go through ``boards``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Callable

from sqlalchemy import func
from sqlmodel import select

from ..boardview import load_players
from ..commands import Command
from ..usage import USAGE
from ..gamewords import lazy_sentence
from ..games import REGISTRY, OptionError, as_typed, get_game
from ..i18n import LazyText, lazy_gettext, ngettext
from ..models import Board, ChallengePolicy, Player
from . import account_addresses, accounts, boards, computer, letters, queries, ratings, requests, social
from .addresses import same_mailbox
from .errors import PlayerError
from .unit import Unit

Handler = Callable[[Unit, Command, str], None]

MAX_BOARDS_PER_MAIL = 5
MAX_INVITED_BOARDS_PER_DAY = 3  # boards an invited address (no account yet) may be seated at, newly, per day
MAX_INVITATIONS_PER_DAY = 20  # invited addresses (none answered yet) a player may have challenged in a day


def help_(unit: Unit, command: Command, comment: str) -> None:
    if command.game:
        letters.send(unit, unit.mail.sender, "game_help", game=get_game(command.game))
    else:
        letters.send(unit, unit.mail.sender, "help", games=[REGISTRY[name] for name in sorted(REGISTRY)])


def challenge(unit: Unit, command: Command, comment: str) -> None:
    game = get_game(command.game)
    challenger = accounts.by_address(unit.session, unit.mail.sender)
    if challenger is None or challenger.invited:
        raise PlayerError(lazy_gettext("Only players with an account can challenge; sign up first with: "
                                       "signup <userid> <password>"), USAGE["signup"])
    seats: tuple[Player, Player] = tuple(accounts.resolve(unit, name, challenger.language) for name in command.args)
    if seats[0].id == seats[1].id:
        raise PlayerError(lazy_gettext("A game needs two different players."), USAGE["challenge"])
    if challenger.id not in (seats[0].id, seats[1].id):
        raise PlayerError(lazy_gettext("You (%(userid)s) can only start games you play in yourself.",
                                       userid=challenger.userid), USAGE["challenge"])
    if any(p.invited for p in seats) and unit.strangers >= letters.MAX_STRANGERS_PER_MAIL:
        raise PlayerError(lazy_gettext("One mail may invite one new player; send the other challenges in separate "
                                       "mails."), USAGE["challenge"])
    if any(p.invited for p in seats):
        letters.check_hourly(unit)
    unit.strangers += sum(p.invited for p in seats)
    for seat in seats:
        if seat.id != challenger.id:
            _check_takes_challenge(unit, game, seat)
    _check_board_limits(unit, challenger, seats, command.args)
    if any(p.userid == computer.USERID for p in seats):
        computer.check_can_play(game, unit.settings)
    try:
        options = game.parse_options(command.options)
    except OptionError as error:
        raise PlayerError(lazy_sentence(error), lazy_gettext('%(game)s challenge <user1> <user2> with the options '
                                                             'that "%(game)s help" lists', game=game.name)) from None
    expire = command.timing.get("expiretime", unit.settings.expire_days)
    nag = command.timing.get("nagtime", unit.settings.nag_days)
    if "nagtime" not in command.timing and nag >= expire:
        nag = expire / 2  # only the expiry was chosen, shorter than the usual reminder: as the settings do
    if timedelta(days=nag) >= timedelta(days=expire):  # as the deadlines will be, to the microsecond
        if "expiretime" not in command.timing:  # the server's expiry: say so, and how to choose another
            raise PlayerError(lazy_gettext("The reminder (--nagtime=%(nag)s) must come before the expiry, which is "
                                           "%(expire)s days here unless --expiretime says otherwise.",
                                           nag=f"{nag:g}", expire=f"{expire:g}"), USAGE["challenge"])
        raise PlayerError(lazy_gettext("The reminder (--nagtime=%(nag)s) must come before the expiry "
                                       "(--expiretime=%(expire)s).", nag=f"{nag:g}", expire=f"{expire:g}"),
                          USAGE["challenge"])
    board = boards.new_board(unit, game, options, seats, nag, expire)
    board.challenger_seat = 0 if seats[0].id == challenger.id else 1
    letters.board_mails(unit, board, seats, occasion="new", challenger=challenger.userid,
                        invited=frozenset(p.id for p in seats if p.invited))


def _check_board_limits(unit: Unit, challenger: Player, seats: tuple[Player, Player],
                        written: tuple[str, ...]) -> None:
    """At most MAX_BOARDS_PER_MAIL new boards from one mail; ``boards_per_hour`` (a setting)
    new boards a player, challenger or challenged; an invited address (nobody there has
    answered yet) at most MAX_INVITED_BOARDS_PER_DAY, counted for its inbox (the
    ``+tag`` spellings of one address are one: ``addresses.same_mailbox``), so that
    many challengers together cannot flood it. A refusal names the seats as
    ``written`` in the challenge: an invited player's address only to whoever typed it."""
    unit.new_boards += 1
    if unit.new_boards > MAX_BOARDS_PER_MAIL:
        raise PlayerError(lazy_gettext("One mail may start at most %(count)s boards.", count=MAX_BOARDS_PER_MAIL),
                          USAGE["challenge"])
    as_written = {seat.id: name for seat, name in zip(seats, written)}  # an invited address only if typed
    for player in sorted(seats, key=lambda p: p.id != challenger.id):  # the challenger's own limit first
        if player.invited:  # every invited spelling of the inbox, over a day
            seated = select(Player.id).where(Player.invited, same_mailbox(Player.email, player.email))
            recent = unit.session.exec(select(func.count()).select_from(Board).where(
                Board.seat0_id.in_(seated) | Board.seat1_id.in_(seated),
                Board.created_at > unit.now - timedelta(days=1))).one()
        else:
            recent = unit.session.exec(select(func.count()).select_from(Board).where(
                (Board.seat0_id == player.id) | (Board.seat1_id == player.id),
                Board.created_at > unit.now - timedelta(hours=1))).one()
        if player.id == challenger.id and recent >= unit.settings.boards_per_hour:
            raise PlayerError(lazy_gettext("%(userid)s has started %(count)s boards in the last hour, the most "
                                           "allowed; try again later.", userid=challenger.userid, count=recent),
                              USAGE["challenge"])
        if player.invited and _invited_by(unit, challenger, player) >= MAX_INVITATIONS_PER_DAY:
            raise PlayerError(lazy_gettext("%(userid)s has invited %(count)s new players in the last day who have "
                                           "not answered yet, the most allowed; try again tomorrow.",
                                           userid=challenger.userid, count=MAX_INVITATIONS_PER_DAY),
                              USAGE["challenge"])
        if player.invited and recent >= MAX_INVITED_BOARDS_PER_DAY:
            raise PlayerError(lazy_gettext("%(address)s was invited to %(count)s games in the last day and has not "
                                           "answered yet, the most allowed; try again tomorrow.",
                                           address=as_typed(as_written[player.id]), count=recent),
                              USAGE["challenge"])
        if player.id != challenger.id and not player.invited and recent >= unit.settings.boards_per_hour:
            raise PlayerError(lazy_gettext("%(userid)s was seated at %(count)s new boards in the last hour, the most "
                                           "allowed; try again later.", userid=player.userid, count=recent),
                              USAGE["challenge"])


def _invited_by(unit: Unit, challenger: Player, invited: Player) -> int:
    """The other invited players (nobody at their address has answered yet) that
    ``challenger`` has played new boards against in the last day."""
    others = select(Player.id).where(Player.invited, Player.id != invited.id)
    recent = Board.created_at > unit.now - timedelta(days=1)
    against = select(Board.seat1_id.label("id")).where(recent, Board.seat0_id == challenger.id,
                                                       Board.seat1_id.in_(others)).union(
        select(Board.seat0_id.label("id")).where(recent, Board.seat1_id == challenger.id, Board.seat0_id.in_(others)))
    return unit.session.exec(select(func.count()).select_from(against.subquery())).one()


def move(unit: Unit, command: Command, comment: str) -> None:
    board = boards.lock(unit, command.board, command.game)
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["move"],
                                   among=load_players(unit.session, board))
    seat = board.seat_of(player.id)
    if seat is None:
        raise PlayerError(lazy_gettext("%(userid)s is not a player on board %(board)s.", userid=player.userid,
                                       board=board.id), USAGE["games"])  # which boards they play
    boards.play(unit, board, seat, command.move, comment, command.number)


# Ratings and challenge control: <game> standings|ratings, <game> accept|reject|limit.

def standings(unit: Unit, command: Command, comment: str) -> None:
    """Mail the game's rating table."""
    rows, total = ratings.standings(unit.session, command.game)
    letters.send(unit, unit.mail.sender, "standings", game=get_game(command.game), rows=rows, total=total)


def _policy(unit: Unit, player: Player, game: str) -> ChallengePolicy:
    """The player's challenge policy for ``game`` (a default one, not yet stored, when none)."""
    found = unit.session.exec(select(ChallengePolicy).where(
        ChallengePolicy.player_id == player.id, ChallengePolicy.game == game)).first()
    return found or ChallengePolicy(player_id=player.id, game=game)


def _active_boards(unit: Unit, player: Player, game: str) -> int:
    return unit.session.exec(select(func.count()).select_from(Board).where(
        Board.game == game, Board.status == "active",
        (Board.seat0_id == player.id) | (Board.seat1_id == player.id))).one()


def _check_takes_challenge(unit: Unit, game, player: Player) -> None:
    """PlayerError when ``player`` has signed off, refuses challenges to ``game`` or is
    at their limit of active boards of it (their own challenges are not held back).
    The player's row is locked first, so challenges to one player arriving at once
    are checked one after the other and together never pass the limit."""
    accounts.lock(unit, player)
    if player.closed_at is not None:
        raise accounts.signed_off(player)
    policy = _policy(unit, player, game.name)
    if not policy.accepts:
        raise PlayerError(lazy_gettext("%(userid)s does not take challenges to %(game)s at the moment; no board "
                                       "was started.", userid=player.userid, game=game.title),
                          lazy_gettext("a challenge to another player"))
    limit, userid = policy.board_limit, player.userid
    if limit is not None and _active_boards(unit, player, game.name) >= limit:
        raise PlayerError(LazyText(lambda: ngettext(
            "%(userid)s already plays %(num)s active %(game)s board, the most they take at a time; no board was "
            "started.", "%(userid)s already plays %(num)s active %(game)s boards, the most they take at a time; no "
            "board was started.", limit, num=limit, userid=userid, game=game.title)),
            lazy_gettext("a challenge to another player, or to %(userid)s once a board ends", userid=userid))


def challenge_policy(unit: Unit, command: Command, comment: str) -> None:
    """``accept``, ``reject`` (all challenges to the game) or ``limit n`` (active boards
    at most; 0: no limit); the answer says what now holds."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE[command.verb], changing=True)
    policy = _policy(unit, player, command.game)
    if command.verb == "limit":
        policy.board_limit = int(command.args[0]) or None
    else:
        policy.accepts = command.verb == "accept"
    unit.session.add(policy)
    letters.send(unit, unit.mail.sender, "challenge_policy", game=get_game(command.game), player=player,
                 policy=policy, active=_active_boards(unit, player, command.game))


def multiple(unit: Unit, command: Command, comment: str) -> None:
    raise PlayerError(lazy_gettext("'multiple' goes in the subject, with one command per line in the body."),
                      USAGE["help"])


HANDLERS: dict[str, Handler] = {
    "help": help_,
    "signup": accounts.signup,
    "change_password": accounts.change_password,
    "change_address": account_addresses.change_address,
    "challenge": challenge,
    "move": move,
    "show": queries.show,
    "history": queries.history,
    "preview": queries.preview,
    "games": queries.games,
    "all": queries.games,
    "multiple": multiple,
    "language": accounts.set_language,
    # social
    "subscribe": social.subscribe,
    "unsubscribe": social.unsubscribe,
    "chat": social.chat,
    "message": social.message,
    "vacation": social.vacation,
    "add": account_addresses.add_address,
    "signoff": accounts.signoff,
    # ratings and challenge control
    "standings": standings,
    "accept": challenge_policy,
    "reject": challenge_policy,
    "limit": challenge_policy,
    # a move kept for later
    "queue": requests.queue,
    "submit": requests.submit,
    "confirm": requests.confirm,
}
