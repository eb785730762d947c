"""Passwords: never stored in clear, guessing locked per account and per sender."""

from sqlmodel import select

from pbm.db import reading
from pbm.models import InboundMessage, MoveRecord
from pbm.service import passwords
from pbm.service.passwords import MAX_PER_ACCOUNT, MAX_PER_SENDER

ALICE, BOB, MALLORY = "alice@players.test", "bob@players.test", "mallory@evil.test"


def test_the_password_is_not_kept_in_the_record_of_the_mail(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    players.send(ALICE, "change password alice alicepw newsecret")
    with reading(players.server.engine) as session:
        subjects = session.exec(select(InboundMessage.subject)).all()
    assert "greatkingdom move 101 alice ******** D4" in subjects
    assert "change password alice ******** ********" in subjects
    assert not any("alicepw" in s or "newsecret" in s for s in subjects)



def test_a_refused_line_is_kept_without_its_password(players):
    """A slip (the move forgotten, a word too many, a mistyped board number) is refused,
    and its record hides the words where the command's forms have a password."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    slips = {"greatkingdom move 101 alice alicepw": "greatkingdom move 101 alice ********",
             "greatkingdom resign 101 alice alicepw now": "greatkingdom resign 101 alice ******** now",
             "gr m 1o1 alice alicepw D4": "gr m 1o1 alice ******** D4",
             "move 101 alice alicepw": "move 101 alice ********",
             "change password alice alicepw": "change password alice ********",
             "signoff alice alicepw please": "signoff alice ******** please"}
    for line in slips:
        assert players.send(ALICE, line).status == "rejected", line
    with reading(players.server.engine) as session:
        subjects = session.exec(select(InboundMessage.subject)).all()
    assert set(slips.values()) <= set(subjects)
    assert not any("alicepw" in s for s in subjects)

def test_guessing_one_account_is_locked_even_for_the_right_password(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    for guess in range(MAX_PER_ACCOUNT):
        wrong = players.send(f"guesser{guess}@evil.test", f"greatkingdom move 101 alice guess{guess} D4")
        assert wrong.status == "rejected" and "The password for alice is wrong." in wrong.error
    locked = players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    assert locked.status == "rejected"
    assert "Too many wrong passwords for alice in the last 15 minutes" in locked.error
    assert players.send(BOB, "greatkingdom show 101").status == "applied"  # others are not locked out


def test_the_lock_says_when_it_opens_and_opens_then(players):
    """Locked by the tenth wrong guess within 15 minutes, an account opens again as the
    oldest of them leaves the window, and the refusal names that time."""
    from datetime import datetime, timedelta, timezone

    from .conftest import make_mail

    start = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    send = lambda sender, subject, at: players.server.handle_raw(make_mail(sender, subject), now=at)
    send(ALICE, "greatkingdom challenge alice bob", start)
    for guess in range(MAX_PER_ACCOUNT):  # one a minute, 10:00 to 10:09
        send(f"guesser{guess}@evil.test", f"greatkingdom move 101 alice guess{guess} D4",
             start + timedelta(minutes=guess))
    locked = send(ALICE, "greatkingdom move 101 alice alicepw D4", start + timedelta(minutes=12))
    assert "passwords for alice are refused until 10:15 UTC." in locked.error
    opened = send(ALICE, "greatkingdom move 101 alice alicepw D4", start + timedelta(minutes=15, seconds=1))
    assert opened.status == "applied"


def test_guessing_from_one_address_is_locked_for_every_account(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    for guess in range(MAX_PER_SENDER):
        players.send("guesser@evil.test", f"greatkingdom move 101 {('alice', 'bob')[guess % 2]} x{guess} D4")
    locked = players.send("guesser@evil.test", "greatkingdom move 101 bob bobpw D4")
    assert "Too many wrong passwords from guesser@evil.test" in locked.error


def test_an_unknown_userid_and_a_wrong_password_are_both_refused(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    unknown = players.send("x@evil.test", "greatkingdom move 101 nobody pw D4")
    assert unknown.status == "rejected" and "There is no player called nobody" in unknown.error


def test_a_correct_password_costs_the_slow_hash_once_then_is_recognised(players, monkeypatch):
    from pbm.service import passwords

    hashed = []
    slow = passwords.check_password_hash
    monkeypatch.setattr(passwords, "check_password_hash", lambda h, pw: hashed.append(pw) or slow(h, pw))
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert hashed == []  # this process made alice's hash at her signup: that was the slow check
    passwords._remembered.clear()  # as in another process, or once the time to remember has passed
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw F4").status == "rejected"  # not her turn
    assert players.send(BOB, "greatkingdom move 101 bob bobpw F4").status == "applied"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw C3").status == "applied"
    assert hashed == ["alicepw", "bobpw"]  # alice's second mail was recognised without the hash
    wrong = players.send(ALICE, "greatkingdom move 101 alice alicepx G7")
    assert wrong.status == "rejected" and hashed[-1] == "alicepx"  # a wrong one always costs the hash
    players.send(ALICE, "change password alice alicepw newsecret")
    stale = players.send(BOB, "greatkingdom move 101 alice alicepw G7")
    assert "The password for alice is wrong." in stale.error  # the new hash: nothing old is recognised
    assert players.send(BOB, "greatkingdom move 101 bob bobpw G7").status == "applied"
    hashed.clear()
    assert players.send(ALICE, "greatkingdom move 101 alice newsecret B2").status == "applied"
    assert hashed == []  # the new password was hashed as it was set


def test_a_mail_of_guesses_meets_the_lockout_line_by_line(players, server):
    """49 wrong passwords and then the right one, in one multiple mail: the right one
    comes after the lockout, as it would in the fiftieth mail."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    guesses = [f"greatkingdom move 101 alice guess{n} D4" for n in range(49)]
    result = players.send(MALLORY, "multiple", "\n".join([*guesses, "greatkingdom move 101 alice alicepw D4"]))
    assert result.status == "rejected"
    with reading(players.server.engine) as session:
        assert session.exec(select(MoveRecord)).all() == []


def test_one_mail_costs_a_few_slow_password_checks(players, monkeypatch):
    """One mail, from anyone, names 48 passwords of two accounts and of none: it costs
    MAX_CHECKED_PER_MAIL slow checks, the rest are refused with a sentence."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    slow = []
    real = passwords.check_password_hash
    monkeypatch.setattr(passwords, "check_password_hash", lambda *a: slow.append(1) or real(*a))
    lines = "\n".join(f"greatkingdom move 101 {user} guess{n} D4"
                      for n, user in enumerate(["alice", "bob", "nobody"] * 16))
    result = players.send(MALLORY, "multiple", lines)
    assert len(slow) == passwords.MAX_CHECKED_PER_MAIL
    assert result.status == "rejected"
    assert (f"One mail may check at most {passwords.MAX_CHECKED_PER_MAIL} different passwords; send the others in "
            "mails of their own.") in result.error


def test_a_password_with_accents_is_the_same_however_its_letters_are_encoded(players, monkeypatch):
    """"ä" is one character (U+00E4) from most keyboards and two (a, U+0308) from some:
    a password is compared in one form (Unicode NFC), and a hash stored before that
    (of the two-character form) is still matched by what was typed then."""
    composed, decomposed = "k\u00e4se-pw", "ka\u0308se-pw"
    assert players.send("carol@players.test", f"signup carol {decomposed}").status == "applied"
    monkeypatch.setattr(passwords, "_remembered", {})  # no memo of the signup: the slow check decides
    assert players.send("carol@players.test", f"vacation carol {composed} 1").status == "applied"
    assert players.send("carol@players.test", f"vacation carol {decomposed} off").status == "applied"
    with reading(players.server.engine) as session:
        from pbm.models import Player
        carol = session.exec(select(Player).where(Player.userid == "carol")).one()
    assert passwords.is_correct("carol", composed, carol.password_hash)
    older = passwords.generate_password_hash(decomposed)  # as the server stored it before
    assert passwords.is_correct("carol", decomposed, older) and not passwords.is_correct("carol", "kase-pw", older)
