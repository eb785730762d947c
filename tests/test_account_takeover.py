"""An account gains an address only by a reply from that address: naming someone
else's address (or an invited player's) in signup or change address takes nothing."""

import pytest
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, Player

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"
VICTIM, ATTACKER = "victim@players.test", "mallory@evil.test"


def accounts(server) -> dict[str, tuple[str, bool]]:
    with reading(server.engine) as session:
        return {p.userid: (p.email, p.invited) for p in session.exec(select(Player)).all()}


def flat(mail) -> str:
    """The body with its line wrapping undone."""
    return " ".join(body(mail).split())


def confirmation_reply_to(mail) -> str:
    return mail["Reply-To"].addresses[0].addr_spec


def test_signup_naming_an_invited_address_takes_over_nothing(players, outbox, server):
    players.send(ALICE, f"greatkingdom challenge alice {VICTIM}")
    invited = {u: e for u, (e, inv) in accounts(server).items() if inv}
    outbox.new()
    result = players.send(ATTACKER, f"signup mallory secret9 {VICTIM}")
    assert result.status == "applied"
    mails = sorted(outbox.new(), key=lambda m: m["To"].addresses[0].addr_spec != VICTIM)  # the victim's first
    assert [m["To"].addresses[0].addr_spec for m in mails] == [VICTIM, ATTACKER]
    assert "Someone asked to sign up the pbm userid mallory with this address." in flat(mails[0])
    assert "once that address confirms it" in flat(mails[1])
    assert "mallory" not in accounts(server)  # nothing yet
    assert {u: e for u, (e, inv) in accounts(server).items() if inv} == invited
    # The attacker cannot use the victim's seat with the password they chose.
    seat = next(iter(invited))
    refused = players.send(ATTACKER, f"greatkingdom resign 101 {seat} secret9")
    assert refused.status == "rejected" and VICTIM not in refused.error
    assert VICTIM not in body(outbox.new()[-1])  # the invited address is not disclosed
    # A reply to the confirmation from anywhere but the victim's address confirms nothing.
    forged = players.send(ATTACKER, "Re: confirm", "yes", to=confirmation_reply_to(mails[0]))
    assert forged.status == "rejected" and "mallory" not in accounts(server)


def test_signup_for_another_address_is_made_when_that_address_replies(players, outbox, server):
    players.send(ALICE, "signup carol carolpw carol@players.test")
    ask = outbox.to("carol@players.test")[-1]
    assert "carol" not in accounts(server)
    assert players.send("carol@players.test", "Re: " + str(ask["Subject"]), "ok",
                        to=confirmation_reply_to(ask)).status == "applied"
    assert accounts(server)["carol"] == ("carol@players.test", False)
    assert outbox.to("carol@players.test")[-1]["Subject"] == "pbm signup"
    again = players.send("carol@players.test", "Re: again", "ok", to=confirmation_reply_to(ask))
    assert again.status == "rejected" and "unknown or has expired" in again.error


def test_signup_without_an_address_binds_the_sender(players, server):
    assert players.send("dave@players.test", "signup dave davepw").status == "applied"
    assert accounts(server)["dave"] == ("dave@players.test", False)


def test_change_address_to_another_address_waits_for_its_reply(players, outbox, server):
    players.send(ALICE, "change address alice alicepw alice@new.test")
    assert accounts(server)["alice"] == (ALICE, False)
    ask = outbox.to("alice@new.test")[-1]
    assert "move the pbm account alice to this address" in flat(ask)
    assert players.send("alice@new.test", "Re: x", "yes", to=confirmation_reply_to(ask)).status == "applied"
    assert accounts(server)["alice"] == ("alice@new.test", False)


def test_a_forged_from_binds_no_strangers_address_to_an_account(players, outbox, server):
    """mallory writes as if from carol's address: add and change address ask carol,
    who never answers; her address stays free, and she gets one question each."""
    carol = "carol@players.test"
    players.send("mallory@evil.test", "signup mallory mallorypw")
    outbox.new()
    assert players.send(carol, "add mallory mallorypw carol@players.test").status == "applied"
    assert players.send(carol, "change address mallory mallorypw carol@players.test").status == "applied"
    asked = outbox.new()
    assert [m["To"] for m in asked] == [carol, carol]
    assert all("If it was not you, ignore this mail: nothing happens without your reply." in flat(m) for m in asked)
    assert accounts(server)["mallory"] == ("mallory@evil.test", False)
    assert players.send(carol, "signup carol carolpw").status == "applied"  # her address is still hers to take


