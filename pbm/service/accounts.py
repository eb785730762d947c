"""Accounts: signup, passwords, the language, signing off, and players invited by a
challenge; finding a player by userid or address, and the confirmation mails that a
reply from an address answers (``account_addresses`` carries them out)."""

from __future__ import annotations

import functools
import re
import secrets
import unicodedata
from datetime import timedelta

from sqlalchemy import bindparam
from sqlmodel import Session, delete, func, or_, select

from .. import i18n
from ..boardview import UNNAMED
from ..commands import GAMES_FILTERS, Command
from ..games import as_typed
from ..usage import USAGE
from ..i18n import lazy_gettext
from ..mail.outbound import reply_address
from ..models import Board, Confirmation, Player, PlayerAddress, Subscription, Vacation
from . import boards, computer, letters, passwords
from .addresses import player_address, same_mailbox
from .errors import PlayerError
from .unit import Unit

USERID = re.compile(r"^[a-z][a-z0-9_.-]{1,19}$")
CONFIRM_DAYS = 7  # a confirmation mail may be answered this long
CONFIRM_BOARD = 0  # reply tags pbm+0.<token>@ are confirmations, not boards
DISOWN = "disown"  # a Confirmation that a reply to the welcome mail answers ("not me")
MAX_CONFIRMATIONS_A_DAY = 3  # confirmation mails one address gets in 24 hours, whoever asks

# The words after "<Game> Board <n>" in subjects other than a board mail's, whose word
# is the userid of the player to move: no userid may be one of them.
SUBJECT_WORDS = ("error", "reminder", "history", "preview", "queued", "subscribed", "unsubscribed", "submitted")
GUEST_PREFIX = "guest-"  # the userids of browser seats (pbm.service.rooms): no account may take one
RESERVED_USERIDS = (computer.USERID, *GAMES_FILTERS, *SUBJECT_WORDS)  # no signup or invitation takes these


@functools.cache
def seat_names() -> frozenset[str]:
    """What pages call a browser player who gave no name (``boardview.UNNAMED``), in
    every language, as a userid would be written: no account may be called so, or it
    would pass for every unnamed seat (``host``, ``gast``)."""
    names = set()
    for code in i18n.LANGUAGES:
        with i18n.language(code):
            names.update(i18n.gettext(name).lower() for name in UNNAMED)
    return frozenset(names)


def reserved(userid: str) -> bool:
    """Whether no signup or invitation may take ``userid``."""
    return userid in RESERVED_USERIDS or userid in seat_names() or userid.startswith(GUEST_PREFIX)


_BY_USERID = select(Player).where(Player.userid == bindparam("userid"))  # built once: every password mail reads it


def by_userid(session: Session, userid: str) -> Player | None:
    return session.exec(_BY_USERID, params={"userid": userid.lower()}).first()


def by_address(session: Session, address: str) -> Player | None:
    """The player whose primary or added address this is."""
    added = select(PlayerAddress.player_id).where(PlayerAddress.email == address)
    return session.exec(select(Player).where(or_(Player.email == address, Player.id.in_(added)))).first()


def is_address_of(session: Session, player: Player, address: str) -> bool:
    """Whether mail from ``address`` counts as the player's (asks the database only
    when it is not the primary address)."""
    return address == player.email or address in addresses(session, player)


def addresses(session: Session, player: Player) -> set[str]:
    """Every address whose mail counts as the player's: the primary one and those added."""
    added = session.exec(select(PlayerAddress.email).where(PlayerAddress.player_id == player.id)).all()
    return set(added) | ({player.email} if player.email else set())


def lock(unit: Unit, player: Player) -> Player:
    """The player's row locked until the transaction ends, and read afresh. Work that
    reads what a player allows and then acts on it (a challenge within their limit of
    active boards) takes this lock first, so two such units take turns. PostgreSQL:
    ``FOR NO KEY UPDATE``, which new boards referencing the player do not wait for;
    SQLite writes one transaction at a time anyway (``db.transaction``)."""
    return unit.session.exec(select(Player).where(Player.id == player.id).with_for_update(key_share=True)
                             .execution_options(populate_existing=True)).one()


