"""Accounts: signup, passwords, addresses, and players invited by a challenge."""

from __future__ import annotations

import re

from email_validator import EmailNotValidError, validate_email
from sqlmodel import Session, select
from werkzeug.security import check_password_hash, generate_password_hash

from ..commands import USAGE, Command
from ..models import Player
from . import letters
from .errors import PlayerError
from .unit import Unit

USERID = re.compile(r"^[a-z][a-z0-9_.-]{1,19}$")
MIN_PASSWORD = 4


def normalise_address(address: str) -> str:
    """The canonical form of an address; PlayerError when it is not usable."""
    try:
        return validate_email(address, check_deliverability=False, test_environment=True).normalized.lower()
    except EmailNotValidError as error:
        raise PlayerError(f"{address!r} is not a usable email address: {error}") from None


def by_userid(session: Session, userid: str) -> Player | None:
    return session.exec(select(Player).where(Player.userid == userid.lower())).first()


def by_address(session: Session, address: str) -> Player | None:
    return session.exec(select(Player).where(Player.email == address)).first()


def authenticate(session: Session, userid: str, password: str, usage: str) -> Player:
    """The player whose password this is; PlayerError otherwise."""
    player = by_userid(session, userid)
    if player is None:
        raise PlayerError(f"There is no player called {userid}; sign up first with: "
                          f"signup {userid} <password>", usage)
    if player.password_hash is None:
        raise PlayerError(f"{userid} has no password yet: reply to a board mail to play, or send "
                          f"signup {userid} <password> from {player.email}.", usage)
    if not check_password_hash(player.password_hash, password):
        raise PlayerError(f"The password for {userid} is wrong.", usage)
    return player


def signup(unit: Unit, command: Command, comment: str) -> None:
    s = unit.session
    userid = command.userid
    if not USERID.match(userid):
        raise PlayerError(f"{userid!r} cannot be a userid: use 2 to 20 letters, digits, '.', '-' or '_', "
                          "starting with a letter.", USAGE["signup"])
    if len(command.password) < MIN_PASSWORD:
        raise PlayerError(f"The password is too short; use at least {MIN_PASSWORD} characters.",
                          USAGE["signup"])
    address = normalise_address(command.args[0] if command.args else unit.mail.sender)
    if by_userid(s, userid):
        raise PlayerError(f"The userid {userid} is taken; choose another.", USAGE["signup"])
    existing = by_address(s, address)
    if existing and not existing.invited:
        raise PlayerError(f"{address} already belongs to the userid {existing.userid}.", USAGE["change"])
    if existing:  # an invited player claims the account the challenge made
        existing.userid, existing.invited = userid, False
        existing.password_hash = generate_password_hash(command.password)
    else:
        s.add(Player(userid=userid, email=address, password_hash=generate_password_hash(command.password),
                     created_at=unit.now))
    letters.send(unit, address, "welcome", userid=userid, address=address)


def change_password(unit: Unit, command: Command, comment: str) -> None:
    player = authenticate(unit.session, command.userid, command.password, USAGE["change"])
    new = command.args[0]
    if len(new) < MIN_PASSWORD:
        raise PlayerError(f"The new password is too short; use at least {MIN_PASSWORD} characters.",
                          USAGE["change"])
    player.password_hash = generate_password_hash(new)
    letters.send(unit, player.email, "password_changed", userid=player.userid)


def change_address(unit: Unit, command: Command, comment: str) -> None:
    player = authenticate(unit.session, command.userid, command.password, USAGE["change"])
    address = normalise_address(command.args[0])
    other = by_address(unit.session, address)
    if other and other.id != player.id:
        raise PlayerError(f"{address} already belongs to the userid {other.userid}.", USAGE["change"])
    old, player.email = player.email, address
    for to in dict.fromkeys((old, address)):  # both told; once when unchanged
        letters.send(unit, to, "address_changed", userid=player.userid, new=address, old=old)


def resolve(unit: Unit, name: str) -> Player:
    """A challenged player by userid or address; an unknown address is invited
    (a player without a password, who plays by replying)."""
    s = unit.session
    if "@" not in name:
        player = by_userid(s, name)
        if player is None:
            raise PlayerError(f"There is no player called {name}; name them by email address "
                              "to invite them.", USAGE["challenge"])
        return player
    address = normalise_address(name)
    player = by_address(s, address)
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
    player = Player(userid=userid, email=address, invited=True, created_at=unit.now)
    s.add(player)
    s.flush()
    return player