@pytest.mark.parametrize("userid", ["error", "reminder", "history"])
def test_a_word_of_board_mail_subjects_is_no_userid(players, userid):
    """"Go Board 148 error" would read as the error mail "Go Board 148 Error"."""
    result = players.send("eve@players.test", f"signup {userid} secret")
    assert result.status == "rejected"
    assert result.error.startswith(f"\"{userid}\" cannot be a userid: the subjects of board mails use that word")


@pytest.mark.parametrize("userid", ["host", "guest", "player", "gast", "gastgeber", "spieler"])
def test_what_pages_call_an_unnamed_browser_player_is_no_userid(players, userid):
    """An account "guest" would pass for every browser seat left unnamed ("Guest", in
    German "Gast"), on every page and mail that names the players."""
    result = players.send("eve@players.test", f"signup {userid} secret")
    assert result.status == "rejected"
    assert result.error.startswith(f"\"{userid}\" cannot be a userid: the pages call a browser player who gave no "
                                   "name so")


def test_an_invited_address_is_never_named_as_an_unnamed_seat(players, server):
    assert players.send("alice@players.test", "go challenge alice guest@elsewhere.test").status == "applied"
    with reading(server.engine) as session:
        invited = session.exec(select(Player).where(Player.email == "guest@elsewhere.test")).one()
    assert invited.userid.startswith("guest_") and len(invited.userid) == len("guest_") + 6  # not a browser seat's


def test_any_word_is_a_password_as_in_pbmserv(players, server):
    assert players.send("eve@players.test", "signup eve x").status == "applied"
    assert players.send("eve@players.test", "change password eve x pw").status == "applied"
    assert players.send("eve@players.test", "go challenge eve alice").status == "applied"
    assert players.send("eve@players.test", "go move 101 eve pw D4").status == "applied"


def test_a_taken_userid_is_named_before_a_short_password(players):
    result = players.send("eve@players.test", "signup alice pw")
    assert result.status == "rejected" and "The userid alice is taken" in result.error


def test_naming_another_accounts_address_tells_nobody_whose_it_is(players, outbox, server):
    """signup, change address and add naming an address of another account are answered
    as for a free address (a confirmation goes there); only that address, when it
    replies, learns why nothing happens."""
    for command in (f"signup mallory secret9 {ALICE}", f"change address bob bobpw {ALICE}", f"add bob bobpw {ALICE}"):
        outbox.new()
        result = players.send(ATTACKER if command.startswith("signup") else BOB, command)
        assert result.status == "applied", (command, result.error)
        answer, ask = sorted(outbox.new(), key=lambda m: m["To"].addresses[0].addr_spec == ALICE)
        assert "alice" not in flat(answer).replace(ALICE, "") and "once that address confirms it" in flat(answer)
        confirmed = players.send(ALICE, "Re: confirm", "yes", to=confirmation_reply_to(ask))
        assert confirmed.status == "rejected" and f"{ALICE} already belongs to the userid alice." in confirmed.error
        assert [m["To"].addresses[0].addr_spec for m in outbox.new()] == [ALICE]
    assert accounts(server) == {"alice": (ALICE, False), "bob": (BOB, False)}


def test_an_address_is_asked_for_confirmation_at_most_three_times_a_day(players, outbox, server):
    """However many mails (forged or not) name an address, it gets at most three
    confirmation mails in 24 hours; the fourth asker is told so."""
    from datetime import timedelta

    from pbm.models import utcnow
    from pbm.service.accounts import MAX_CONFIRMATIONS_A_DAY

    from .conftest import make_mail

    for n in range(MAX_CONFIRMATIONS_A_DAY):
        assert players.send(ATTACKER, f"signup mal{n} secret9 {VICTIM}").status == "applied"
    assert len(outbox.to(VICTIM)) == MAX_CONFIRMATIONS_A_DAY
    refused = players.send(ATTACKER, f"signup mal9 secret9 {VICTIM}")
    assert refused.status == "rejected" and f"{VICTIM} was asked for confirmation 3 times today" in refused.error
    assert len(outbox.to(VICTIM)) == MAX_CONFIRMATIONS_A_DAY
    tomorrow = utcnow() + timedelta(days=1, minutes=1)
    assert server.handle_raw(make_mail(ATTACKER, f"signup mal9 secret9 {VICTIM}"), now=tomorrow).status == "applied"


