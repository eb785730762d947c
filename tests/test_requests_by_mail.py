"""Requests between players and moves kept for later, by mail end to end: undo
(take back), draw offers, answers by command and by reply, the pending line on
mails and pages, queued moves, and submit / confirm."""

import re
from datetime import timedelta

from sqlmodel import select

from pbm.db import reading
from pbm.games import get_game
from pbm.models import Board, MoveRecord
from pbm.service.boards import stored

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"


def text(message) -> str:
    return " ".join(body(message).split())


def board_of(server, board_id: int = 101) -> Board:
    with reading(server.engine) as session:
        return session.get(Board, board_id)


def log_of(server, board_id: int = 101) -> list[tuple[str, int | None, str]]:
    with reading(server.engine) as session:
        return [(r.kind, r.seat, r.text) for r in session.exec(
            select(MoveRecord).where(MoveRecord.board_id == board_id).order_by(MoveRecord.number)).all()]


def reply(players, outbox, sender: str, line: str, comment: str = ""):
    """Answer the latest board mail to ``sender`` with ``line`` first (no password)."""
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    return players.send(sender, "Re: " + str(last["Subject"]), f"{line}\n{comment}",
                        to=last["Reply-To"].addresses[0].addr_spec)


def move(players, sender: str, line: str, game: str = "go", board: int = 101):
    userid = "alice" if sender == ALICE else "bob"
    result = players.send(sender, f"{game} move {board} {userid} {userid}pw {line}")
    assert result.status == "applied", result.error
    return result


def state_after(game_name: str, options: dict, moves: list[str]) -> dict:
    """The stored state after ``moves`` played from the start, seats alternating."""
    game = get_game(game_name)
    state = game.initial_state(options)
    for number, text_ in enumerate(moves):
        state = game.apply(state, number % 2, game.parse_move(text_, state))
    return stored(game, state)


# -- undo -------------------------------------------------------------------

def test_an_accepted_undo_on_go_gives_a_captured_stone_back(players, outbox, server, client):
    players.send(ALICE, "go challenge alice bob -size=9")
    before_capture = ["D5", "E5", "F5", "A1", "E6", "A2"]
    for number, point in enumerate(before_capture):
        move(players, ALICE if number % 2 == 0 else BOB, point)
    move(players, ALICE, "E4")  # Black takes the white stone on E5
    assert board_of(server).state != state_after("go", board_of(server).options, before_capture)

    assert reply(players, outbox, ALICE, "undo", "sorry, wrong point").status == "applied"
    asked = outbox.to(BOB)[-1]
    assert "alice asks to take back move 7; bob may accept or reject." in text(asked)
    assert 'To answer the request, reply "accept" or "reject" on the first line' in text(asked)
    assert "alice says (to the two players only):\n> sorry, wrong point" in body(asked)
    assert "To answer the request" not in text(outbox.to(ALICE)[-1])  # the asker does not answer it

    assert reply(players, outbox, BOB, "accept").status == "applied"
    for mail in outbox.to(ALICE)[-1], outbox.to(BOB)[-1]:
        assert "bob accepted alice's request to take back move 7: move 7 is taken back." in text(mail)
        assert "It is alice's turn." in text(mail)
        assert "asks to take back" not in text(mail)
        assert "   7. alice        E4 (captures 1) (taken back)" in body(mail)  # what it did, then undone
        assert "   8. bob          undo accepted (move 7 taken back)" in body(mail)
    # The white stone is back, the capture forgotten: the position after move 6.
    board = board_of(server)
    assert board.state == state_after("go", board.options, before_capture)
    assert board.to_move == 0 and board.move_count == 8
    assert log_of(server)[6:] == [("move", 0, "E4"), ("undo", 1, "undo 7")]
    assert server.rebuild() == []
    # Play goes on from there.
    move(players, ALICE, "J9")
    assert board_of(server).state == state_after("go", board.options, [*before_capture, "J9"])
    record = client.get("/games/101.sgf").get_data(as_text=True)  # the game record leaves E4 out
    assert len(re.findall(r";\s*[BW]\[", record)) == 7 and "B[ef]" not in record


