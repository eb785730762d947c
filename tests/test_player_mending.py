"""What players hit when they tried the server as new users (issue 9), each fixed."""

import pytest

from .conftest import body, make_mail

ALICE, BOB = "alice@players.test", "bob@players.test"


def flat(mail) -> str:
    return " ".join(body(mail).split())


def reply_address(mail) -> str:
    return mail["Reply-To"].addresses[0].addr_spec


@pytest.fixture
def game(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    return players


def latest_to(outbox, address):
    return outbox.to(address)[-1]


def reply(players, outbox, sender, text):
    return players.send(sender, "Re: your board", text, to=reply_address(latest_to(outbox, sender)))


def test_replying_newround_to_the_new_round_mail_starts_the_round(game, outbox):
    reply(game, outbox, ALICE, "resign")
    assert reply(game, outbox, BOB, "newround").status == "applied"
    asked = latest_to(outbox, ALICE)
    assert asked["Subject"] == "Great Kingdom Board 101 new round?" and asked["Reply-To"] is not None
    assert game.send(ALICE, "Re: new round?", "newround", to=reply_address(asked)).status == "applied"
    assert latest_to(outbox, ALICE)["Subject"] == "Great Kingdom Board 102 alice"


def test_the_player_who_asks_for_a_new_round_is_told_to_wait_not_to_agree(game, outbox):
    reply(game, outbox, ALICE, "resign")
    assert reply(game, outbox, BOB, "newround").status == "applied"
    to_bob, to_alice = flat(latest_to(outbox, BOB)), flat(latest_to(outbox, ALICE))
    assert "You asked for a new round of Great Kingdom board 101, same sides and options; it starts when alice " \
           "agrees." in to_bob and "To agree" not in to_bob
    assert 'bob asks for a new round of Great Kingdom board 101, same sides and options. To agree, reply ' \
           '"newround"' in to_alice
    mails = len(outbox.all())
    again = reply(game, outbox, BOB, "newround")
    assert again.status == "rejected"
    assert "You have already asked for a new round of board 101; it starts when alice agrees." in again.error
    assert len(outbox.all()) == mails + 1 and latest_to(outbox, BOB)["Subject"] == "Great Kingdom Board 101 Error"


def test_replying_a_corrected_move_to_an_error_mail_plays_it(game, outbox):
    refused = reply(game, outbox, ALICE, "Z99")
    assert refused.status == "rejected"
    error = latest_to(outbox, ALICE)
    assert error["Subject"] == "Great Kingdom Board 101 Error" and error["Reply-To"] is not None
    assert game.send(ALICE, "Re: Great Kingdom Board 101 Error", "D4", to=reply_address(error)).status == "applied"
    game.send("someone@watching.test", "greatkingdom show 101#99")  # a watcher gets no player's tag
    watcher = latest_to(outbox, "someone@watching.test")
    assert watcher["Subject"] == "Great Kingdom Board 101 Error" and watcher["Reply-To"] is None


@pytest.mark.parametrize("word, subject", [("help", "Great Kingdom help"),
                                           ("show", "Great Kingdom Board 101 alice"),
                                           ("history", "Great Kingdom Board 101 history"),
                                           ("games", "All boards of alice")])
def test_command_words_in_a_reply_are_commands(game, outbox, word, subject):
    result = reply(game, outbox, ALICE, word)
    assert result.status == "applied", result.error
    assert latest_to(outbox, ALICE)["Subject"] == subject


def test_an_abbreviated_multiple_in_the_subject(game, outbox):
    result = game.send(ALICE, "mult", "greatkingdom move 101 alice alicepw D4\ngreatkingdom show 101\n")
    assert result.status == "applied", result.error


def test_an_error_mail_quotes_the_subject_and_the_visible_body_not_the_headers(game, outbox):
    game.send(ALICE, "greatkingdom move 101 alice alicepw Z99", "my comment",
              headers={"Received": "from mx.example by pbm", "DKIM-Signature": "v=1; a=rsa-sha256"})
    error = body(latest_to(outbox, ALICE))
    assert "> Subject: greatkingdom move 101 alice alicepw Z99" in error and "> my comment" in error
    assert "DKIM-Signature" not in error and "Received:" not in error


@pytest.mark.parametrize("text, move, comment", [
    ("d4.", "D4", ""),
    ("D4 take that!", "D4", "take that!"),
    ("Hi Bob,\nD4\nNice game so far.", "D4", "Hi Bob,\nNice game so far."),
    ("Hi Bob,\n\nd4. take that!", "D4", "Hi Bob,\ntake that!"),
])
def test_moves_are_read_as_people_write_them(game, outbox, text, move, comment):
    assert reply(game, outbox, ALICE, text).status == "applied"
    to_bob = latest_to(outbox, BOB)
    assert f"alice        {move}" in body(to_bob)
    if comment:
        assert "alice says (to the two players only):\n" + "\n".join("> " + line for line in comment.split("\n")) \
            in body(to_bob)


@pytest.mark.parametrize("text", ["Resign is not an option for me, I fight on!", "Pass me your phone number.",
                                  "accept nothing less than a win"])
def test_a_sentence_that_begins_with_a_word_move_is_no_move(game, outbox, text):
    result = reply(game, outbox, ALICE, text)
    assert result.status == "rejected"
    word = text.split()[0].lower()
    assert f"begins with the move {word} but goes on" in result.error
    assert "write it alone on the first line" in result.error
    shown = game.send(ALICE, "greatkingdom show 101")
    assert shown.status == "applied"
    assert "It is alice's turn" in flat(latest_to(outbox, ALICE))  # nothing was played


@pytest.mark.parametrize("text, comment", [("Resign.", ""), ("resign, well played", "well played")])
def test_a_word_move_set_off_by_a_mark_is_that_move_even_out_of_turn(game, outbox, text, comment):
    result = reply(game, outbox, BOB, text)  # alice is to move: resigning needs no turn
    assert result.status == "applied", result.error
    to_alice = flat(latest_to(outbox, ALICE))
    assert "Game won by alice. Orange resigned." in to_alice
    if comment:
        assert f"bob says (to the two players only): > {comment}" in to_alice


def test_pass_with_words_after_a_comma_passes(game, outbox):
    assert reply(game, outbox, ALICE, "pass, your turn").status == "applied"
    assert "alice        pass" in body(latest_to(outbox, BOB))


def test_a_reply_may_assert_its_move_number_as_the_move_command_does(game, outbox):
    stale = reply(game, outbox, ALICE, "D4#2")
    assert stale.status == "rejected" and "#2" in stale.error
    assert reply(game, outbox, ALICE, "D4#1").status == "applied"
    assert "alice        D4" in body(latest_to(outbox, BOB))


def test_two_readings_of_a_reply_are_refused_and_named(game, outbox):
    result = reply(game, outbox, ALICE, "D4,\nE5")
    assert result.status == "rejected"
    assert "could mean the move D4 (first line) or E5 (second line)" in result.error


def test_footers_say_what_each_player_can_do_now(game, outbox):
    reply(game, outbox, ALICE, "D4")
    to_alice, to_bob = latest_to(outbox, ALICE), latest_to(outbox, BOB)
    assert "To move, reply" not in body(to_alice) and "It is your opponent's turn" in flat(to_alice)
    assert "To move, reply to this mail with your move" in body(to_bob)
    reply(game, outbox, BOB, "resign")
    assert 'For a new round with the same sides and options, reply "newround".' in flat(latest_to(outbox, ALICE))


def test_go_scoring_mails_name_mark_done_resume(players, outbox):
    players.send(ALICE, "go challenge alice bob")
    reply(players, outbox, ALICE, "pass")
    reply(players, outbox, BOB, "pass")
    assert "mark <point>" in flat(latest_to(outbox, ALICE)) and "done" in flat(latest_to(outbox, BOB))


def test_go_scoring_mails_show_whose_area_each_point_is(players, outbox):
    players.send(ALICE, "go challenge alice bob")
    for sender, move in ((ALICE, "E5"), (BOB, "D4"), (ALICE, "pass"), (BOB, "pass")):
        assert reply(players, outbox, sender, move).status == "applied"
    scoring = body(latest_to(outbox, ALICE))
    assert "X Black  O White  b/w Black's/White's area" in scoring
    assert "  4  .  .  .  O  .  .  .  .  .  4" in scoring  # the empty points touch both colours
    reply(players, outbox, ALICE, "mark D4")
    marked = body(latest_to(outbox, BOB))
    assert "  5  b  b  b  b  X  b  b  b  b  5" in marked
    assert "  4  b  b  b  o  b  b  b  b  b  4" in marked and "x/o dead" in marked
    assert "Count: Black 81, White 7.5." in " ".join(marked.split())


def test_an_unstarted_games_reminder_says_it_will_be_cancelled(players, outbox, server):
    from freezegun import freeze_time

    from pbm.scheduler import sweep

    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "greatkingdom challenge alice bob --nagtime=1 --expiretime=2")
        reply(players, outbox, ALICE, "D4")  # bob never answers
    with freeze_time("2026-11-02 12:00:01"):
        assert sweep(server)["reminders"] == 1
    reminder = flat(latest_to(outbox, BOB))
    assert "If no move arrives by 2026-11-03 12:00 UTC, the game is cancelled." in reminder
    assert "forfeit" not in reminder