def test_the_owner_of_a_forged_signups_address_disowns_it_by_replying_not_me(players, outbox, server):
    """A From can be forged: the welcome reaches the address's owner, whose reply
    "not me" takes the password away; the owner then signs up and takes the games."""
    players.send(ALICE, f"greatkingdom challenge alice {VICTIM}")  # board 101, the victim invited
    assert players.send(VICTIM, "signup vic forgedpw").status == "applied"  # forged by mallory
    welcome = outbox.to(VICTIM)[-1]
    assert welcome["Subject"] == "pbm signup"
    assert 'reply to this mail with "not me" on the first line within 7 days' in flat(welcome)
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert players.send(VICTIM, "Re: pbm signup", "thanks!", to=confirmation_reply_to(welcome)).error.startswith(
        "A reply to the welcome mail only disowns an account")
    stranger = players.send(ATTACKER, "Re: pbm signup", "not me", to=confirmation_reply_to(welcome)).error
    assert stranger == ("This confirmation is for another address; only a reply from the address it was sent to "
                        "confirms it.")  # which address, only its own mailbox reads
    assert VICTIM not in stranger
    assert accounts(server)["vic"] == (VICTIM, False)

    assert players.send(VICTIM, "Re: pbm signup", "Not me!\n\nI never signed up.",
                        to=confirmation_reply_to(welcome)).status == "applied"
    assert accounts(server)["vic"] == (VICTIM, True)  # an invited seat again, its board kept
    told = outbox.to(VICTIM)[-1]
    assert told["Subject"] == "pbm: vic disowned" and "no longer has a password" in flat(told)
    refused = players.send(ATTACKER, "greatkingdom move 101 vic forgedpw resign")
    assert refused.status == "rejected"
    assert players.send(VICTIM, "signup victim truepw").status == "applied"
    assert accounts(server)["victim"] == (VICTIM, False) and "vic" not in accounts(server)
    with reading(server.engine) as session:
        board = session.exec(select(Board).where(Board.id == 101)).one()
        assert session.get(Player, board.seat1_id).userid == "victim"
    again = players.send(VICTIM, "Re: pbm signup", "not me", to=confirmation_reply_to(welcome))
    assert again.status == "rejected" and "unknown or has expired" in again.error


def test_a_forger_keeps_nothing_of_a_disowned_account_not_the_address_it_added(players, outbox, server):
    """Before the owner reads the welcome, the forger adds an address of its own (and
    confirms it from there) and keeps the seat's reply tag: "not me" takes the added
    address and makes new reply tags, so neither a show from there nor the old tag
    plays for the seat."""
    players.send(ALICE, f"greatkingdom challenge alice {VICTIM}")  # board 101, the victim invited
    assert players.send(VICTIM, "signup vic forgedpw").status == "applied"  # forged by mallory
    welcome = outbox.to(VICTIM)[-1]
    assert players.send(ATTACKER, f"add vic forgedpw {ATTACKER}").status == "applied"
    ask = outbox.to(ATTACKER)[-1]
    assert players.send(ATTACKER, "Re: confirm", "yes", to=confirmation_reply_to(ask)).status == "applied"
    players.send(ATTACKER, "greatkingdom show 101")
    kept_tag = confirmation_reply_to(outbox.to(ATTACKER)[-1])  # the seat's, mailed to an address of the account

    assert players.send(VICTIM, "Re: pbm signup", "not me", to=confirmation_reply_to(welcome)).status == "applied"
    assert players.send(VICTIM, "signup victim truepw").status == "applied"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    players.send(ATTACKER, "greatkingdom show 101")
    assert outbox.to(ATTACKER)[-1]["Reply-To"] is None  # a stranger's show: no seat's tag
    stale = players.send(ATTACKER, "Re: board", "F6", to=kept_tag)
    assert stale.status == "rejected" and "does not belong to board 101" in stale.error
    assert players.send(VICTIM, "Re: board", "F6", to=confirmation_reply_to(outbox.to(VICTIM)[-1])).status == \
        "applied"  # the owner's new tag plays