def test_an_undo_after_the_opponent_moved_takes_back_both_moves(players, outbox, server, client):
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    move(players, BOB, "F6", "greatkingdom")
    move(players, ALICE, "C3", "greatkingdom")
    move(players, BOB, "pass", "greatkingdom")
    move(players, ALICE, "undo", "greatkingdom")  # alice's last move is C3, and bob passed since
    assert "alice asks to take back move 3; bob may accept or reject." in text(outbox.to(BOB)[-1])
    assert players.send(BOB, "greatkingdom move 101 bob bobpw accept").status == "applied"
    assert "bob accepted alice's request to take back move 3: moves 3 to 4 are taken back." in \
        text(outbox.to(ALICE)[-1])
    board = board_of(server)
    assert board.state == state_after("greatkingdom", board.options, ["D4", "F6"])
    assert board.to_move == 0
    players.send(BOB, "greatkingdom history 101")
    history = body(outbox.new()[-1])
    assert "   3. alice        C3 (taken back)\n   4. bob          pass (taken back)\n" \
           "   5. bob          undo accepted (moves 3-4 taken back)" in history
    assert server.rebuild() == []
    moves = client.get("/games/101.json").json["moves"]
    assert [(m["move"], m["taken_back"]) for m in moves] == [
        ("D4", False), ("F6", False), ("C3", True), ("pass", True), ("undo 3", False)]
    # A second undo by alice takes back her first move (the undone ones stay undone).
    move(players, ALICE, "undo", "greatkingdom")
    assert "alice asks to take back move 1;" in text(outbox.to(BOB)[-1])
    reply(players, outbox, BOB, "accept")
    assert board_of(server).state == state_after("greatkingdom", board.options, [])
    assert server.rebuild() == []


def test_a_rejected_undo_changes_nothing(players, outbox, server):
    players.send(ALICE, "twotigers challenge alice bob")
    first = next(get_game("twotigers").format_move(m) for m in get_game("twotigers").legal_moves(
        get_game("twotigers").from_json(board_of(server).state)))
    move(players, ALICE, first, "twotigers")
    state = board_of(server).state
    reply(players, outbox, ALICE, "undo")
    # (a move on the line after the answer is part of the comment, not a move)
    assert reply(players, outbox, BOB, "reject", "c4-c5\nno takebacks").status == "applied"
    for mail in outbox.to(ALICE)[-1], outbox.to(BOB)[-1]:
        assert "bob rejected alice's request to take back move 1." in text(mail)
        assert "may accept or reject" not in text(mail)
    assert "bob says (to the two players only):\n> c4-c5\n> no takebacks" in body(outbox.to(ALICE)[-1])
    board = board_of(server)
    assert board.state == state and board.move_count == 1 and board.request_kind is None
    assert reply(players, outbox, BOB, "accept").status == "rejected"
    assert "There is no open request on board 101 to accept" in text(outbox.to(BOB)[-1])