def test_history_shows_comments_to_the_players_only(game, outbox):
    reply(game, outbox, ALICE, "D4\nmy secret plan")
    game.send(BOB, "greatkingdom history 101")
    assert "| my secret plan" in body(latest_to(outbox, BOB))
    game.send("someone@watching.test", "greatkingdom history 101")
    watcher = body(latest_to(outbox, "someone@watching.test"))
    assert "my secret plan" not in watcher and "(a comment for the players)" in watcher


def test_pages_show_comments_to_the_players_only(game, outbox, client, server):
    from pbm.db import reading
    from pbm.models import Board

    reply(game, outbox, ALICE, "D4\nmy secret plan")
    with reading(server.engine) as session:
        tokens = [session.get(Board, 101).token(seat) for seat in (0, 1)]
    for token in tokens:
        assert "my secret plan" in client.get(f"/play/{token}").get_data(as_text=True)
    public = client.get("/games/101").get_data(as_text=True)
    assert "my secret plan" not in public and "(a comment for the players)" in public
    as_json = client.get("/games/101.json")
    assert "my secret plan" not in as_json.get_data(as_text=True) and as_json.json["moves"][0]["commented"]
    assert "my secret plan" not in client.get("/games/101.txt").get_data(as_text=True)


def test_games_next_lists_the_boards_where_the_player_is_to_move(game, outbox):
    game.send(BOB, "greatkingdom challenge bob alice")  # board 102: bob moves first
    game.send(BOB, "greatkingdom games alice next")
    listing = body(latest_to(outbox, BOB))
    assert "101" in listing and "  102" not in listing
    refused = game.send(BOB, "greatkingdom games next")
    assert refused.status == "rejected" and "name the player" in refused.error