def test_not_me_disowns_an_account_its_forger_moved_to_another_address(players, outbox, server):
    """The forger moves the account to its own address (confirmed from there): "not me"
    from the welcome's address still disowns it, back at that address."""
    players.send(ALICE, f"greatkingdom challenge alice {VICTIM}")
    assert players.send(VICTIM, "signup vic forgedpw").status == "applied"  # forged
    welcome = outbox.to(VICTIM)[-1]
    assert players.send(ATTACKER, f"change address vic forgedpw {ATTACKER}").status == "applied"
    ask = outbox.to(ATTACKER)[-1]
    assert players.send(ATTACKER, "Re: confirm", "yes", to=confirmation_reply_to(ask)).status == "applied"
    assert accounts(server)["vic"] == (ATTACKER, False)
    disowned = players.send(VICTIM, "Re: pbm signup", "not me", to=confirmation_reply_to(welcome))
    assert disowned.status == "applied", disowned.error
    assert accounts(server)["vic"] == (VICTIM, True)
    assert players.send(ATTACKER, "greatkingdom move 101 vic forgedpw resign").status == "rejected"
    assert players.send(VICTIM, "signup victim truepw").status == "applied"
    assert accounts(server)["victim"] == (VICTIM, False)


def test_an_invited_address_never_gets_a_reserved_userid(players, server):
    assert players.send("alice@players.test", "go challenge alice error@victim.test").status == "applied"
    assert "error" not in accounts(server)
    assert any(userid.startswith("error-") for userid in accounts(server))


def test_a_mailbox_is_asked_for_confirmation_three_times_a_day_whatever_its_tags(players, outbox, server):
    for n, address in enumerate(["pat+1@players.test", "pat+2@players.test", "pat@players.test",
                                 "pat+3@players.test"]):
        result = players.send("bob@players.test", f"add bob bobpw {address}")
        assert result.status == ("applied" if n < 3 else "rejected"), (address, result.error)
    assert "was asked for confirmation 3 times today already" in result.error


def test_the_dotted_spellings_of_a_gmail_inbox_are_one_mailbox(players, outbox, server):
    """Gmail reads v.ictim@ as victim@, and googlemail.com as gmail.com."""
    for n, address in enumerate(["victim@gmail.com", "v.ictim@gmail.com", "vic.tim+x@googlemail.com",
                                 "vi.ctim@gmail.com", "victor@gmail.com", "victim@mail.com"]):
        result = players.send("bob@players.test", f"add bob bobpw {address}")
        assert result.status == ("rejected" if n == 3 else "applied"), (address, result.error)
    assert len([m for m in outbox.all() if m["To"].addresses[0].username.replace(".", "").startswith("victim")
                and m["To"].addresses[0].domain in ("gmail.com", "googlemail.com")]) == 3


def test_an_account_made_meanwhile_from_the_same_address_is_refused_not_renamed(players, server):
    # On PostgreSQL two signups from one address at once may both find it free; the later
    # one then meets the earlier one's committed account as it makes its own.
    from pbm.service import accounts as service_accounts
    from pbm.service.errors import PlayerError
    from pbm.service.unit import run

    assert players.send("dave@players.test", "signup dave davepw").status == "applied"

    def later_signup(unit):
        service_accounts.make_account(unit, "dave2", "dave@players.test", "a-hash")

    with pytest.raises(PlayerError, match="dave@players.test already belongs to the userid dave."):
        run(server.engine, server.settings, later_signup)
    assert accounts(server)["dave"] == ("dave@players.test", False) and "dave2" not in accounts(server)


def test_an_invited_address_with_accents_keeps_its_letters_in_the_userid(players, server):
    """jürgen@ becomes juergen, josé@ jose: the letters spelled out in ASCII, not dropped (jrgen, jos)."""
    for address in ("jürgen@players.test", "josé@players.test", "straße@players.test"):
        assert players.send("alice@players.test", f"go challenge alice {address}").status == "applied", address
    assert {"juergen", "jose", "strasse"} <= set(accounts(server))


def test_an_invited_player_signs_up_with_the_userid_the_invitation_names(players, outbox, server):
    """The invitation says: send "signup carol <password>" from this address. That
    userid is the invited seat's own, so it is no other's to refuse as taken; from
    any other address it still is."""
    carol = "carol@players.test"
    players.send(ALICE, f"greatkingdom challenge alice {carol}")
    assert 'send "signup carol <password>" from this address' in flat(outbox.to(carol)[-1])
    assert players.send(ATTACKER, "signup carol secret9").status == "rejected"  # taken, for anyone else
    assert players.send(carol, "signup carol carolpw").status == "applied"
    assert accounts(server)["carol"] == (carol, False)
    assert outbox.to(carol)[-1]["Subject"] == "pbm signup"
    assert players.send(carol, "greatkingdom move 101 carol carolpw decline").status == "applied"  # her board
    assert players.send(carol, "signup carol carolpw").status == "rejected"  # once only
