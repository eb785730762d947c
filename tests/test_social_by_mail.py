"""Players among themselves, by mail end to end: watching boards, chat, messages,
vacations, more addresses, signing off, and every game's boards at once."""

from freezegun import freeze_time
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, Player, PlayerAddress
from pbm.scheduler import sweep

from .conftest import body

ALICE, BOB, CAROL, DAVE = "alice@players.test", "bob@players.test", "carol@players.test", "dave@players.test"


def text(message) -> str:
    return " ".join(body(message).split())


def to(message) -> str:
    return message["To"].addresses[0].addr_spec


def sign_up(players, *names):
    for name in names:
        assert players.send(f"{name}@players.test", f"signup {name} {name}pw").status == "applied"


def board(server, board_id=101) -> Board:
    with reading(server.engine) as s:
        return s.get(Board, board_id)


# Watching boards

def test_a_watcher_gets_every_board_mail_without_what_is_the_players_own(players, outbox, client):
    sign_up(players, "carol")
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(CAROL, "greatkingdom subscribe 101 carol carolpw").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom Board 101 subscribed"
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4", "my secret plan")
    mails = outbox.new()
    assert sorted(to(m) for m in mails) == [ALICE, BOB, CAROL]
    watched = next(m for m in mails if to(m) == CAROL)
    assert watched["Subject"] == "Great Kingdom Board 101 bob"
    assert watched["Reply-To"] is None  # no reply tag: nothing to play with
    assert "/play/" not in body(watched)  # no private link
    # The comment reaches the watchers too, and every copy says who reads it.
    assert "alice says (to the two players and the board's watcher):" in body(watched)
    assert "my secret plan" in body(watched)
    to_bob = body(next(m for m in mails if to(m) == BOB))
    assert "alice says (to the two players and the board's watcher):" in to_bob
    assert "(The board's watcher reads your comments too.)" in to_bob
    assert "1. alice        D4" in body(watched)
    assert "You watch this board; to stop:\n    greatkingdom unsubscribe 101 carol <password>\n" in body(watched)
    # The watchers are counted on show and on the web page.
    players.send(DAVE, "greatkingdom show 101")
    assert "Watched by 1." in body(outbox.new()[-1])
    page = client.get("/games/101").get_data(as_text=True)
    assert 'data-watchers="1">Watched by 1</p>' in page
    # Unsubscribed, no more mail.
    assert players.send(CAROL, "greatkingdom unsubscribe 101 carol carolpw").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom Board 101 unsubscribed"
    players.send(BOB, "greatkingdom move 101 bob bobpw F6")
    assert sorted(to(m) for m in outbox.new()) == [ALICE, BOB]
    assert "Watched by" not in client.get("/games/101").get_data(as_text=True)


