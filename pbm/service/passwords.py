"""Passwords: the slow hash is checked before the write lock is taken, a correct
password is then recognised cheaply for a while (a keyed digest kept per
process), and wrong guesses are counted: after ``MAX_PER_ACCOUNT`` wrong
passwords for one account, or ``MAX_PER_SENDER`` from one address, within
``WINDOW``, every password of that account (or from that address) is refused
until the window has passed. Unknown userids cost the same hash as wrong
passwords, so the answer's timing tells nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select
from werkzeug.security import check_password_hash, generate_password_hash

from ..db import reading, transaction
from ..i18n import LazyText, lazy_gettext
from ..models import PasswordFailure, Player

WINDOW = timedelta(minutes=15)
MAX_PER_ACCOUNT = 10
MAX_PER_SENDER = 20
REMEMBER_SECONDS = 600

_KEY = secrets.token_bytes(32)  # per process: nothing remembered survives a restart
_remembered: dict[bytes, float] = {}  # digest -> monotonic expiry
_remembered_lock = threading.Lock()
_DUMMY_HASH = generate_password_hash(secrets.token_hex(8))


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
    if not check_password_hash(password_hash, password):
        return False
    with _remembered_lock:
        if len(_remembered) > 10_000:
            _remembered.clear()
        _remembered[digest] = time.monotonic() + REMEMBER_SECONDS
    return True


def precheck(engine: Engine, pairs: set[tuple[str, str]], sender: str, now: datetime) -> dict:
    """Check each (userid, password) a mail holds, before its unit of work; wrong ones
    are recorded at once (they count even though the mail's work rolls back)."""
    if not pairs:
        return {}
    since = now - WINDOW
    with reading(engine) as session:
        hashes = dict(session.exec(select(Player.userid, Player.password_hash).where(
            Player.userid.in_({userid for userid, _ in pairs}))).all())
        by_sender = session.exec(select(func.count()).select_from(PasswordFailure).where(
            PasswordFailure.sender == sender, PasswordFailure.at > since)).one()
        by_account = dict(session.exec(select(PasswordFailure.userid, func.count()).where(
            PasswordFailure.userid.in_(set(hashes)), PasswordFailure.at > since)
            .group_by(PasswordFailure.userid)).all())
    verdicts, failures = {}, []
    for userid, password in pairs:
        stored = hashes.get(userid)
        if by_sender >= MAX_PER_SENDER or by_account.get(userid, 0) >= MAX_PER_ACCOUNT:
            said = {"minutes": WINDOW.seconds // 60, "until": f"{now + WINDOW:%H:%M}"}
            verdicts[(userid, password)] = Verdict(stored, False, lazy_gettext(
                "Too many wrong passwords from %(sender)s in the last %(minutes)s minutes; passwords from "
                "%(sender)s are refused until %(until)s UTC.", sender=sender, **said) if by_sender >= MAX_PER_SENDER
                else lazy_gettext("Too many wrong passwords for %(userid)s in the last %(minutes)s minutes; passwords "
                                  "for %(userid)s are refused until %(until)s UTC.", userid=userid, **said))
            continue
        if stored:
            correct = is_correct(userid, password, stored)
        else:  # no such account (or no password yet): spend the same time as a wrong password
            correct = check_password_hash(_DUMMY_HASH, password) and False
        verdicts[(userid, password)] = Verdict(stored, correct)
        if stored and not correct:
            failures.append(PasswordFailure(userid=userid, sender=sender[:320], at=now))
    if failures:
        with transaction(engine) as session:
            session.add_all(failures)
    return verdicts