def authenticate(unit: Unit, userid: str, password: str, usage: str, *, changing: bool = False,
                 among: tuple[Player, ...] = ()) -> Player:
    """The player whose password this is; PlayerError otherwise. Uses the verdict
    checked before the transaction (``passwords.precheck``) when the hash is unchanged.
    ``changing``: the command changes the account (its vacation, subscriptions,
    addresses...), so its row is locked (``lock``): two such mails at once take turns
    instead of both passing a check ("one vacation at a time") made before either wrote.
    ``among``: players read in this transaction already (a board's), looked at before
    the database."""
    if userid.lower() == computer.USERID:  # whether or not its row exists yet
        raise PlayerError(lazy_gettext("computer is the server's own player: nobody plays or sends commands in its "
                                       "name."), usage)
    verdict = unit.passwords.get((userid, password))
    if verdict is not None and verdict.refusal:
        raise PlayerError(verdict.refusal, usage)
    player = next((p for p in among if p.userid == userid.lower()), None) or by_userid(unit.session, userid)
    if player is None:
        raise PlayerError(lazy_gettext("There is no player called %(userid)s; sign up first with: "
                                       "signup %(userid)s <password>", userid=as_typed(userid)), usage)
    if changing:  # read afresh under the lock: a signoff just before is seen
        player = lock(unit, player)
    if player.closed_at is not None:
        raise PlayerError(lazy_gettext("The account %(userid)s was closed (signoff); its userid stays with its "
                                       "games.", userid=userid), USAGE["signup"])  # an account anew, another userid
    if player.password_hash is None:
        raise PlayerError(lazy_gettext("%(userid)s has no password yet: they play by replying to their board "
                                       "mails (or sign up from their own address).", userid=userid), usage)
    if verdict is not None and verdict.password_hash == player.password_hash:
        correct = verdict.correct
    else:
        correct = passwords.is_correct(userid, password, player.password_hash)
    if not correct:
        raise PlayerError(lazy_gettext("The password for %(userid)s is wrong.", userid=userid), usage)
    return player


def signup(unit: Unit, command: Command, comment: str) -> None:
    """Make an account for the sender's address, or for another address once a reply
    from it confirms (so nobody can take an address, or an invited seat, by naming it)."""
    userid = command.userid
    if not USERID.match(userid):
        raise PlayerError(lazy_gettext("\"%(userid)s\" cannot be a userid: use 2 to 20 letters, digits, '.', '-' or "
                                       "'_', starting with a letter.", userid=as_typed(userid)), USAGE["signup"])
    if userid in GAMES_FILTERS:  # "games next" would read it as the filter (see RESERVED_USERIDS)
        raise PlayerError(lazy_gettext("\"%(userid)s\" cannot be a userid: the games command reads it as a filter "
                                       "(next, active or all); choose another.", userid=as_typed(userid)),
                          USAGE["signup"])
    if userid in SUBJECT_WORDS:
        raise PlayerError(lazy_gettext("\"%(userid)s\" cannot be a userid: the subjects of board mails use that word "
                                       "(\"%(subject)s\" would not name a player); choose another.",
                                       userid=as_typed(userid), subject=f"Go Board 101 {userid}"), USAGE["signup"])
    if userid in seat_names():
        raise PlayerError(lazy_gettext("\"%(userid)s\" cannot be a userid: the pages call a browser player who gave "
                                       "no name so; choose another.", userid=as_typed(userid)), USAGE["signup"])
    if reserved(userid):
        raise PlayerError(lazy_gettext("\"%(userid)s\" cannot be a userid: the server keeps it for its own use; "
                                       "choose another.", userid=as_typed(userid)), USAGE["signup"])
    address = player_address(unit.settings, command.args[0], USAGE["signup"]) if command.args else unit.mail.sender
    taken = by_userid(unit.session, userid)
    # an invited player's own userid (the one their invitation names) is theirs to sign up with
    if taken and not (taken.invited and address == unit.mail.sender and taken.email == address):
        raise PlayerError(lazy_gettext("The userid %(userid)s is taken; choose another.", userid=userid),
                          USAGE["signup"])
    address_is_free(unit, address, None)
    password_hash = unit.new_password_hash(command.password)
    if address == unit.mail.sender:
        make_account(unit, userid, address, password_hash)
        passwords.remember(userid, command.password, password_hash)
    else:
        ask_confirmation(unit, "signup", address, userid=userid, password_hash=password_hash)


def change_password(unit: Unit, command: Command, comment: str) -> None:
    player = authenticate(unit, command.userid, command.password, USAGE["change"], changing=True)
    new = command.args[0]
    player.password_hash = unit.new_password_hash(new)
    passwords.remember(player.userid, new, player.password_hash)
    letters.send(unit, player.email, "password_changed", userid=player.userid)