def test_a_watchers_mail_stops_in_one_click_without_the_password(players, outbox, client):
    """Whoever gets a watcher's mails can stop them (someone else may have signed the
    address up and subscribed it): RFC 8058's headers and a link in the text. Opening
    the link only asks; the page's button, or the mail program's one-click POST, stops
    the board's mails and nothing else (the all-boards subscription stays)."""
    sign_up(players, "carol")
    assert players.send(CAROL, "greatkingdom subscribe carol carolpw all").status == "applied"
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom challenge alice bob")
    outbox.new()
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    watched = next(m for m in outbox.new() if to(m) == CAROL)
    link = watched["List-Unsubscribe"].strip("<>")
    assert link.startswith("http://pbm.test/unsubscribe/") and watched["List-Unsubscribe-Post"] == \
        "List-Unsubscribe=One-Click"
    assert f"or, without the password, open:\n    {link}\n" in body(watched)
    path = link.removeprefix("http://pbm.test")
    asked = client.get(path)
    assert asked.status_code == 200 and "Stop the mails of this board" in asked.get_data(as_text=True)
    assert asked.headers["Cache-Control"] == "private, no-store" and asked.headers["X-Robots-Tag"] == "noindex, nofollow"
    players.send(BOB, "greatkingdom move 101 bob bobpw F6")
    assert CAROL in [to(m) for m in outbox.new()]  # opening the link stopped nothing
    done = client.post(path, data={"List-Unsubscribe": "One-Click"})  # as a mail program posts it
    assert done.status_code == 200 and "You no longer watch this board" in done.get_data(as_text=True)
    assert client.post(path).status_code == 200  # again: done is done
    players.send(ALICE, "greatkingdom move 101 alice alicepw C3")
    assert sorted(to(m) for m in outbox.new()) == [ALICE, BOB]
    players.send(ALICE, "greatkingdom move 102 alice alicepw D4")
    assert CAROL in [to(m) for m in outbox.new()]  # the other board still comes
    # A link the server did not sign stops nothing.
    forged = path[:-1] + ("0" if path[-1] != "0" else "1")
    assert client.post(forged).status_code == 404 and client.get(forged).status_code == 404
    other_board = path.replace("-101-", "-102-")
    assert client.post(other_board).status_code == 404
    players.send(BOB, "greatkingdom move 102 bob bobpw C3")
    assert CAROL in [to(m) for m in outbox.new()]


def test_reminders_stay_the_players_own(server, players, outbox):
    sign_up(players, "carol")
    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "greatkingdom challenge alice bob")
        players.send(CAROL, "greatkingdom subscribe 101 carol carolpw")
    outbox.new()
    with freeze_time("2026-11-05 12:01:00"):
        assert sweep(server)["reminders"] == 1
    assert [to(m) for m in outbox.new()] == [ALICE]


def test_subscribe_all_watches_every_board_begun_from_then_on(players, outbox):
    sign_up(players, "carol")
    players.send(ALICE, "greatkingdom challenge alice bob")  # 101: before the subscription
    assert players.send(CAROL, "greatkingdom subscribe carol carolpw all").status == "applied"
    assert "now watches every new Great Kingdom board" in text(outbox.new()[-1])
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    assert CAROL not in [to(m) for m in outbox.new()]
    players.send(ALICE, "go challenge alice bob")  # 102: another game
    assert CAROL not in [to(m) for m in outbox.new()]
    players.send(BOB, "greatkingdom challenge bob alice")  # 103
    new = [m for m in outbox.new() if to(m) == CAROL]
    assert len(new) == 1 and "New game of Great Kingdom on board 103, started by bob." in text(new[0])
    # One board of it can be left out; the others stay watched.
    players.send(BOB, "greatkingdom challenge bob alice")  # 104
    assert players.send(CAROL, "greatkingdom unsubscribe 103 carol carolpw").status == "applied"
    outbox.new()
    players.send(BOB, "greatkingdom move 103 bob bobpw D4")
    players.send(BOB, "greatkingdom move 104 bob bobpw D4")
    assert [m["Subject"] for m in outbox.new() if to(m) == CAROL] == ["Great Kingdom Board 104 alice"]
    assert players.send(CAROL, "greatkingdom unsubscribe carol carolpw all").status == "applied"
    assert "carol no longer watches every new Great Kingdom board" in text(outbox.new()[-1])
    players.send(BOB, "greatkingdom challenge bob alice")  # 105
    players.send(ALICE, "greatkingdom move 104 alice alicepw F6")
    assert CAROL not in [to(m) for m in outbox.new()]


