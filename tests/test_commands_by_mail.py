"""The command language end to end: each command's answer as the player sees it."""

import pytest
from sqlmodel import select
from werkzeug.security import check_password_hash

from pbm.db import reading
from pbm.models import Board, Player

from .conftest import body

ALICE, BOB, NEW = "alice@players.test", "bob@players.test", "newcomer@elsewhere.test"


def text(message) -> str:
    return " ".join(body(message).split())


def test_signup_stores_only_a_slow_hash(players, server):
    with reading(server.engine) as s:
        alice = s.exec(select(Player).where(Player.userid == "alice")).one()
    assert "alicepw" not in alice.password_hash
    assert alice.password_hash.startswith("scrypt:")
    assert check_password_hash(alice.password_hash, "alicepw")


def test_help_and_game_help(players, outbox):
    players.send(ALICE, "help")
    general = outbox.new()[-1]
    assert general["Subject"] == "pbm help"
    assert "greatkingdom challenge" not in body(general) and "<game> challenge <user1> <user2>" in body(general)
    assert "newround" in body(general)
    assert all(len(line) <= 78 for line in body(general).split("\n"))
    players.send(ALICE, "greatkingdom help")
    rules = outbox.new()[-1]
    assert rules["Subject"] == "Great Kingdom help"
    assert "Blue wins with at least 3 more points" in text(rules)
    assert "     A  B  C  D  E" in body(rules)


def test_challenge_an_unknown_address_sends_an_invitation_with_a_private_link(players, outbox, server):
    assert players.send(ALICE, f"greatkingdom challenge {NEW} alice").status == "applied"
    invite = outbox.to(NEW)[-1]
    assert invite["Subject"] == "Great Kingdom Board 101 newcomer"
    assert "alice has challenged you to a game of Great Kingdom (board 101)." in text(invite)
    assert "You need no account: play by replying to this mail, or on your private page below." in text(invite)
    assert 'Not wanted? Reply "decline" before your first move, and the board is cancelled.' in text(invite)
    assert "http://pbm.test/play/" in body(invite)
    # The invited player plays by replying, without a password.
    reply_to = invite["Reply-To"].addresses[0].addr_spec
    assert players.send(NEW, "Re: " + str(invite["Subject"]), "D4\n", to=reply_to).status == "applied"
    assert outbox.to(ALICE)[-1]["Subject"] == "Great Kingdom Board 101 alice"
    # Later they claim the account with a password and keep the game.
    assert players.send(NEW, "signup newbie newpw1").status == "applied"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw F6").status == "applied"
    assert players.send(NEW, "greatkingdom move 101 newbie newpw1 C3").status == "applied"