def set_language(unit: Unit, command: Command, comment: str) -> None:
    """``language <userid> <password> de|en``: the language of the player's mails
    from now on (this answer included)."""
    player = authenticate(unit, command.userid, command.password, USAGE["language"], changing=True)
    chosen = command.args[0]
    if chosen not in i18n.LANGUAGES:
        raise PlayerError(lazy_gettext("There is no language \"%(code)s\" here; choose one of %(known)s.",
                                       code=as_typed(chosen[:10]), known=", ".join(i18n.LANGUAGES)), USAGE["language"])
    player.language = chosen
    letters.send(unit, player.email, "language_changed", userid=player.userid)


def address_is_free(unit: Unit, address: str, owner: Player | None) -> None:
    """Refuse an address that another full account holds, as its primary or an added
    address (an invited one may be claimed). Only where the refusal reaches that
    address itself: a mail from it, or its reply to a confirmation. Anyone else
    naming it gets the answer a free address gets (a confirmation is asked of it),
    so nobody learns by mail which userid an address belongs to."""
    if address != unit.mail.sender:
        return
    other = by_address(unit.session, address)
    if other and other != owner and not (other.invited and owner is None):
        raise _taken(address, other)


def _taken(address: str, other: Player) -> PlayerError:
    return PlayerError(lazy_gettext("%(address)s already belongs to the userid %(userid)s.", address=address,
                                    userid=other.userid), USAGE["change"])


def make_account(unit: Unit, userid: str, address: str, password_hash: str) -> None:
    """Make the account (or let an invited player claim the one a challenge made,
    with its games) and welcome the address. A From can be forged: the welcome's
    reply address lets the address's owner disown an account they did not make
    (``account_addresses.confirm``). The account found is read afresh under its row
    lock: on PostgreSQL a signup from the same address may have committed since the
    caller found the address free, and its account is not claimed but refuses this one."""
    existing = by_address(unit.session, address)
    if existing is not None:
        existing = lock(unit, existing)
        if not existing.invited:
            raise _taken(address, existing)
        # an invited player claims the account the challenge made, with its games
        existing.userid, existing.invited, existing.password_hash = userid, False, password_hash
    else:
        unit.session.add(Player(userid=userid, email=address, password_hash=password_hash, created_at=unit.now))
    disowning = Confirmation(token=secrets.token_hex(16), action=DISOWN, address=address, userid=userid,
                             created_at=unit.now, expires_at=unit.now + timedelta(days=CONFIRM_DAYS))
    unit.session.add(disowning)
    letters.send(unit, address, "welcome", userid=userid, address=address, days=CONFIRM_DAYS,
                 reply_to=reply_address(unit.settings, CONFIRM_BOARD, disowning.token))


def ask_confirmation(unit: Unit, action: str, address: str, language: str | None = None, **pending) -> None:
    """Mail ``address`` a confirmation of ``action`` and tell the sender (unless the
    sender is ``address``: the confirmation says it all); for an account's own
    address (``add``, ``change address``) both in the account's ``language``, not in
    that of whoever the addresses may belong to."""
    if unit.strangers >= letters.MAX_STRANGERS_PER_MAIL:
        raise PlayerError(lazy_gettext("One mail may ask one address for confirmation; send the others "
                                       "separately."), lazy_gettext("one mail for each address"))
    letters.check_hourly(unit)
    asked = unit.session.exec(select(func.count()).select_from(Confirmation).where(
        same_mailbox(Confirmation.address, address), Confirmation.action != DISOWN,
        Confirmation.created_at > unit.now - timedelta(days=1))).one()
    if asked >= MAX_CONFIRMATIONS_A_DAY:
        raise PlayerError(lazy_gettext("%(address)s was asked for confirmation %(count)s times today already; "
                                       "try again tomorrow.", address=address, count=MAX_CONFIRMATIONS_A_DAY),
                          lazy_gettext("the same command tomorrow"))
    confirmation = Confirmation(token=secrets.token_hex(16), action=action, address=address,
                                created_at=unit.now, expires_at=unit.now + timedelta(days=CONFIRM_DAYS),
                                **pending)
    unit.session.add(confirmation)
    letters.send(unit, address, "confirm", auto="auto-generated", action=action, address=address,
                 userid=pending["userid"], days=CONFIRM_DAYS, language=language,
                 reply_to=reply_address(unit.settings, CONFIRM_BOARD, confirmation.token))
    if unit.mail.sender != address:
        letters.send(unit, unit.mail.sender, "confirm_sent", action=action, address=address,
                     userid=pending["userid"], days=CONFIRM_DAYS, language=language)