def test_what_cannot_be_watched_gets_a_sentence(players, outbox):
    sign_up(players, "carol")
    players.send(ALICE, "greatkingdom challenge alice bob")
    for line, sentence in [
        ("greatkingdom subscribe 101 bob bobpw", "bob plays on board 101; its mails come anyway."),
        ("greatkingdom subscribe 101 carol wrong", "The password for carol is wrong."),
        ("greatkingdom subscribe 999 carol carolpw", "There is no board 999."),
        ("go subscribe 101 carol carolpw", "Board 101 is a Great Kingdom board, not Go."),
        ("greatkingdom unsubscribe 101 carol carolpw", "carol does not watch board 101."),
        ("greatkingdom unsubscribe carol carolpw all", "carol does not watch every new Great Kingdom board."),
    ]:
        assert players.send(CAROL, line).status == "rejected", line
        assert sentence in text(outbox.new()[-1]), line
    players.send(ALICE, "greatkingdom resign 101 alice alicepw")
    assert players.send(CAROL, "greatkingdom subscribe 101 carol carolpw").status == "rejected"
    assert "Board 101 is over; there is nothing more to watch." in text(outbox.new()[-1])


# Chat

def test_chat_goes_to_the_players_and_watchers_and_into_the_record(players, outbox):
    sign_up(players, "carol", "dave")
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    players.send(CAROL, "greatkingdom subscribe 101 carol carolpw")
    outbox.new()
    assert players.send(CAROL, "greatkingdom chat 101 carol carolpw", "Nice opening!\n").status == "applied"
    chats = outbox.new()
    assert sorted(to(m) for m in chats) == [ALICE, BOB, CAROL]
    for mail in chats:
        assert mail["Subject"] == "Great Kingdom Board 101 chat from carol"
        assert "carol writes about board 101 (alice vs bob):\n\n> Nice opening!" in body(mail)
        assert mail["Reply-To"] is None
    # The players read it in the history; others learn only that there was one.
    players.send(BOB, "greatkingdom history 101")
    assert "   1. alice        D4\n        * carol (chat):\n        | Nice opening!" in body(outbox.new()[-1])
    players.send(DAVE, "greatkingdom history 101")
    history = body(outbox.new()[-1])
    assert "* carol (a chat for the players and watchers)" in history and "Nice opening" not in history


def test_only_players_and_watchers_chat_and_a_chat_is_bounded(players, outbox):
    sign_up(players, "dave")
    players.send(ALICE, "greatkingdom challenge alice bob")
    for line, words, sentence in [
        ("greatkingdom chat 101 dave davepw", "hello", "Only the players and the watchers of board 101 may chat"),
        ("greatkingdom chat 101 alice alicepw", "", "The chat is empty: write it in the body of the mail."),
        ("greatkingdom chat 101 alice alicepw", "x" * 2001, "The chat is 2,001 characters long; at most 2,000"),
    ]:
        assert players.send(ALICE if "alice" in line else DAVE, line, words).status == "rejected"
        assert sentence in text(outbox.new()[-1])


def test_a_sender_over_the_hourly_limit_passes_no_words_on(server, players, outbox):
    from dataclasses import replace

    server.settings = replace(server.settings, answers_per_hour=40)  # (the setting, lowered: reached soon)
    players.send(ALICE, "greatkingdom challenge alice bob")
    for _ in range(39):  # with the challenge and the signup: 41 mails from alice this hour
        players.send(ALICE, "help")
    outbox.new()
    result = players.send(ALICE, "greatkingdom chat 101 alice alicepw", "hello")
    assert result.status == "rejected"
    assert result.error == "You sent more than 40 mails in the last hour; try again later."
    assert outbox.new() == []  # not even the error mail: the limit is what stops loops


# Messages

def test_a_message_reaches_players_without_showing_their_addresses(players, outbox):
    sign_up(players, "carol")
    outbox.new()
    result = players.send(ALICE, "message alice alicepw bob carol nobody", "Tournament on Sunday?\n")
    assert result.status == "applied"
    mails = outbox.new()
    received = [m for m in mails if m["Subject"] == "pbm message from alice"]
    assert sorted(to(m) for m in received) == [BOB, CAROL]
    for mail in received:
        assert mail["From"].addresses[0].addr_spec == "pbm@pbm.test" and mail["Reply-To"] is None
        assert "alice sends you this message through pbm:\n\n> Tournament on Sunday?" in body(mail)
        assert ALICE not in str(mail)
    sent = next(m for m in mails if to(m) == ALICE)
    assert sent["Subject"] == "pbm message sent"
    assert "Your message went to bob, carol." in text(sent) and "There is no player called nobody." in text(sent)
    assert BOB not in str(sent) and CAROL not in str(sent)


