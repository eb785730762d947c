"""Passwords: the slow hash is checked before the write lock is taken, a correct
password is then recognised cheaply for a while (a keyed digest kept per
process), and wrong guesses are counted: after ``MAX_PER_ACCOUNT`` wrong
passwords for one account, or ``MAX_PER_SENDER`` from one address, within
``WINDOW``, every password of that account (or from that address) is refused
until the window has passed; the guesses of one mail count as they are
checked, in the order of its lines, and one mail has at most
``MAX_CHECKED_PER_MAIL`` passwords checked (as many slow checks at most).
Unknown userids cost the same hash as wrong passwords, so the answer's timing
tells nothing, and count as wrong guesses from their sender.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import threading
import time
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, or_
from sqlalchemy.engine import Engine
from sqlmodel import select
from werkzeug.security import check_password_hash, generate_password_hash

from ..command_passwords import new_password
from ..db import transaction
from ..i18n import LazyText, lazy_gettext
from ..models import PasswordFailure, Player

WINDOW = timedelta(minutes=15)
MAX_PER_ACCOUNT = 10
MAX_PER_SENDER = 20
REMEMBER_SECONDS = 600
HASHED_BEFOREHAND = 3
MAX_CHECKED_PER_MAIL = 3  # different passwords one mail may have checked: a list of guesses costs no more

_KEY = secrets.token_bytes(32)  # per process: nothing remembered survives a restart
_remembered: dict[bytes, float] = {}  # digest -> monotonic expiry
_remembered_lock = threading.Lock()


@functools.cache
def _dummy_hash() -> str:
    """A hash of no one's password, made at its first use (not at import: every
    ``pbm ingest`` imports this module), for checking a guess at a missing account."""
    return generate_password_hash(secrets.token_hex(8))


@dataclass(frozen=True)
class Verdict:
    """The result of checking one password against one stored hash."""

    password_hash: str | None
    correct: bool
    refusal: LazyText | None = None  # a lockout sentence, when guessing is locked


def _digest(userid: str, password: str, password_hash: str) -> bytes:
    return hmac.new(_KEY, "\0".join((userid, password, password_hash)).encode("utf-8", "surrogatepass"),
                    hashlib.sha256).digest()


def is_correct(userid: str, password: str, password_hash: str) -> bool:
    """The slow check, skipped when this process saw this very password lately."""
    digest = _digest(userid, password, password_hash)
    with _remembered_lock:
        if _remembered.get(digest, 0) > time.monotonic():
            return True
    typed = unicodedata.normalize("NFC", password)
    # a hash stored before passwords were hashed in NFC is matched by the form typed then
    if not check_password_hash(password_hash, typed) and (typed == password or
                                                          not check_password_hash(password_hash, password)):
        return False
    remember(userid, password, password_hash)
    return True


@dataclass(frozen=True)
class Stored:
    """What checking a mail's passwords needs from the database, read before the
    check (``look_up``), in the caller's read transaction."""

    hashes: dict[str, str]  # userid -> password hash, for the accounts that exist
    by_sender: list[datetime]  # when the sender's wrong passwords within the window came, oldest first
    by_account: dict[str, list[datetime]]  # userid -> when its wrong passwords within the window came


# Built once: every mail with a password reads them.
_HASHES = select(Player.userid, Player.password_hash).where(Player.userid.in_(bindparam("userids", expanding=True)))
_FAILURES = select(PasswordFailure.userid, PasswordFailure.sender, PasswordFailure.at).where(
    PasswordFailure.at > bindparam("since"),
    or_(PasswordFailure.sender == bindparam("sender"),
        PasswordFailure.userid.in_(bindparam("userids", expanding=True)))).order_by(PasswordFailure.at)


def look_up(connection, pairs: set[tuple[str, str]], sender: str, now: datetime) -> Stored:
    """The stored hashes of the accounts ``pairs`` name and the recent wrong guesses
    from ``sender`` or for those accounts (few rows: guessing is locked past the
    limits), read on ``connection`` as plain rows."""
    userids = sorted({userid for userid, _ in pairs})
    hashes = dict(connection.execute(_HASHES, {"userids": userids}).all())
    failures = connection.execute(_FAILURES, {"since": now - WINDOW, "sender": sender,
                                              "userids": sorted(hashes)}).all()
    by_account: dict[str, list[datetime]] = {}
    for userid, _, at in failures:
        if userid in hashes:
            by_account.setdefault(userid, []).append(at)
    return Stored(hashes, [at for _, failed_from, at in failures if failed_from == sender], by_account)