def test_a_reply_move_reports_its_board(game, outbox, client):
    result = reply(game, outbox, ALICE, "D4")
    assert (result.status, result.board) == ("applied", 101)
    raw = make_mail(BOB, "Re: your board", "F6", to=reply_address(latest_to(outbox, BOB)))
    answer = client.post("/inbound/email", data=raw, content_type="message/rfc822").json
    assert answer == {"status": "applied", "board": 101, "error": None}  # the webhook's JSON too


def test_the_challenged_player_may_decline_before_moving(game, outbox):
    assert reply(game, outbox, BOB, "decline").status == "applied"
    ended = latest_to(outbox, ALICE)
    assert ended["Subject"] == "Great Kingdom Board 101 game over"
    assert "Game cancelled: Orange declined the game before moving." in flat(ended)
    # A game declined was never played: no new round is offered, and asking gets a sentence.
    assert "newround" not in flat(ended) and "newround" not in flat(latest_to(outbox, BOB))
    again = reply(game, outbox, ALICE, "newround")
    assert again.status == "rejected" and "Board 101 was cancelled before its game began" in again.error


def test_decline_after_a_move_is_refused(game, outbox):
    reply(game, outbox, ALICE, "D4")
    reply(game, outbox, BOB, "F6")
    refused = reply(game, outbox, BOB, "decline")
    assert refused.status == "rejected" and "can only be declined before your first move" in refused.error


def test_the_challenger_cannot_decline_even_when_seated_second(players, outbox):
    players.send(BOB, "greatkingdom challenge alice bob")  # bob challenges, alice moves first
    assert reply(players, outbox, ALICE, "D4").status == "applied"
    refused = reply(players, outbox, BOB, "decline")
    assert refused.status == "rejected"
    assert "You challenged on board 101 yourself, so it is not yours to decline; resign ends it." in refused.error
    assert players.send(ALICE, "greatkingdom show 101").status == "applied"
    assert "It is bob's turn." in flat(latest_to(outbox, ALICE))  # still being played