def test_a_message_goes_to_at_most_ten_players(players, outbox):
    many = " ".join(f"p{i}" for i in range(11))
    assert players.send(ALICE, f"message alice alicepw {many}", "hi").status == "rejected"
    assert "A message may go to at most 10 players; this one names 11." in text(outbox.new()[-1])
    assert players.send(ALICE, "message alice alicepw nobody", "hi").status == "rejected"
    assert "There is no player called nobody. Nobody got the message." in text(outbox.new()[-1])
    assert players.send(ALICE, "message alice alicepw computer", "hi").status == "rejected"
    assert "computer is the server's own player and reads no messages. Nobody got the message." in \
        text(outbox.new()[-1])


# Vacation

def board_101_for_alice_to_move(players):
    """Board 101 begun on 11-01, a move each on 11-02 and 11-03: alice to move, due
    11-07 12:00, expiring 11-10 12:00."""
    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "greatkingdom challenge alice bob")
    with freeze_time("2026-11-02 12:00:00"):
        players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    with freeze_time("2026-11-03 12:00:00"):
        players.send(BOB, "greatkingdom move 101 bob bobpw F6")


def test_a_vacation_holds_reminders_and_expiry_and_moves_the_deadlines_on(server, players, outbox):
    board_101_for_alice_to_move(players)
    outbox.new()
    with freeze_time("2026-11-04 12:00:00"):
        assert players.send(ALICE, "vacation alice alicepw 10").status == "applied"
    begins = {to(m): m for m in outbox.new()}
    assert begins[ALICE]["Subject"] == "pbm vacation begins"
    assert "alice is on vacation until 2026-11-14 12:00 UTC (10 days)." in text(begins[ALICE])
    assert "Vacation days left: 20 (of 30 in any 365 days)." in text(begins[ALICE])
    assert begins[BOB]["Subject"] == "pbm: alice is on vacation"
    assert "Your board with alice (101) waits: no reminders and no expiry" in text(begins[BOB])
    with freeze_time("2026-11-07 12:01:00"):
        assert sweep(server)["reminders"] == 0
    with freeze_time("2026-11-10 12:01:00"):
        assert sweep(server)["expired"] == 0
    assert outbox.new() == []
    with freeze_time("2026-11-14 12:01:00"):  # the days have run out: the scheduler ends it
        assert sweep(server) == {"reminders": 0, "expired": 0, "computer": 0, "delivered": 0}
    ends = {to(m): m for m in outbox.new()}
    assert ends[ALICE]["Subject"] == "pbm vacation ended"
    assert "moved on by 10 days" in text(ends[ALICE]) and "Vacation days left: 20" in text(ends[ALICE])
    assert ends[BOB]["Subject"] == "pbm: alice is back"
    b = board(server)
    assert (b.nag_due_at.isoformat(), b.expire_due_at.isoformat()) == \
        ("2026-11-17T12:00:00+00:00", "2026-11-20T12:00:00+00:00")
    with freeze_time("2026-11-17 12:01:00"):
        assert sweep(server)["reminders"] == 1
    assert "If no move arrives by 2026-11-20 12:00 UTC" in text(outbox.new()[-1])