def test_show_with_move_number_and_history(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4", "opening with a castle")
    players.send(BOB, "greatkingdom move 101 bob bobpw pass")
    outbox.new()
    players.send("someone@watching.test", "greatkingdom show 101#1")
    shown = outbox.new()[-1]
    assert shown["To"].addresses[0].addr_spec == "someone@watching.test"
    assert "Position after move 1 of 2." in body(shown) and "It is bob's turn" in body(shown)
    assert shown["Reply-To"] is None  # not a player: no reply tag
    # a player shown an earlier position is told that the footer is about the board now
    players.send(ALICE, "greatkingdom show 101#1")
    past = text(outbox.new()[-1])
    assert "Position after move 1 of 2. It is bob's turn." in past
    assert "On the board as it is now (move 2): To move, reply to this mail" in past
    players.send(BOB, "greatkingdom show 101")
    current = outbox.new()[-1]
    assert "It is alice's turn" in body(current) and current["Reply-To"] is not None
    assert "On the board as it is now" not in body(current)
    players.send(BOB, "greatkingdom history 101")
    history = body(outbox.new()[-1])
    assert "   1. alice        D4\n        | opening with a castle\n   2. bob          pass" in history


def test_a_long_comment_in_a_history_stays_marked_on_every_line(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    long = "This is a rather long comment line that a player typed without any line breaks at all, as Gmail does."
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4", long)
    players.send(BOB, "greatkingdom history 101")
    history = body(outbox.new()[-1])
    assert ("        | This is a rather long comment line that a player typed without any\n"
            "        | line breaks at all, as Gmail does.") in history


def test_games_and_list(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom challenge alice bob -size=7")
    players.send(BOB, "greatkingdom games alice")
    listing = body(outbox.new()[-1])
    assert "Great Kingdom boards of alice:" in listing
    assert "  101  greatkingdom         alice vs bob          move 0    alice to move" in listing
    assert "  102  greatkingdom" in listing
    players.send(BOB, "greatkingdom list")
    assert "Great Kingdom boards:" in body(outbox.new()[-1])
    # after a userid the filter may be abbreviated, as every other word
    assert players.send(BOB, "all sh alice n").status == "applied"
    assert players.send(BOB, "greatkingdom games bob ne").status == "applied"
    assert "No boards." in body(outbox.new()[-1])  # alice is to move on both


def test_change_password_and_address(players, outbox):
    assert players.send(ALICE, "change password alice alicepw better1").status == "applied"
    assert players.send(ALICE, "change address alice better1 alice@new.test").status == "applied"
    ask = outbox.to("alice@new.test")[-1]  # the new address must confirm by replying
    confirm = ask["Reply-To"].addresses[0].addr_spec
    assert players.send("alice@new.test", "Re: confirm", "yes", to=confirm).status == "applied"
    notices = outbox.new()[-2:]
    assert {m["To"].addresses[0].addr_spec for m in notices} == {ALICE, "alice@new.test"}
    assert all(m["Subject"] == "pbm address changed" for m in notices)
    assert players.send("alice@new.test", "greatkingdom challenge alice bob").status == "applied"
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "rejected"
    assert players.send(ALICE, "greatkingdom move 101 alice better1 D4").status == "applied"


def test_multiple_commands_in_one_mail(players, outbox):
    result = players.send(ALICE, "multiple", "greatkingdom challenge alice bob\n"
                                             "greatkingdom move 101 alice alicepw D4\n"
                                             "greatkingdom show 101\n")
    assert result.status == "applied"
    subjects = sorted(m["Subject"] for m in outbox.new()[-5:])  # mails of one second come in any order
    assert subjects == ["Great Kingdom Board 101 alice"] * 2 + ["Great Kingdom Board 101 bob"] * 3


def test_a_chat_in_a_multiple_mail_is_refused_for_what_it_is(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    result = players.send(ALICE, "multiple", "greatkingdom chat 101 alice alicepw\ngreatkingdom show 101\n")
    assert result.status == "rejected"
    assert ("chat takes its text from the body of the mail, so it cannot be a line of a 'multiple' mail; send it "
            "in a mail of its own.") in result.error
    assert any(m["Subject"] == "Great Kingdom Board 101 alice" for m in outbox.to(ALICE)[-2:])  # the show ran


def test_an_indented_comment_in_a_multiple_mail_is_refused_for_what_it_is(players, outbox):
    """pbmserv players indent a move's comment under its line; here every line of a
    'multiple' mail is a command, and the indented words are told so, not read as a
    command word ("a" could be add or all)."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    result = players.send(ALICE, "multiple", "greatkingdom move 101 alice alicepw D4\n"
                                             "   a comment for bob\ngreatkingdom show 101\n")
    assert result.status == "rejected"
    assert result.error == ("The indented line \"a comment for bob\" is not a command; in a 'multiple' mail every "
                            "line is a command, and none takes a comment. Send a move with its comment in a mail of "
                            "its own, the comment in its body.")
    error = next(m for m in reversed(outbox.to(ALICE)) if m["Subject"].lower().endswith("error"))
    assert "Send instead: <game> move <board> <userid> <password> <move>[#n]" in text(error)
    assert "1. alice        D4" in body(outbox.to(BOB)[-1])  # the other lines were done
    # an indented line that is a command is one
    assert players.send(ALICE, "multiple", "greatkingdom show 101\n  greatkingdom history 101\n").status == "applied"


@pytest.mark.parametrize("subject", ["list greatkingdom", "games greatkingdom", "all show greatkingdom"])
def test_a_games_name_after_list_is_told_to_come_first(players, outbox, subject):
    """pbmserv's "list <game>": the game's name comes first here ("greatkingdom list"),
    and the refusal says so rather than only that no player has that name."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    result = players.send(ALICE, subject)
    assert result.status == "rejected"
    assert result.error == ("There is no player called greatkingdom; for the boards of the game greatkingdom, write "
                            "its name first: \"greatkingdom list\".")


def test_a_subject_that_is_no_command_above_a_command_in_the_body_is_told_which_is_read(players, outbox):
    """A phone that asks for a subject, and the command written in the body: the
    refusal says that the subject is the command, and how the body's would be read."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    result = players.send(ALICE, "My move", "greatkingdom move 101 alice alicepw D4\n")
    assert result.status == "rejected"
    assert result.error == ("The subject (\"My move\") is read as the command, and it is none; the command in the "
                            "body (\"greatkingdom move 101 alice ******** D4\") is read only when the subject is "
                            "empty or a reply's (\"Re: ...\").")
    assert ("Send instead: the command as the subject, or an empty subject and the command on the body's first "
            "line") in text(outbox.to(ALICE)[-1])


def test_command_in_the_body_of_a_reply_subject(players, outbox):
    assert players.send(ALICE, "Re: something", "> quoted\ngreatkingdom help\n").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom help"


def test_resign_by_reply(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    tag = outbox.to(BOB)[-1]["Reply-To"].addresses[0].addr_spec
    assert players.send(BOB, "Re: board", "resign\nwell played", to=tag).status == "applied"
    final = outbox.to(ALICE)[-1]
    assert final["Subject"] == "Great Kingdom Board 101 game over"
    assert "Game won by alice. Orange resigned." in body(final)
    assert "bob says (to the two players only):\n> well played" in body(final)


# -- abbreviations: one rule in the subject, the body, 'multiple' lines and replies --

def reply(players, outbox, sender: str, line: str):
    """Answer the latest board mail to ``sender`` with ``line`` first (no password)."""
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    return players.send(sender, "Re: " + str(last["Subject"]), f"{line}\n",
                        to=last["Reply-To"].addresses[0].addr_spec)


def test_an_ambiguous_subject_is_answered_with_the_candidates_and_their_usage(players, outbox):
    result = players.send(ALICE, "go s 101")
    assert result.status == "rejected"
    refusal = outbox.to(ALICE)[-1]
    assert refusal["Subject"] == "Go error"
    assert "\"s\" could be show, standings, submit, or subscribe: write more of it." in text(refusal)
    assert "Send instead: <game> show <board>[#n] or <game> standings or <game> ratings or" in text(refusal)
    players.send(ALICE, "s 101")  # without a game: show, signoff or signup
    assert "\"s\" could be show, signoff, or signup: write more of it." in text(outbox.to(ALICE)[-1])
    assert players.send(ALICE, "si alice alicepw").status == "rejected"
    assert "\"si\" could be signoff or signup: write more of it." in text(outbox.to(ALICE)[-1])


def test_a_prefix_of_one_command_works_in_the_subject_the_body_and_multiple(players, outbox):
    assert players.send(ALICE, "gr chal alice bob -si=7 --nag=2 --exp=5").status == "applied"
    first = outbox.to(ALICE)[-1]
    assert first["Subject"] == "Great Kingdom Board 101 alice"
    assert "   A  B  C  D  E  F  G\n" in body(first)  # -si=7: a 7x7 board
    assert players.send(BOB, "", "gr sh 101\n").status == "applied"  # empty subject: the body's first line
    assert outbox.to(BOB)[-1]["Subject"] == "Great Kingdom Board 101 alice"
    outbox.new()
    result = players.send(ALICE, "mult", "gr mo 101 alice alicepw C3\ngr re 101 bob bobpw\ngr l\ngr hi 101\n")
    assert result.status == "rejected"  # two of its lines were refused; the others were done
    answers = {m["Subject"]: m for m in outbox.new() if m["To"].addresses[0].addr_spec == ALICE}
    assert set(answers) == {"Great Kingdom Board 101 bob", "Great Kingdom Board 101 history",
                            "pbm error"}  # the move was played, the history sent
    refused = text(answers["pbm error"])
    assert "2 commands of your mail were refused:" in refused
    assert "gr re 101 bob bobpw \"re\" could be reject or resign: write more of it." in refused
    assert "gr l \"l\" could be limit or list: write more of it." in refused


def test_a_reply_may_abbreviate_its_word_but_not_resign(players, outbox, server):
    players.send(ALICE, "go challenge alice bob")
    assert reply(players, outbox, ALICE, "D4").status == "applied"
    assert reply(players, outbox, BOB, "sh").status == "applied"  # show
    assert outbox.to(BOB)[-1]["Subject"] == "Go Board 101 bob" and "Reply-To" in outbox.to(BOB)[-1]
    assert reply(players, outbox, BOB, "re").status == "rejected"
    assert "\"re\" could be reject, resign, or resume: write more of it." in text(outbox.to(BOB)[-1])
    assert reply(players, outbox, BOB, "resi").status == "rejected"
    assert "\"resi\" would be resign, which is written in full: it cannot be taken back." in text(
        outbox.to(BOB)[-1])
    assert reply(players, outbox, BOB, "h").status == "rejected"  # help or history
    assert "\"h\" could be help or history: write more of it." in text(outbox.to(BOB)[-1])
    assert reply(players, outbox, BOB, "E5").status == "applied"
    assert reply(players, outbox, ALICE, "u").status == "applied"  # undo
    assert "alice asks to take back move 1; bob may accept or reject." in text(outbox.to(BOB)[-1])
    assert reply(players, outbox, BOB, "acc").status == "applied"  # accept
    assert "bob accepted alice's request to take back move 1" in text(outbox.to(ALICE)[-1])
    assert reply(players, outbox, ALICE, "p").status == "applied"  # Go reads p as pass, not as propose
    passed = outbox.to(BOB)[-1]
    assert passed["Subject"] == "Go Board 101 bob" and "draw" not in text(passed)
    assert reply(players, outbox, BOB, "pro").status == "applied"  # propose
    assert "bob offers a draw; alice may accept or reject." in text(outbox.to(ALICE)[-1])


# -- rows of the command table that had no test by mail (issue 13 audit) --------

def test_a_move_with_the_right_number_is_played(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(ALICE, "greatkingdom move 101 alice alicepw D4#1").status == "applied"
    assert players.send(BOB, "greatkingdom move 101 bob bobpw F6 #2").status == "applied"
    assert "It is alice's turn." in text(outbox.to(ALICE)[-1])
    late = players.send(BOB, "greatkingdom move 101 bob bobpw C3#3")  # alice's #3, and not bob's turn
    assert late.status == "rejected"


def test_decline_by_the_move_command(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    assert players.send(BOB, "greatkingdom move 101 bob bobpw decline").status == "applied"
    ended = outbox.to(ALICE)[-1]
    assert ended["Subject"] == "Great Kingdom Board 101 game over"
    assert "Game cancelled: Orange declined the game before moving." in text(ended)


def test_games_of_everyone_and_list_without_a_game(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(BOB, "go challenge bob alice")
    players.send(BOB, "go resign 102 bob bobpw")
    players.send(BOB, "greatkingdom games")
    assert "Great Kingdom boards:" in body(outbox.new()[-1])
    players.send(BOB, "list")
    listing = body(outbox.new()[-1])
    assert "All boards:" in listing and "  101  greatkingdom" in listing and "  102  go" in listing
    assert "  102  go                     bob vs alice        move 1    finished" in listing
    players.send(BOB, "go games alice all")
    listing = body(outbox.new()[-1])
    assert "Go boards of alice:" in listing and "  102  go" in listing and "  101" not in listing


def test_help_lists_every_command_of_the_interface(players, outbox):
    """Each row of the mail command table (shared/interface.md) has its line in `help`."""
    players.send(ALICE, "help")
    listed = " ".join(body(outbox.new()[-1]).split())
    for usage in ("signup <userid> <password> [<email>]", "change password <userid> <old> <new>",
                  "change address <userid> <password> <email>", "<game> help",
                  "<game> challenge <user1> <user2> [-option=value ...] [--nagtime=D --expiretime=D]",
                  "(--forfeittime=D too)", "<game> move <board> <userid> <password> <move>[#n]",
                  "<game> move <board> <userid> <password> pass (or resign)",
                  "<game> resign <board> <userid> <password>", "<game> show <board>[#n]",
                  "<game> games [<userid>] [next | active | all] <game> list", "<game> history <board>",
                  "<game> move <board> <userid> <password> undo", "<game> move <board> <userid> <password> propose",
                  "<game> move <board> <userid> <password> accept (or reject)",
                  "<game> move <board> <userid> <password> decline",
                  "<game> queue <board> <userid> <password> <move>", "<game> submit <board> <userid> <password> <move>",
                  "<game> confirm <board> <userid> <password>", "<game> preview <board>[#n] <move> [<move> ...]",
                  "<game> subscribe <board> <userid> <password> (and unsubscribe)",
                  "<game> subscribe <userid> <password> all (and unsubscribe)",
                  "<game> chat <board> <userid> <password>", "message <userid> <password> <userid> [<userid> ...]",
                  "<game> standings (or <game> ratings)", "<game> accept <userid> <password>",
                  "<game> reject <userid> <password>", "<game> limit <userid> <password> <n>",
                  "vacation <userid> <password> <days> (or off)", "add <userid> <password> <email>",
                  "signoff <userid> <password>", "all show <userid> [next | active]", 'Subject "multiple"'):
        assert usage in listed, usage


# -- how pbmserv players and their mail programs write commands --

def test_a_command_repeated_in_the_body_never_passes_the_password_on(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    command = "greatkingdom move 101 alice alicepw D4"
    assert players.send(ALICE, command, f"{command}\nGood luck, my pw=alicepw!\n").status == "applied"
    to_bob = body(outbox.to(BOB)[-1])
    assert "alicepw" not in to_bob and "> Good luck, my pw=[password removed]!" in to_bob
    assert "> greatkingdom move" not in to_bob  # the command repeated is no comment
    assert players.send(ALICE, "greatkingdom chat 101 alice alicepw", "psst: 'alicepw'").status == "applied"
    assert "alicepw" not in body(outbox.to(BOB)[-1]) and "psst: '[password removed]'" in body(outbox.to(BOB)[-1])
    players.send(BOB, "greatkingdom history 101")
    assert "alicepw" not in body(outbox.new()[-1])


@pytest.mark.parametrize("subject", ["Re[2]: Great Kingdom Board 101 alice", "WG: Great Kingdom Board 101 alice"])
def test_a_counted_reply_or_a_forward_is_no_command_but_its_body_is(players, outbox, subject):
    players.send(ALICE, "greatkingdom challenge alice bob")
    result = players.send(ALICE, subject, "greatkingdom show 101")
    assert result.status == "applied", result.error
    assert outbox.to(ALICE)[-1]["Subject"].startswith("Great Kingdom Board 101")

def test_a_short_password_stays_inside_the_words_of_a_comment(players, outbox):
    """Cut out of "good", the password "go" would garble the comment and show itself."""
    players.send("carol@players.test", "signup carol go")
    players.send(ALICE, "greatkingdom challenge carol alice")
    assert players.send("carol@players.test", "greatkingdom move 101 carol go D4",
                        "Good luck, and a good game! (my password: go)").status == "applied"
    to_alice = body(outbox.to(ALICE)[-1])
    assert "> Good luck, and a good game! (my password: [password removed])" in to_alice


def test_a_whole_command_in_a_reply_to_a_board_mail_is_run_as_a_command(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert reply(players, outbox, ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    assert "1. alice        D4" in body(outbox.to(BOB)[-1])
    assert reply(players, outbox, ALICE, "greatkingdom show 101").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom Board 101 bob"
    # and a wrong one is answered as the command it is, not as a move
    assert reply(players, outbox, ALICE, "greatkingdom move 101 alice wrongpw E5").status == "rejected"
    assert "password" in text(outbox.new()[-1]).lower()


def test_a_challenge_wrapped_by_a_flowed_mail_program_keeps_every_option(players, server, outbox):
    raw = (b"From: alice@players.test\nTo: pbm@pbm.test\nSubject:\nMessage-ID: <flowed@players.test>\n"
           b"Content-Type: text/plain; charset=utf-8; format=flowed\n\n"
           b"greatkingdom challenge alice bob -size=7 --nagtime=2 \n--expiretime=3\n")
    assert server.handle_raw(raw).status == "applied"
    with reading(server.engine) as s:
        board = s.exec(select(Board).where(Board.id == 101)).one()
    assert (board.options["size"], board.nag_days, board.expire_days) == (7, 2, 3)


def test_a_reply_behind_a_mailing_list_tag_reads_its_body(players, outbox):
    assert players.send(ALICE, "[pbm-list] Re: Great Kingdom Board 101", "greatkingdom help\n").status == "applied"
    assert outbox.new()[-1]["Subject"] == "Great Kingdom help"


def test_a_multiple_mails_refusals_are_titled_after_a_board_only_when_all_are_about_it(players, outbox):
    players.send(ALICE, "greatkingdom challenge alice bob")
    outbox.new()
    players.send(ALICE, "multiple", "greatkingdom move 101 alice wrong D4\nbogus line\n")
    mixed = [m for m in outbox.new() if m["To"].addresses[0].addr_spec == ALICE]
    assert [m["Subject"] for m in mixed] == ["pbm error"]  # "bogus line" is about no board
    players.send(ALICE, "multiple", "greatkingdom move 101 alice wrong D4\ngreatkingdom show 101#9\n")
    same = [m for m in outbox.new() if m["To"].addresses[0].addr_spec == ALICE]
    assert [m["Subject"] for m in same] == ["Great Kingdom Board 101 Error"]
