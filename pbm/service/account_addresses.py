"""An account's addresses: moving it to another address (``change address``), adding
addresses (``add``), and the reply from an address that confirms either, or a signup
for that address, or with "not me" disowns an account made from it (the reply to its
welcome mail). A From proves nothing: only a reply from the address itself binds it
to an account (``accounts.ask_confirmation`` mails the question)."""

from __future__ import annotations

from sqlmodel import delete, select

from ..commands import Command
from ..i18n import lazy_gettext
from ..models import Confirmation, Player, PlayerAddress
from ..usage import USAGE
from . import accounts, boards, letters
from .addresses import player_address
from .errors import PlayerError
from .unit import Unit

MAX_ADDED = 5  # addresses an account may have besides its primary one


def change_address(unit: Unit, command: Command, comment: str) -> None:
    """Move an account to another address once a reply from it confirms, even when
    the mail says it comes from there (a From proves nothing: one forged mail would
    bind a stranger's address to an account)."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["change"], changing=True)
    address = player_address(unit.settings, command.args[0], USAGE["change"])
    accounts.address_is_free(unit, address, player)
    if address == player.email:
        _move_account(unit, player, address)
    else:
        accounts.ask_confirmation(unit, "address", address, player.language, userid=player.userid, player_id=player.id)


def add_address(unit: Unit, command: Command, comment: str) -> None:
    """Another address for the account, once a reply from it confirms (even when the
    mail says it comes from there, see ``change_address``). Board mails still go to
    the primary one."""
    player = accounts.authenticate(unit, command.userid, command.password, USAGE["add"], changing=True)
    address = player_address(unit.settings, command.args[0], USAGE["add"])
    _check_can_add(unit, player, address)
    accounts.ask_confirmation(unit, "add", address, player.language, userid=player.userid, player_id=player.id)


def _check_can_add(unit: Unit, player: Player, address: str) -> None:
    if player.closed_at is not None:
        raise PlayerError(lazy_gettext("The account %(userid)s was closed (signoff).", userid=player.userid),
                          USAGE["add"])
    if address in accounts.addresses(unit.session, player):
        raise PlayerError(lazy_gettext("%(address)s is already an address of %(userid)s.", address=address,
                                       userid=player.userid), USAGE["add"])
    accounts.address_is_free(unit, address, player)
    if len(accounts.addresses(unit.session, player)) > MAX_ADDED:
        raise PlayerError(lazy_gettext("%(userid)s has %(count)s added addresses, the most allowed.",
                                       userid=player.userid, count=MAX_ADDED), USAGE["add"])


def _add_address(unit: Unit, player: Player, address: str) -> None:
    unit.session.add(PlayerAddress(player_id=player.id, email=address, created_at=unit.now))
    for to in (player.email, address):  # both in the account's language
        letters.send(unit, to, "address_added", userid=player.userid, primary=player.email, added=address,
                     language=player.language)


def confirm(unit: Unit, token: str, line: str) -> None:
    """A reply to a confirmation mail (``line``: its first line): do what it confirms,
    if it comes from that address; a reply to a welcome mail disowns (``_disown``)."""
    pending = unit.session.exec(select(Confirmation).where(Confirmation.token == token)).first()
    if pending is None or pending.expires_at < unit.now:
        raise PlayerError(lazy_gettext("This confirmation is unknown or has expired; send the command again."),
                          "help")
    if pending.address != unit.mail.sender:
        raise PlayerError(lazy_gettext("This confirmation is for another address; only a reply from the address "
                                       "it was sent to confirms it."), "help")  # which one, only that mailbox reads
    if pending.action == accounts.DISOWN:
        _disown(unit, pending, line)
        return
    unit.session.delete(pending)
    if pending.action == "add":
        player = unit.session.get(Player, pending.player_id)
        _check_can_add(unit, player, pending.address)
        _add_address(unit, player, pending.address)
    elif pending.action == "signup":
        if accounts.by_userid(unit.session, pending.userid):
            raise PlayerError(lazy_gettext("The userid %(userid)s was taken meanwhile; sign up with another.",
                                           userid=pending.userid), USAGE["signup"])
        accounts.address_is_free(unit, pending.address, None)
        accounts.make_account(unit, pending.userid, pending.address, pending.password_hash)
    else:
        player = unit.session.get(Player, pending.player_id)
        accounts.address_is_free(unit, pending.address, player)
        _move_account(unit, player, pending.address)


def _disown(unit: Unit, pending: Confirmation, line: str) -> None:
    """A reply to a welcome mail: with "not me" on its first line, the account made
    with this address loses its password and becomes an invited seat again at this
    address, its games kept, so the address's owner can sign up and take it; and
    whoever forged the signup keeps nothing of it: not the addresses they added or
    moved it to, nor what they watch, nor the reply tags and play links of its
    seats, which are new."""
    if " ".join(line.lower().strip(" .!").split()) != "not me":
        raise PlayerError(lazy_gettext("A reply to the welcome mail only disowns an account: to do that, write "
                                       "\"not me\" on its first line. Send commands to the server's address."),
                          "help")
    unit.session.delete(pending)
    player = accounts.by_userid(unit.session, pending.userid)
    if player is None or player.invited or player.closed_at is not None:
        raise PlayerError(lazy_gettext("The account %(userid)s no longer uses %(address)s; there is nothing to "
                                       "disown.", userid=pending.userid, address=pending.address), "help")
    player = accounts.lock(unit, player)
    accounts.drop_arrangements(unit, player)
    player.password_hash, player.invited = None, True
    if player.email != pending.address:  # moved away since: back to this address, unless another account has it
        player.email = None
        unit.session.flush()
        if accounts.by_address(unit.session, pending.address) is None:
            player.email = pending.address
    for board in boards.lock_seated(unit, player, running=False):
        seat = board.seat_of(player.id)
        setattr(board, f"token{seat}", boards.new_token())  # the old reply tags and play links answer nobody
        unit.board_changed(board, aside=True)
    letters.send(unit, pending.address, "disowned", userid=player.userid, address=pending.address)


def _move_account(unit: Unit, player: Player, address: str) -> None:
    unit.session.execute(delete(PlayerAddress).where(PlayerAddress.email == address))  # added, now primary
    old, player.email = player.email, address
    for to in dict.fromkeys((old, address)):  # both told, in the account's language; once when unchanged
        letters.send(unit, to, "address_changed", userid=player.userid, new=address, old=old,
                     language=player.language)