def test_two_vacations_at_once_move_the_deadlines_by_the_time_held_once(server, players, outbox):
    """alice away 11-04 to 11-14, bob 11-06 to 11-16: the board waited 12 days, not 10 + 10."""
    board_101_for_alice_to_move(players)
    with freeze_time("2026-11-04 12:00:00"):
        assert players.send(ALICE, "vacation alice alicepw 10").status == "applied"
    with freeze_time("2026-11-06 12:00:00"):
        assert players.send(BOB, "vacation bob bobpw 10").status == "applied"
    outbox.new()
    with freeze_time("2026-11-14 12:01:00"):
        sweep(server)  # alice's days have run out; bob is still away
    ends = {to(m): text(m) for m in outbox.new()}
    assert "Board 101 waits on: its other player is on vacation too, and its deadlines move on when they are " \
        "back." in ends[ALICE]
    assert "alice is back from vacation after 10 days. You are on vacation still: your boards with alice (101) " \
        "wait for you, and their deadlines move on when you are back." in ends[BOB]
    with freeze_time("2026-11-16 12:01:00"):
        sweep(server)  # bob's too
    b = board(server)
    assert (b.nag_due_at.isoformat(), b.expire_due_at.isoformat()) == \
        ("2026-11-19T12:00:00+00:00", "2026-11-22T12:00:00+00:00")


def test_a_vacation_begun_after_a_deadline_passed_holds_no_board_past_it(server, players, outbox):
    """The scheduler was late: alice's board expired at 11-10 12:00, her vacation came at
    13:00, before the sweep. The vacation holds her other boards, not that one: it
    expires as it would have (bob would otherwise wait up to 30 more days)."""
    board_101_for_alice_to_move(players)
    with freeze_time("2026-11-08 12:00:00"):
        players.send(BOB, "greatkingdom challenge bob alice")  # 102, bob to move: expires 11-15
    outbox.new()
    with freeze_time("2026-11-10 13:00:00"):
        assert players.send(ALICE, "vacation alice alicepw 10").status == "applied"
    told = {to(m): text(m) for m in outbox.new()}
    assert "Board 101 is past its deadline already: the vacation does not hold it." in told[ALICE]
    assert "Your board with alice (102) waits" in told[BOB] and "101" not in told[BOB]
    with freeze_time("2026-11-10 13:01:00"):
        assert sweep(server)["expired"] == 1
    assert (board(server, 101).status, board(server, 102).status) == ("finished", "active")
    with freeze_time("2026-11-20 13:01:00"):
        sweep(server)  # the vacation ends: 102 moves on by its 10 days
    assert board(server, 102).expire_due_at.isoformat() == "2026-11-25T12:00:00+00:00"


def test_vacation_off_counts_the_days_begun_and_thirty_days_a_year_at_most(server, players, outbox):
    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "greatkingdom challenge alice bob")  # due 11-05, expires 11-08
        assert players.send(ALICE, "vacation alice alicepw 31").status == "rejected"
        assert "alice has 30 of 30 vacation days left" in text(outbox.new()[-1])
        taken = players.send(ALICE, "vacation alice alicepw 20")
        assert (taken.status, taken.board) == ("applied", None)  # about the player, not one of its boards
        assert players.send(ALICE, "vacation alice alicepw 5").status == "rejected"
        assert "alice is on vacation until 2026-11-21 12:00 UTC already" in text(outbox.new()[-1])
    outbox.new()
    with freeze_time("2026-11-03 10:00:00"):  # 1 day 22 hours: 2 days taken
        back = players.send(ALICE, "vacation alice alicepw off")
        assert (back.status, back.board) == ("applied", None)
    ends = {to(m): m for m in outbox.new()}
    assert "Vacation days left: 28" in text(ends[ALICE])
    assert "The deadlines of your board with alice (101) moved on by 2 days." in text(ends[BOB])
    assert board(server).expire_due_at.isoformat() == "2026-11-10T12:00:00+00:00"
    with freeze_time("2026-11-04 12:00:00"):
        assert players.send(ALICE, "vacation alice alicepw off").status == "rejected"
        assert "alice is not on vacation." in text(outbox.new()[-1])
        assert players.send(ALICE, "vacation alice alicepw 28").status == "applied"
        assert "Vacation days left: 0" in text(outbox.to(ALICE)[-1])
    with freeze_time("2027-11-04 11:00:00"):  # a rolling year: the 2 days of 2026-11-01 count no more
        assert players.send(ALICE, "vacation alice alicepw 3").status == "rejected"
        assert "alice has 2 of 30 vacation days left" in text(outbox.to(ALICE)[-1])
    with freeze_time("2027-11-04 12:01:00"):  # nor the 28 of 2026-11-04
        assert players.send(ALICE, "vacation alice alicepw 3").status == "applied"
    mails = {m["Subject"]: m for m in outbox.new() if to(m) == ALICE}  # overdue, it ends first
    assert "ended after 28 days" in text(mails["pbm vacation ended"])
    assert "Vacation days left: 27" in text(mails["pbm vacation begins"])