def signoff(unit: Unit, command: Command, comment: str) -> None:
    """Close the account: its running boards are resigned (the opponents get the board
    mail), its addresses freed, its password, watching and vacation gone; the userid
    stays, so its games still read and nobody can take it again."""
    player = authenticate(unit, command.userid, command.password, USAGE["signoff"], changing=True)
    player.closed_at = unit.now  # first, so the mails of the boards resigned offer no new round
    running = unit.session.exec(select(Board.id).where(
        Board.status == "active", or_(Board.seat0_id == player.id, Board.seat1_id == player.id))
        .order_by(Board.id)).all()
    for board_id in running:
        board = boards.lock(unit, board_id)
        boards.play(unit, board, board.seat_of(player.id), "resign")
    unit.board = None
    drop_arrangements(unit, player)
    address = player.email
    player.email, player.password_hash = None, None
    unit.session.flush()
    letters.send(unit, address, "signoff", userid=player.userid, resigned=running, language=player.language)


def drop_arrangements(unit: Unit, player: Player) -> None:
    """End what whoever held the account arranged with it: its added addresses, its
    watching, its pending confirmations, a running vacation (``signoff``, and a
    disowned account's, ``account_addresses``)."""
    from .social import watching_ends  # social reads accounts: imported here, where it is used

    watching_ends(unit, player)  # the pages of the boards they watched count one watcher less
    for table in (PlayerAddress, Subscription):
        unit.session.execute(delete(table).where(table.player_id == player.id))
    unit.session.execute(delete(Confirmation).where(Confirmation.player_id == player.id))
    unit.session.execute(Vacation.__table__.update().where(
        Vacation.player_id == player.id, Vacation.ended_at.is_(None)).values(ended_at=unit.now))


def signed_off(player: Player) -> PlayerError:
    """The refusal of a game with a player who has closed their account."""
    return PlayerError(lazy_gettext("%(userid)s has signed off and plays no more.", userid=player.userid),
                       USAGE["challenge"])


def resolve(unit: Unit, name: str, language: str = i18n.DEFAULT) -> Player:
    """A challenged player by userid or address; an unknown address is invited
    (a player without a password, who plays by replying), in ``language``: the
    challenger's, who knows whom they invite (they choose another once signed up)."""
    s = unit.session
    if name.lower() == computer.USERID:
        return computer.player(unit)
    if "@" not in name:
        player = by_userid(s, name)
        if player is not None and player.closed_at is not None:
            raise signed_off(player)
        if player is None or player.email is None:  # a browser seat is nobody's to challenge
            raise PlayerError(lazy_gettext("There is no player called %(name)s; name them by email address to "
                                           "invite them.", name=as_typed(name)), USAGE["challenge"])
        return player
    address = player_address(unit.settings, name, USAGE["challenge"])
    player = by_address(s, address)
    if player:
        return player
    player = Player(userid=_invited_userid(s, address), email=address, invited=True, language=language,
                    created_at=unit.now)
    s.add(player)
    s.flush()
    return player


_SPELLED_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "æ": "ae", "ø": "oe", "å": "aa",
                              "œ": "oe", "ł": "l", "đ": "d", "þ": "th"})


def _in_ascii(text: str) -> str:
    """``text`` with its letters spelled in ASCII where they can be (jürgen -> juergen,
    josé -> jose): German's umlauts and a few letters as their languages spell them out,
    other accents dropped from their letters; what has no such spelling stays as it is."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_SPELLED_OUT))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _invited_userid(session: Session, address: str) -> str:
    """A userid for an invited address, found with one query: the address's local part
    made a userid (``carol``), or when that is taken, the same with a random suffix
    (``carol-3fa9c1``; the unique index on userid catches the one-in-16-million clash)."""
    base = re.sub(r"[^a-z0-9_.-]", "", _in_ascii(address.split("@")[0].lower()))[:20] or "player"
    if not base[0].isalpha():
        base = "p" + base[:19]
    if len(base) < 2:  # a userid has at least two characters
        base += "1"
    if not reserved(base) and by_userid(session, base) is None:
        return base
    suffixed = f"{base[:13]}-{secrets.token_hex(3)}"  # 20 characters at most, as USERID asks
    return suffixed.replace("-", "_", 1) if suffixed.startswith(GUEST_PREFIX) else suffixed  # not a browser seat's