def _locked_until(failures: list[datetime], most: int) -> datetime | None:
    """When guessing locked by ``failures`` (oldest first) opens again: once all but
    ``most - 1`` of them have left the window; None when it is not locked."""
    if len(failures) < most:
        return None
    return failures[len(failures) - most] + WINDOW


def hashed(password: str) -> str:
    """The stored hash of a new password; made before the write lock is taken (it is
    slow on purpose), and remembered as correct for the account it is set on
    (``remember``) so that its first use costs no second hash. Hashed in Unicode NFC:
    "ä" typed as one character or as a and a combining diaeresis is one password."""
    return generate_password_hash(unicodedata.normalize("NFC", password))


def hashed_beforehand(commands) -> dict[str, str]:
    """Hashes of the new passwords that ``commands`` set, made before the unit of
    work; at most ``HASHED_BEFOREHAND`` per mail (any further one is hashed inside
    the unit, as it would have been)."""
    wanted = []
    for command in commands:
        password = new_password(command)
        if password and password not in wanted:
            wanted.append(password)
    return {password: hashed(password) for password in wanted[:HASHED_BEFOREHAND]}


def remember(userid: str, password: str, password_hash: str) -> None:
    """Count ``password`` as correct for ``userid`` while ``password_hash`` is its hash."""
    with _remembered_lock:
        if len(_remembered) > 10_000:
            _remembered.clear()
        _remembered[_digest(userid, password, password_hash)] = time.monotonic() + REMEMBER_SECONDS


def precheck(engine: Engine, pairs: list[tuple[str, str]], sender: str, now: datetime, stored: Stored) -> dict:
    """Check each (userid, password) a mail holds against ``stored``, in the mail's
    order, before its unit of work: each wrong one counts for the pairs after it
    (a mail of guesses meets the lockout as mails one by one would), and is
    recorded at once (it counts even though the mail's work rolls back); past
    MAX_CHECKED_PER_MAIL passwords the rest are refused unchecked."""
    hashes = stored.hashes
    by_sender, by_account = list(stored.by_sender), {userid: list(at) for userid, at in stored.by_account.items()}
    verdicts, failures, checked = {}, [], 0
    for userid, password in pairs:
        stored = hashes.get(userid)
        sender_until = _locked_until(by_sender, MAX_PER_SENDER)
        account_until = _locked_until(by_account.get(userid, []), MAX_PER_ACCOUNT)
        if sender_until or account_until:
            said = {"minutes": WINDOW.seconds // 60, "until": f"{max(filter(None, (sender_until, account_until))):%H:%M}"}
            verdicts[(userid, password)] = Verdict(stored, False, lazy_gettext(
                "Too many wrong passwords from %(sender)s in the last %(minutes)s minutes; passwords from "
                "%(sender)s are refused until %(until)s UTC.", sender=sender, **said) if sender_until
                else lazy_gettext("Too many wrong passwords for %(userid)s in the last %(minutes)s minutes; passwords "
                                  "for %(userid)s are refused until %(until)s UTC.", userid=userid, **said))
            continue
        if checked == MAX_CHECKED_PER_MAIL:
            verdicts[(userid, password)] = Verdict(stored, False, lazy_gettext(
                "One mail may check at most %(count)s different passwords; send the others in mails of their own.",
                count=MAX_CHECKED_PER_MAIL))
            continue
        checked += 1
        if stored:
            correct = is_correct(userid, password, stored)
        else:  # no such account (or no password yet): spend the same time as a wrong password
            correct = check_password_hash(_dummy_hash(), password) and False
        verdicts[(userid, password)] = Verdict(stored, correct)
        if not correct:
            failures.append(PasswordFailure(userid=userid[:32], sender=sender[:320], at=now))
            by_sender.append(now)
            if stored:
                by_account.setdefault(userid, []).append(now)
    if failures:
        with transaction(engine) as session:
            session.add_all(failures)
    return verdicts