# Another address

def test_an_added_address_counts_as_the_players_once_confirmed(players, outbox, server):
    WORK = "alice@work.test"
    assert players.send(ALICE, f"add alice alicepw {WORK}").status == "applied"
    ask = outbox.to(WORK)[-1]
    assert "add this address to the pbm account alice" in text(ask)
    assert players.send(WORK, "greatkingdom challenge alice bob").status == "rejected"  # not yet
    assert players.send(WORK, "Re: confirm", "yes", to=ask["Reply-To"].addresses[0].addr_spec).status == "applied"
    assert {to(m) for m in outbox.new()[-2:]} == {ALICE, WORK}
    # Commands and board-mail replies from it are alice's; board mails still go to her first address.
    assert players.send(WORK, "greatkingdom challenge alice bob").status == "applied"
    board_mail = outbox.to(ALICE)[-1]
    assert board_mail["Subject"] == "Great Kingdom Board 101 alice"
    assert not any("Board" in m["Subject"] for m in outbox.to(WORK))
    tag = board_mail["Reply-To"].addresses[0].addr_spec
    assert players.send(WORK, "Re: board", "D4\n", to=tag).status == "applied"
    assert "1. alice        D4" in body(outbox.to(BOB)[-1])
    # An address of another account cannot be added; bob is answered as for a free
    # address (nobody learns whose it is), and only the address itself hears why.
    outbox.new()
    assert players.send(BOB, f"add bob bobpw {WORK}").status == "applied"
    sent, ask = sorted(outbox.new(), key=lambda m: to(m) != BOB)
    assert to(sent) == BOB and "alice" not in text(sent).replace(WORK, "") and f"A mail went to {WORK}" in text(sent)
    assert to(ask) == WORK
    confirmed = players.send(WORK, "Re: confirm", "yes", to=ask["Reply-To"].addresses[0].addr_spec)
    assert confirmed.status == "rejected" and f"{WORK} already belongs to the userid alice." in confirmed.error
    assert [to(m) for m in outbox.new()] == [WORK]
    with reading(server.engine) as session:  # still alice's, not bob's
        assert session.exec(select(Player.userid).join(PlayerAddress, PlayerAddress.player_id == Player.id)
                            .where(PlayerAddress.email == WORK)).all() == ["alice"]


# Signing off