def test_nothing_to_take_back_before_a_move_of_ones_own(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    assert players.send(BOB, "greatkingdom move 101 bob bobpw undo").status == "rejected"
    error = outbox.to(BOB)[-1]
    assert error["Subject"] == "Great Kingdom Board 101 Error"
    assert "You have made no move on board 101 that could be taken back." in text(error)


# -- draw offers --------------------------------------------------------------

def test_an_accepted_draw_offer_ends_the_game_drawn(players, outbox, server):
    players.send(ALICE, "twodragons challenge alice bob -size=9")
    move(players, ALICE, "E5", "twodragons")
    assert reply(players, outbox, BOB, "propose", "a draw?").status == "applied"
    offer = outbox.to(ALICE)[-1]
    assert "bob offers a draw; alice may accept or reject." in text(offer)
    assert "bob says (to the two players only):\n> a draw?" in body(offer)
    assert reply(players, outbox, ALICE, "accept").status == "applied"
    for mail in outbox.to(ALICE)[-1], outbox.to(BOB)[-1]:
        assert mail["Subject"] == "2 Dragons Board 101 game over"
        assert "alice accepted bob's offer of a draw." in text(mail)
        assert "Game drawn: the players agreed." in text(mail)
        assert "   2. alice        draw agreed" in body(mail)
    board = board_of(server)
    assert board.status == "finished"
    assert board.outcome == {"winner": None, "reason": "the players agreed", "score": None, "kind": "agreement"}
    assert log_of(server)[-1] == ("draw", 0, "draw")
    assert server.rebuild() == []


def test_a_draw_offer_still_open_at_expiry_is_accepted(players, outbox, server):
    players.send(ALICE, "dragons challenge alice bob -num_tiles=12")
    game = get_game("dragons")
    for sender in ALICE, BOB:
        state = game.from_json(board_of(server).state)
        move(players, sender, game.format_move(game.legal_moves(state)[0]), "dragons")
    move(players, BOB, "propose", "dragons")
    outbox.new()
    after_expiry = board_of(server).expire_due_at + timedelta(seconds=1)
    assert server.expire_boards(now=after_expiry) == 1
    mails = outbox.new()
    assert sorted(m["To"].addresses[0].addr_spec for m in mails) == [ALICE, BOB]
    for mail in mails:
        assert "Board 101 has expired" in text(mail)
        assert "Game drawn: a draw offer was still open at expiry." in text(mail)
        assert "   3. server       draw (the offer was open at expiry)" in body(mail)
    board = board_of(server)
    assert board.outcome["kind"] == "agreement" and board.outcome["winner"] is None
    assert log_of(server)[-1] == ("draw", None, "draw")
    assert server.rebuild() == []


def test_the_reminder_with_a_draw_offer_open_says_the_game_will_be_drawn(players, outbox, server):
    """At expiry an open draw offer is accepted, so the reminder before it must not
    threaten a forfeit."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    move(players, BOB, "F6", "greatkingdom")
    move(players, ALICE, "propose", "greatkingdom")
    players.send("carol@players.test", "signup carol carolpw")
    players.send("carol@players.test", "greatkingdom subscribe 101 carol carolpw")
    outbox.new()
    assert server.send_reminders(now=board_of(server).nag_due_at + timedelta(seconds=1)) == 1
    reminders = outbox.new()  # both can act on it (a move withdraws it, an answer settles it); not watchers
    assert sorted(m["To"].addresses[0].addr_spec for m in reminders) == [ALICE, BOB]
    for reminder in reminders:
        assert reminder["Subject"] == "Great Kingdom Board 101 reminder"
        assert ("Reminder: alice's offer of a draw on board 101 is open. If no move or answer arrives by "
                in text(reminder))
        assert "the offer is accepted and the game ends in a draw." in text(reminder)
        assert "forfeit" not in text(reminder)


# -- one request at a time, and moves end it ---------------------------------------

def test_one_request_per_board_and_a_move_withdraws_or_declines_it(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    move(players, ALICE, "propose", "greatkingdom")
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw propose").status == "rejected"
    assert ("Board 101 already has an open request (alice's offer of a draw); only one may be open at a time"
            in text(outbox.to(ALICE)[-1]))
    assert players.send(BOB, "greatkingdom move 101 bob bobpw propose").status == "rejected"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw accept").status == "rejected"
    assert "You made alice's offer of a draw on board 101 yourself; bob answers it" in text(outbox.to(ALICE)[-1])
    # bob plays on instead of answering: the offer is declined.
    move(players, BOB, "F6", "greatkingdom")
    assert "bob moved instead of answering, which declines alice's offer of a draw." in text(outbox.to(ALICE)[-1])
    assert board_of(server).request_kind is None
    move(players, ALICE, "C3", "greatkingdom")
    move(players, BOB, "pass", "greatkingdom")
    move(players, BOB, "undo", "greatkingdom")  # asked while it is alice's turn
    assert players.send(BOB, "greatkingdom move 101 bob bobpw G6").status == "rejected"  # not bob's turn
    move(players, ALICE, "B2", "greatkingdom")
    assert "alice moved instead of answering, which declines bob's request to take back move 4." in \
        text(outbox.to(BOB)[-1])
    # A move by the one who asked withdraws the request.
    move(players, BOB, "propose", "greatkingdom")
    move(players, BOB, "G6", "greatkingdom")
    assert "bob moved, which withdraws bob's offer of a draw." in text(outbox.to(ALICE)[-1])
    assert reply(players, outbox, ALICE, "accept").status == "rejected"
    assert server.rebuild() == []


def test_the_pending_request_shows_on_show_and_the_web_pages(players, outbox, server, client):
    players.send(ALICE, "greatkingdom challenge alice bob")
    for number, point in enumerate(["D4", "F6", "C3", "G5", "B2", "D7"]):
        move(players, ALICE if number % 2 == 0 else BOB, point, "greatkingdom")
    move(players, ALICE, "undo", "greatkingdom")
    line = "alice asks to take back move 5; bob may accept or reject."
    players.send("someone@watching.test", "greatkingdom show 101")
    assert line in text(outbox.new()[-1])
    board = board_of(server)
    assert line in " ".join(client.get("/games/101").get_data(as_text=True).split())
    for seat in 0, 1:
        assert line in " ".join(client.get(f"/play/{board.token(seat)}").get_data(as_text=True).split())
    assert client.get("/games/101.json").json["request"] == line
    assert line in client.get("/games/101.txt").get_data(as_text=True).replace("\n", " ")


def test_the_computer_takes_no_requests(players, outbox, server):
    players.send(BOB, "twotigers challenge bob computer")
    assert players.send(BOB, "twotigers move 101 bob bobpw propose").status == "rejected"
    assert "The computer neither takes back moves nor agrees to draws" in text(outbox.to(BOB)[-1])


# -- queue --------------------------------------------------------------------

def test_a_queued_move_is_played_when_the_turn_comes(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw C3").status == "applied"
    queued = outbox.new()[-1]
    assert queued["Subject"] == "Great Kingdom Board 101 queued"
    assert "Queued on board 101: C3. It is played the moment it is your turn, after bob has moved." in text(queued)
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw G4").status == "applied"
    assert "It replaces the move you queued before (C3). It is played" in text(outbox.new()[-1])
    assert outbox.to(BOB)[-1]["Subject"] == "Great Kingdom Board 101 bob"  # bob is told nothing
    assert board_of(server).move_count == 1
    reply(players, outbox, BOB, "F6")
    for mail in outbox.to(ALICE)[-1], outbox.to(BOB)[-1]:
        assert mail["Subject"] == "Great Kingdom Board 101 bob"
        assert "alice's queued move G4 was played (move 3)." in text(mail)
        assert "   3. alice        G4 (queued)" in body(mail)
        assert "It is bob's turn." in text(mail)
    assert log_of(server) == [("move", 0, "D4"), ("move", 1, "F6"), ("queued", 0, "G4")]
    assert board_of(server).queued_move is None
    assert server.rebuild() == []


def queued_not_played(mails, address: str) -> str:
    """The text of the one mail among ``mails`` telling ``address`` that its queued move was not played."""
    failed = [m for m in mails if m["Subject"] == "Great Kingdom Board 101 queued move not played"]
    assert len(failed) == 1 and failed[0]["To"].addresses[0].addr_spec == address
    return text(failed[0])


def test_a_queued_move_that_became_illegal_is_not_played(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw F6").status == "applied"
    outbox.new()
    move(players, BOB, "F6", "greatkingdom")
    mails = outbox.new()
    assert "The move you queued on board 101, F6, could not be played: F6 already holds a castle" in \
        queued_not_played(mails, ALICE)
    assert not any("queued" in text(m) for m in mails if m["To"].addresses[0].addr_spec == BOB)
    assert board_of(server).move_count == 2 and board_of(server).to_move == 0
    board_mail = [m for m in mails if m["Subject"] == "Great Kingdom Board 101 alice"]
    assert sorted(m["To"].addresses[0].addr_spec for m in board_mail) == [ALICE, BOB]
    assert all("It is alice's turn." in text(m) for m in board_mail)


def column_b_walled_but_b5(players):
    """A 5x5 Great Kingdom board where Blue has built B1 to B4 and Orange passed each
    time; Blue to move (B5 closes the wall: Orange has no legal point after it)."""
    players.send(ALICE, "greatkingdom challenge alice bob -size=5")
    for point in ("B1", "B2", "B3", "B4"):
        move(players, ALICE, point, "greatkingdom")
        move(players, BOB, "pass", "greatkingdom")


def test_a_queued_move_goes_before_a_forced_pass_and_is_told_when_it_cannot_be_played(players, outbox, server):
    # after B5 Orange has no legal point left, so the server would pass for Orange:
    # bob's queued D4 (now Blue's territory) is tried first
    column_b_walled_but_b5(players)
    assert players.send(BOB, "greatkingdom queue 101 bob bobpw D4").status == "applied"
    outbox.new()
    move(players, ALICE, "B5", "greatkingdom")
    assert "The move you queued on board 101, D4, could not be played" in queued_not_played(outbox.new(), BOB)
    assert log_of(server)[-2:] == [("move", 0, "B5"), ("auto", 1, "pass")]
    assert board_of(server).queued_move is None


def test_queue_on_ones_own_turn_plays_at_once_and_bad_notation_is_refused(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw D4").status == "applied"
    assert log_of(server) == [("move", 0, "D4")]
    assert outbox.to(BOB)[-1]["Subject"] == "Great Kingdom Board 101 bob"
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw Z99").status == "rejected"
    assert "Z99 is off the board" in text(outbox.to(ALICE)[-1])
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw resign").status == "rejected"
    assert "Only a move on the board can be queued" in text(outbox.to(ALICE)[-1])
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw " + "C3" * 101).status == "rejected"
    assert "A queued move is at most 200 characters long." in text(outbox.to(ALICE)[-1])
    assert board_of(server).queued_move is None


# -- submit and confirm ----------------------------------------------------------

def test_submit_shows_the_board_and_confirm_plays_it(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(ALICE, "greatkingdom submit 101 alice alicepw d4").status == "applied"
    shown = outbox.new()[-1]
    assert shown["Subject"] == "Great Kingdom Board 101 submitted D4"
    assert "It is NOT played yet" in text(shown)
    assert "  4  .  .  . (B) .  .  .  .  .  4" in body(shown)
    assert "It is bob's turn." in body(shown)  # the status after it, as preview says it
    assert "greatkingdom confirm 101 alice <password>" in body(shown)
    assert board_of(server).move_count == 0
    assert players.send(ALICE, "greatkingdom confirm 101 alice alicepw", "here goes").status == "applied"
    assert log_of(server) == [("move", 0, "D4")]
    assert "alice says (to the two players only):\n> here goes" in body(outbox.to(BOB)[-1])
    assert players.send(ALICE, "greatkingdom confirm 101 alice alicepw").status == "rejected"
    assert "You have submitted no move on board 101, so there is nothing to confirm." in text(outbox.to(ALICE)[-1])


def test_submit_says_what_the_server_would_play_after_it(players, outbox, server):
    column_b_walled_but_b5(players)
    assert players.send(ALICE, "greatkingdom submit 101 alice alicepw B5").status == "applied"
    shown = text(outbox.new()[-1])
    assert "The server would then play: pass (forced)." in shown
    assert "It is alice's turn." in shown  # Orange's pass is played for it
    assert log_of(server)[-1] == ("move", 1, "pass")  # nothing played


def test_confirm_is_refused_when_the_board_changed_and_submit_needs_ones_turn(players, outbox, server):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(BOB, "greatkingdom submit 101 bob bobpw F6").status == "rejected"
    assert "It is not your turn on board 101" in text(outbox.to(BOB)[-1])
    players.send(ALICE, "greatkingdom submit 101 alice alicepw D4")
    move(players, ALICE, "C3", "greatkingdom")
    move(players, BOB, "F6", "greatkingdom")
    assert players.send(ALICE, "greatkingdom confirm 101 alice alicepw").status == "rejected"
    assert ("Board 101 has changed since you submitted D4 (it had 0 moves, now 2); nothing was played."
            in text(outbox.to(ALICE)[-1]))
    assert log_of(server) == [("move", 0, "C3"), ("move", 1, "F6")]


def test_a_move_number_with_submit_or_queue_is_checked_as_the_move_command_checks_it(players, outbox, server):
    # "#n" after the board or the move asserts that this is move n, as in "<game> move": it was dropped
    # (after the board) or read as part of the move ("D4#1" is no point)
    players.send(ALICE, "greatkingdom challenge alice bob")
    for line in ("greatkingdom submit 101#2 alice alicepw D4", "greatkingdom submit 101 alice alicepw D4#2",
                 "greatkingdom queue 101 alice alicepw D4 #2"):
        refused = players.send(ALICE, line)
        assert refused.status == "rejected", line
        assert refused.error == ("You sent move #2, but the next move on board 101 is #1; the board changed since "
                                 "you looked."), line
    assert board_of(server).submitted_move is None and log_of(server) == []
    assert players.send(ALICE, "greatkingdom submit 101#1 alice alicepw D4").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom Board 101 submitted D4"
    assert players.send(ALICE, "greatkingdom confirm 101#2 alice alicepw").error.startswith("You sent move #2,")
    assert players.send(ALICE, "greatkingdom queue 101 alice alicepw C3#1").status == "applied"  # her turn: played
    assert log_of(server) == [("move", 0, "C3")]
    # not her turn: the queued move is played whenever her turn comes, so no number can hold for it
    refused = players.send(ALICE, "greatkingdom queue 101#3 alice alicepw G4")
    assert refused.status == "rejected"
    assert refused.error == ("A queued move takes no move number (#3): it is played as soon as your turn comes, "
                             "whatever its number.")
    assert board_of(server).queued_move is None


# -- preview ------------------------------------------------------------------

def test_a_preview_plays_the_forced_replies_a_real_move_gets(players, outbox):
    column_b_walled_but_b5(players)
    # after B5 Orange has no legal point: the server passes for it, after A1 too
    assert players.send(ALICE, "greatkingdom preview 101 B5 A1").status == "applied"
    shown = text(outbox.new()[-1])
    assert "the position after move 8, then B5 pass (forced) A1 pass (forced)." in shown
    assert "It is alice's turn." in shown


def test_a_preview_says_when_the_game_is_over_in_it(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    refused = players.send(ALICE, "greatkingdom preview 101 pass pass D4")  # two passes end it
    assert refused.status == "rejected"
    assert refused.error == "The preview cannot go on with D4: the game is over there."


def test_a_preview_says_why_it_stops_at_go_s_scoring(players, outbox):
    players.send(ALICE, "go challenge alice bob")
    refused = players.send(ALICE, "go preview 101 D4 pass pass done")
    assert refused.status == "rejected"
    assert refused.error == ("The preview cannot go on with done: the game is being scored there, and a preview "
                             "plays moves only.")



def test_queue_submit_and_preview_take_abbreviated_word_moves_as_move_does(players, outbox, server):
    """``pas`` is pass wherever a move goes; a word that is no move on the board (undo,
    resign) is refused for what it is, not read as a point."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(BOB, "greatkingdom queue 101 bob bobpw pas").status == "applied"
    assert board_of(server).queued_move == "pass"
    assert players.send(ALICE, "greatkingdom submit 101 alice alicepw pas").status == "applied"
    assert board_of(server).submitted_move == "pass"
    for word, sentence in (("und", "Only a move on the board can be submitted; send undo with the move command."),
                           ("resign", "Only a move on the board can be submitted; send resign with the move "
                                      "command.")):
        refused = players.send(ALICE, f"greatkingdom submit 101 alice alicepw {word}")
        assert refused.status == "rejected" and refused.error.startswith(sentence), refused.error
    assert players.send(ALICE, "greatkingdom preview 101 pas D4").status == "applied"
    assert "then pass D4. Nothing was played or saved." in " ".join(text(outbox.to(ALICE)[-1]).split())
    refused = players.send(ALICE, "greatkingdom preview 101 propose")
    assert refused.error.startswith("A preview plays moves on the board only, not propose.")
    assert log_of(server) == []  # nothing was played


def test_a_draw_offer_open_at_expiry_of_a_game_never_started_cancels_it_unrated(players, outbox, server):
    """rules.md: an unstarted game is cancelled at expiry. A draw offer made before
    the opponent ever moved (bob may never have seen the board) must not turn that
    into a rated draw."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    move(players, ALICE, "D4", "greatkingdom")
    move(players, ALICE, "propose", "greatkingdom")  # bob never answers, never moves
    outbox.new()
    assert server.send_reminders(now=board_of(server).nag_due_at + timedelta(seconds=1)) == 1
    [reminder] = outbox.new()
    assert reminder["To"].addresses[0].addr_spec == BOB
    assert "If no move arrives by" in text(reminder) and "the game is cancelled." in text(reminder)
    assert "drawn" not in text(reminder) and "draw." not in text(reminder)
    assert server.expire_boards(now=board_of(server).expire_due_at + timedelta(seconds=1)) == 1
    mails = outbox.new()
    assert sorted(m["To"].addresses[0].addr_spec for m in mails) == [ALICE, BOB]
    for mail in mails:
        assert "Game cancelled: the game expired before both players had moved." in text(mail)
        assert "Ratings in" not in body(mail)
    assert board_of(server).outcome["kind"] == "cancellation"
    assert log_of(server)[-1] == ("cancel", None, "cancel")
    with reading(server.engine) as session:
        from pbm.models import RatingChange
        assert session.exec(select(RatingChange)).all() == []