def test_forfeittime_is_pbmserv_s_name_for_expiretime(players, outbox, server):
    from pbm.db import reading
    from pbm.models import Board

    assert players.send(ALICE, "greatkingdom challenge alice bob --forfeittime=3 --nagtime=1").status == "applied"
    with reading(server.engine) as session:
        assert session.get(Board, 101).expire_days == 3



@pytest.mark.parametrize("option, sentence", [
    ("--forfeittime=abc", "--forfeittime needs a number of days, like --forfeittime=5."),
    ("--forfeittime=0", "--forfeittime must be more than 0 and at most 365 days."),
    ("--forfeit=400", "--forfeittime must be more than 0 and at most 365 days."),
])
def test_a_refused_forfeittime_is_named_as_the_player_wrote_it(players, option, sentence):
    """The player wrote --forfeittime (pbmserv's name): the refusal must not speak of an
    --expiretime they never wrote."""
    refused = players.send(ALICE, f"greatkingdom challenge alice bob {option}")
    assert refused.status == "rejected" and refused.error == sentence


def test_preview_mails_the_position_after_hypothetical_moves_and_saves_nothing(game, outbox, server):
    game.send(BOB, "greatkingdom preview 101 D4 f6")
    shown = latest_to(outbox, BOB)
    assert shown["Subject"] == "Great Kingdom Board 101 preview"
    assert "the position after move 0, then D4 F6. Nothing was played or saved." in flat(shown)  # as written
    assert "5  .  .  .  .  #  .  .  .  .  5" in body(shown)  # the neutral castle in the middle
    refused = game.send(BOB, "greatkingdom preview 101 E5")
    assert refused.status == "rejected" and "In the preview, E5:" in refused.error
    game.send(BOB, "greatkingdom show 101")
    assert "Moves" not in body(latest_to(outbox, BOB))  # nothing was played


def test_the_readme_names_the_ports_and_its_swaks_lines_send_a_body():
    from pathlib import Path

    root = Path(__file__).parent.parent
    readme = (root / "README.md").read_text()
    assert "make run PORT=5600 SMTP_PORT=2600" in readme
    swaks = [line.strip() for text in (readme, (root / "deploy" / "first-game.txt").read_text())
             for line in text.splitlines() if line.strip().startswith("swaks ")]
    # never swaks' own test text, and never an empty body, for which swaks asks at its prompt
    assert swaks and all("--body " in line and '--body ""' not in line for line in swaks)


@pytest.mark.parametrize("text", ["#12", "# 5", "  #1  "])
def test_a_reply_of_only_a_move_number_is_told_to_write_the_move(game, outbox, text):
    result = reply(game, outbox, ALICE, text)
    assert result.status == "rejected"
    number = text.strip("# ")
    assert f"Your reply holds only a move number (#{number}): write the move before it, as in D4#{number}." \
        in result.error
    assert latest_to(outbox, ALICE)["Subject"] == "Great Kingdom Board 101 Error"
    assert reply(game, outbox, ALICE, "D4#1").status == "applied"  # nothing was played meanwhile


def test_a_move_replied_to_the_servers_own_address_is_told_where_to_send_it(game, outbox):
    """A board mail's reply that lost its reply tag (written to the server's address by
    hand, or a mail program that answered From, not Reply-To) is no command: it is told
    that the board's reply address plays, and the move command to send instead."""
    board_mail = latest_to(outbox, ALICE)
    quoted = "\n".join("> " + line for line in body(board_mail).split("\n"))
    result = game.send(ALICE, "Re: " + str(board_mail["Subject"]), f"D4\n\n{quoted}")
    assert result.status == "rejected"
    error = flat(latest_to(outbox, ALICE))
    assert ("Your mail answers a mail of board 101, but it came to pbm@pbm.test, not to the board's reply address, "
            "so \"D4\" was read as a command, and it is none.") in error
    assert 'Send instead: "greatkingdom move 101 <userid> <password> D4", or reply to your latest mail of ' \
           'board 101' in error
    game.send(BOB, "greatkingdom show 101")
    assert "It is alice's turn" in body(latest_to(outbox, BOB))  # nothing was played