def test_signoff_resigns_running_boards_and_closes_the_account(server, players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(BOB, "go challenge bob alice")
    players.send(ALICE, "greatkingdom resign 101 alice alicepw")  # over already: stays as it is
    outbox.new()
    assert players.send(ALICE, "signo alice alicepw").status == "rejected"  # in full, or nothing
    assert "\"signo\" would be signoff, which is written in full: it cannot be taken back." in text(outbox.new()[-1])
    assert players.send(ALICE, "signoff alice alicepw").status == "applied"
    mails = outbox.new()
    final = next(m for m in mails if to(m) == BOB)
    assert final["Subject"] == "Go Board 102 game over" and "White resigned" in text(final)
    closed = next(m for m in mails if m["Subject"] == "pbm account alice closed")
    assert to(closed) == ALICE and "Resigned on your running boards: 102." in text(closed)
    assert players.send(ALICE, "change password alice alicepw other1").status == "rejected"
    assert "The account alice was closed (signoff)" in text(outbox.new()[-1])
    assert players.send("someone@else.test", "signup alice secret1").status == "rejected"  # userid kept
    assert players.send(BOB, "go challenge bob alice").status == "rejected"
    assert "alice has signed off and plays no more." in text(outbox.new()[-1])
    assert players.send(ALICE, "signup alice2 secret1").status == "applied"  # the address is free
    players.send(BOB, "greatkingdom history 101")
    assert "Great Kingdom Board 101: alice (Blue) vs bob (Orange)" in body(outbox.new()[-1])
    with reading(server.engine) as s:
        alice = s.exec(select(Player).where(Player.userid == "alice")).one()
        assert alice.email is None and alice.password_hash is None and alice.closed_at is not None


def test_a_reply_to_a_signed_off_players_board_mail_says_they_signed_off(server, players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    tag = outbox.to(ALICE)[-1]["Reply-To"].addresses[0].addr_spec
    assert players.send(ALICE, "signoff alice alicepw").status == "applied"
    before = board(server).move_count
    late = players.send(ALICE, "Re: board", "D4", to=tag)  # from the address that was alice's
    assert late.status == "rejected"
    assert late.error == ("alice has signed off, so board 101 is finished and this reply address is not used "
                          "any more.")
    assert board(server).move_count == before


def test_a_signed_off_players_boards_offer_no_new_round(server, players, outbox, client):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(BOB, "go challenge bob alice")
    players.send(ALICE, "greatkingdom resign 101 alice alicepw")
    over = outbox.to(BOB)[-1]
    assert 'For a new round with the same sides and options, reply "newround".' in text(over)  # still open
    assert 'data-action="newround"' in client.get(f"/play/{board(server).token1}").get_data(as_text=True)
    assert players.send(ALICE, "signoff alice alicepw").status == "applied"
    final = outbox.to(BOB)[-1]  # board 102, resigned by the signoff
    assert final["Subject"] == "Go Board 102 game over"
    assert "newround" not in text(final)
    assert "alice has signed off, so this board gets no new round." in text(final)

    refused = players.send(BOB, "greatkingdom move 101 bob bobpw newround")
    assert refused.status == "rejected"
    sentence = "alice has signed off, so board 101 gets no new round; challenge someone else to a new game."
    assert refused.error == sentence and sentence in text(outbox.to(BOB)[-1])
    tag = final["Reply-To"].addresses[0].addr_spec
    assert players.send(BOB, "Re: Go Board 102 game over", "newround\n", to=tag).status == "rejected"
    assert "alice has signed off, so board 102 gets no new round" in text(outbox.to(BOB)[-1])
    players.send(BOB, "greatkingdom show 101")
    shown = text(outbox.to(BOB)[-1])
    assert "newround" not in shown and "alice has signed off, so this board gets no new round." in shown
    for page in (client.get(f"/play/{board(server).token1}"), client.get("/games/101")):
        html = page.get_data(as_text=True)
        assert 'data-action="newround"' not in html
        assert "alice has signed off, so this board gets no new round." in html
    with reading(server.engine) as session:
        assert session.get(Board, 101).newround_votes == 0 and session.get(Board, 102).next_board_id is None


# Every game's boards

def test_all_show_lists_the_boards_of_every_game(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(BOB, "go challenge bob alice")
    players.send(ALICE, "dragons challenge alice bob")
    players.send(ALICE, "dragons resign 103 alice alicepw")
    assert players.send(BOB, "all show alice next").status == "applied"
    listing = body(outbox.new()[-1])
    assert "All boards of alice (to move):" in listing
    assert "  101  greatkingdom" in listing and "  102" not in listing and "  103" not in listing
    players.send(BOB, "all show alice active")
    listing = body(outbox.new()[-1])
    assert "  101  greatkingdom" in listing and "  102  go" in listing and "  103" not in listing
    players.send(BOB, "all show alice")
    assert "  103  dragons" in body(outbox.new()[-1])
    refused = players.send(BOB, "all show alicia")
    assert refused.error == "There is no player called alicia."
    assert "all show <userid> [next | active]" in body(outbox.new()[-1])  # what to send instead


def test_the_pages_show_chats_to_the_players_and_who_is_away(server, players, outbox, client):
    from html import unescape

    from pbm.models import Vacation

    sign_up(players, "carol")
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    players.send(CAROL, "greatkingdom subscribe 101 carol carolpw")
    players.send(CAROL, "greatkingdom chat 101 carol carolpw", "Nice opening!\n")
    assert players.send(BOB, "vacation bob bobpw 10").status == "applied"
    with reading(server.engine) as session:
        until = session.exec(select(Vacation.until)).one().strftime("%Y-%m-%d")
    play = unescape(client.get(f"/play/{board(server).token0}").get_data(as_text=True))
    assert "<strong>carol</strong> (after move 1): Nice opening!" in play
    public = unescape(client.get("/games/101").get_data(as_text=True))
    assert 'data-chats="1">1 chat, for the players and the watchers.' in public and "Nice opening" not in public
    for page in (play, public):
        assert f"bob is on vacation until {until}: no reminders and no expiry until then." in page
    assert players.send(BOB, "vacation bob bobpw off").status == "applied"
    assert "on vacation" not in client.get("/games/101").get_data(as_text=True)


def test_a_players_message_id_reaches_only_the_answer_to_that_player(players, outbox):
    """A Message-ID names the sender's host: mails to others do not refer to it."""
    from .conftest import make_mail

    players.send(ALICE, "greatkingdom challenge alice bob")
    private = "<x1.alice@alice-private-host.example>"
    players.server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id=private))
    players.server.handle_raw(make_mail(ALICE, "message alice alicepw bob", "hello", message_id="<x2.alice@alice-private-host.example>"))
    to_bob = outbox.to(BOB)[-2:]
    assert to_bob and all("alice-private-host" not in str(m) for m in to_bob)
    assert any(m["In-Reply-To"] == private for m in outbox.to(ALICE))  # alice's own answer threads on her mail


def test_while_a_player_is_away_the_pages_name_no_deadline_that_will_not_hold(server, players, client):
    """alice's board would expire 2026-11-10; she is away until 11-14, so it cannot, and
    the deadline moves on when she is back: neither the status page nor the board page
    may still say it expires on the 10th."""
    from html import unescape

    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "greatkingdom challenge alice bob")
        players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
        players.send(BOB, "greatkingdom move 101 bob bobpw F6")  # alice to move: expires 11-08
    with freeze_time("2026-11-04 12:00:00"):
        assert players.send(ALICE, "vacation alice alicepw 10").status == "applied"
        status = unescape(client.get("/").get_data(as_text=True))
        public = unescape(client.get("/games/101").get_data(as_text=True))
        play = unescape(client.get(f"/play/{board(server).token1}").get_data(as_text=True))
    assert "2026-11-08 12:00" not in status
    assert '<td data-label="Deadline">the deadline waits while alice is on vacation</td>' in status
    for page in public, play:
        assert "2026-11-08 12:00" not in page
        assert "the deadline waits while alice is on vacation." in " ".join(page.split())
    with freeze_time("2026-11-06 12:00:00"):
        assert players.send(ALICE, "vacation alice alicepw off").status == "applied"  # 2 days: 11-10
        assert '<td data-label="Deadline">2026-11-10 12:00 UTC</td>' in client.get("/").get_data(as_text=True)
        assert "expires 2026-11-10 12:00 UTC without a move" in \
            " ".join(client.get("/games/101").get_data(as_text=True).split())
