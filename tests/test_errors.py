"""Every player mistake gets one plain-sentence error mail to the sender only,
with the original quoted, and changes nothing."""

import pytest
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, MoveRecord, Player

from .conftest import body

ALICE, BOB, CAROL = "alice@players.test", "bob@players.test", "carol@players.test"


@pytest.fixture
def game(players, outbox):
    """Board 101: alice (Blue) vs bob (Orange), alice has played D4; bob to move."""
    mailer = players
    assert mailer.send(CAROL, "signup carol carolpw").status == "applied"
    assert mailer.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    assert mailer.send(ALICE, "greatkingdom move 101 alice alicepw D4").status == "applied"
    outbox.new()
    return mailer


def snapshot(server):
    with reading(server.engine) as s:
        boards = [b.model_dump() for b in s.exec(select(Board)).all()]
        moves = [m.model_dump() for m in s.exec(select(MoveRecord)).all()]
        people = [p.model_dump() for p in s.exec(select(Player)).all()]
    return boards, moves, people


def expect_error(server, outbox, mailer, sender, subject, reason, text="", mail_subject=None, **kw):
    before = snapshot(server)
    result = mailer.send(sender, subject, text, **kw)
    assert result.status == "rejected"
    assert reason in result.error
    mails = outbox.new()
    assert len(mails) == 1, [m["Subject"] for m in mails]
    error = mails[0]
    assert error["To"].addresses[0].addr_spec == sender
    if mail_subject:
        assert error["Subject"] == mail_subject
    content = " ".join(body(error).split())
    assert reason in content
    assert "Your message was:" in content and "Traceback" not in content
    assert error["Auto-Submitted"] == "auto-replied"
    assert snapshot(server) == before
    return error


@pytest.mark.parametrize("sender, subject, reason, mail_subject", [
    (BOB, "greatkingdom move 101 bob wrongpw E4", "The password for bob is wrong.",
     "Great Kingdom Board 101 Error"),
    (ALICE, "greatkingdom move 101 alice alicepw E4", "It is not your turn on board 101: it is bob's turn",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 101 bob bobpw E5", "E5 holds the neutral castle; choose an empty point.",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 101 bob bobpw D4", "D4 already holds a castle",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 101 bob bobpw Z99", "Z99 is off the board; points run from A1 to J9.",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 101 bob bobpw castle", "\"castle\" is not a point",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 101 bob bobpw E4#5", "You sent move #5, but the next move on board 101 is #2",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom move 999 bob bobpw E4", "There is no board 999.", "Great Kingdom error"),
    (BOB, "greatkingdom move 101 zed pw E4", "There is no player called zed",
     "Great Kingdom Board 101 Error"),
    (CAROL, "greatkingdom move 101 carol carolpw E4", "carol is not a player on board 101.",
     "Great Kingdom Board 101 Error"),
    (BOB, "frobnicate 101", "\"frobnicate\" is neither a command nor a game", "pbm error"),
    (BOB, "greatkingdom dance", "\"dance\" is not a greatkingdom command", "Great Kingdom error"),
    (BOB, "greatkingdom show 101#7", "Board 101 has moves 0 to 1; there is no move #7.",
     "Great Kingdom Board 101 Error"),
    (BOB, "signup alice pw1234", "The userid alice is taken", "pbm error"),
    (BOB, "signup 9lives pw1234", "\"9lives\" cannot be a userid", "pbm error"),
    ("next@players.test", "signup next pw1234", "\"next\" cannot be a userid: the games command reads it as a "
     "filter (next, active or all); choose another.", "pbm error"),
    ("all@players.test", "signup all pw1234", "\"all\" cannot be a userid", "pbm error"),
    ("dan@players.test", "signup dan pw1234 not-an-address", "is not a usable email address", "pbm error"),
    ("dan@players.test", "greatkingdom challenge dan bob", "Only players with an account can challenge",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge alice bob", "You (carol) can only start games you play in yourself.",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol nobody", "There is no player called nobody", "Great Kingdom error"),
    # a right-to-left override would turn the rest of the line round in the reader's mail program
    (CAROL, "greatkingdom challenge carol bad\u202euser", "There is no player called bad\ufffduser;",
     "Great Kingdom error"),
    (BOB, "greatkingdom move 101 computer x E4", "computer is the server's own player: nobody plays or sends "
     "commands in its name.", "Great Kingdom Board 101 Error"),
    (BOB, "vacation computer x 3", "computer is the server's own player", "pbm error"),
    (CAROL, "greatkingdom challenge carol bob -komi=7", "Great Kingdom has no option -komi",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob -size=4", "-size must be an odd number from 5 to 19",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob -size", "-size needs a value, like -size=9.", "Great Kingdom error"),
    # numbers as players write them: no other script's digits, no 1_0, which int() and float() would take
    (CAROL, "greatkingdom challenge carol bob -size=\u0667", "-size must be a whole number, not",
     "Great Kingdom error"),
    (CAROL, "go challenge carol bob -komi=6_5", "-komi must be a whole or half number", "Go error"),
    (CAROL, "greatkingdom challenge carol bob --nagtime=\u0663", "--nagtime needs a number of days",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob --nagtime=1_0", "--nagtime needs a number of days",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob -margin=99999999999999999999", "-margin must be a number from 0 to 361, "
     "not 99999999999999999999.", "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob -size=7 -size=9", "-size is given twice; write it once.",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob --nag=1 --nagtime=2", "--nagtime is given twice; write it once.",
     "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob -=7", "\"-=7\" names no option: write the option's name after the "
     "dash, like -size=9 or --nagtime=5.", "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob - size=7", "\"-\" names no option", "Great Kingdom error"),
    ("zed@players.test", "signup guest-abc pw1234", "\"guest-abc\" cannot be a userid: the server keeps it for its "
     "own use; choose another.", "pbm error"),
    (CAROL, "go challenge carol bob -komi=", "-komi needs a value, like -komi=7.5.", "Go error"),
    (CAROL, "greatkingdom challenge carol bob --nagtime=9", "The reminder (--nagtime=9) must come before the "
     "expiry, which is 7 days here unless --expiretime says otherwise.", "Great Kingdom error"),
    (CAROL, "greatkingdom challenge carol bob --nagtime=9 --expiretime=8", "The reminder (--nagtime=9) must come "
     "before the expiry (--expiretime=8).",
     "Great Kingdom error"),
    # a reminder and an expiry the clock (microseconds) reads as one moment: no reminder could come first
    (CAROL, "greatkingdom challenge carol bob --nagtime=1.0000000000001 --expiretime=1.0000000000002",
     "must come before the expiry", "Great Kingdom error"),
    (BOB, "greatkingdom games alice bob", "games takes one userid, then perhaps a filter (next, active or all); "
     "\"bob\" is neither.", "Great Kingdom error"),
    (BOB, "greatkingdom move 101 bob bobpw X", "\"X\" is not a point; write a column letter and a row number",
     "Great Kingdom Board 101 Error"),
    (BOB, "greatkingdom preview 101 Q1", "Q1 is off the board; points run from A1 to J9.",
     "Great Kingdom Board 101 Error"),
    (BOB, "RE: greatkingdom show 101", "The message holds no command: a reply's subject (RE: greatkingdom show "
     "101) is not read as one, and the body is empty; write the command on the body's first line.", "pbm error"),
    (BOB, "change password bob wrong newpw", "The password for bob is wrong.", "pbm error"),
    (BOB, "multiple", "A 'multiple' mail needs one command per line in its body.", "pbm error"),
    (BOB, "all show alice bogus", "all show takes one userid, then perhaps a filter (next, active or all); "
     "\"bogus\" is neither.", "pbm error"),
    (BOB, "accept bob bobpw", "accept is a command of each game: write the game's name in front of it (games "
     "are dragons, go, greatkingdom, twodragons, twotigers).", "pbm error"),
    (BOB, "greatkingdom challenge bob alice -size 7", "Write an option's value after '=', with no space: "
     "-size=7.", "Great Kingdom error"),
])
def test_command_errors(server, outbox, game, sender, subject, reason, mail_subject):
    expect_error(server, outbox, game, sender, subject, reason, mail_subject=mail_subject)


def test_empty_mail_is_answered(server, outbox, game):
    expect_error(server, outbox, game, BOB, "", "The message holds no command", mail_subject="pbm error")


def test_finished_game_takes_no_more_moves(server, outbox, game):
    assert game.send(BOB, "greatkingdom resign 101 bob bobpw").status == "applied"
    outbox.new()
    expect_error(server, outbox, game, BOB, "greatkingdom move 101 bob bobpw E4",
                 "Board 101 is finished, so no more moves can be made. Game won by alice. Orange resigned.")
    assert game.send(ALICE, "greatkingdom move 101 alice alicepw newround").status == "applied"
    assert game.send(BOB, "greatkingdom move 101 bob bobpw newround").status == "applied"
    outbox.new()
    expect_error(server, outbox, game, BOB, "greatkingdom move 101 bob bobpw E4",
                 "Orange resigned. Its new round is board 102.")


def _reply_tag(outbox_or_server, server, seat):
    with reading(server.engine) as s:
        board = s.get(Board, 101)
        return board.token(seat)


def test_forged_reply_tag_is_refused(server, outbox, game):
    token = _reply_tag(outbox, server, 1)
    expect_error(server, outbox, game, BOB, "Re: Great Kingdom Board 101 bob",
                 "The address you replied to does not belong to board 101", text="E4",
                 to=f"pbm+101.{token[:-3]}xyz@pbm.test")
    expect_error(server, outbox, game, BOB, "Re: Great Kingdom Board 102 bob",
                 "The address you replied to names board 102, but its tag is board 101's; reply to your latest mail "
                 "of the board you mean", text="E4", to=f"pbm+102.{token}@pbm.test")


def test_reply_tag_from_another_address_is_refused(server, outbox, game):
    token = _reply_tag(outbox, server, 1)
    error = expect_error(server, outbox, game, CAROL, "Re: Great Kingdom Board 101 bob",
                         "This reply address belongs to bob on board 101", text="E4",
                         to=f"pbm+101.{token}@pbm.test")
    assert error["Subject"] == "Great Kingdom Board 101 Error"


def test_illegal_reply_move_quotes_the_original(server, outbox, game):
    token = _reply_tag(outbox, server, 1)
    error = expect_error(server, outbox, game, BOB, "Re: Great Kingdom Board 101 bob",
                         "E5 holds the neutral castle", text="E5\nsome comment",
                         to=f"pbm+101.{token}@pbm.test")
    assert "> E5" in body(error) and "> some comment" in body(error)


def test_one_bad_line_in_multiple_does_not_undo_the_good_ones(server, outbox, game):
    result = game.send(BOB, "multiple", "greatkingdom move 101 bob bobpw E4\nfrobnicate\n")
    assert result.status == "rejected"
    mails = outbox.new()
    subjects = sorted(m["Subject"] for m in mails)
    assert subjects == ["Great Kingdom Board 101 alice", "Great Kingdom Board 101 alice", "pbm error"]
    with reading(server.engine) as s:
        assert s.get(Board, 101).move_count == 2


def test_a_multiple_mail_with_too_many_commands_does_nothing(server, outbox, game):
    lines = "\n".join(["greatkingdom show 101"] * 51)
    expect_error(server, outbox, game, BOB, "multiple",
                 "A 'multiple' mail may hold at most 50 commands, and this one holds 51; nothing was done.",
                 text=lines, mail_subject="pbm error")


def test_long_comments_are_cut(server, outbox, game):
    result = game.send(BOB, "greatkingdom move 101 bob bobpw E4", "word " * 2000)
    assert result.status == "applied"
    mail = outbox.new()[-1]
    assert "[... the rest was cut]" in body(mail)
    with reading(server.engine) as s:
        comment = s.exec(select(MoveRecord).where(MoveRecord.number == 2)).one().comment
    assert len(comment) < 4100


def test_a_small_boards_error_gives_an_example_on_it(server, outbox, game):
    game.send(ALICE, "twodragons challenge alice bob -size=9")
    outbox.new()
    expect_error(server, outbox, game, ALICE, "twodragons move 102 alice alicepw Z99",
                 "A 2 Dragons move is a point like D4, or pass.", mail_subject="2 Dragons Board 102 Error")


def test_go_quotes_a_point_as_written(server, outbox, game):
    game.send(ALICE, "go challenge alice bob -size=9")
    outbox.new()
    expect_error(server, outbox, game, ALICE, "go move 102 alice alicepw mark Q", "\"Q\" is not a point",
                 mail_subject="Go Board 102 Error")


@pytest.mark.parametrize("sender, subject, send_instead", [
    (ALICE, "greatkingdom move 101 alice alicepw E4",
     "Send instead: <game> queue <board> <userid> <password> <move> (a move played the moment your turn comes)"),
    (BOB, "greatkingdom move 101 bob bobpw E4#5", 'Send instead: "greatkingdom show 101" for the board as it is now'),
    (CAROL, "greatkingdom challenge carol bob -size=99",
     'Send instead: greatkingdom challenge <user1> <user2> with the options that "greatkingdom help" lists'),
    (CAROL, "go show 101", 'Send instead: the same command beginning with "greatkingdom"'),
    (ALICE, "greatkingdom move 101 alice alicepw decline", "Send instead: resign"),
    (CAROL, "greatkingdom move 101 carol carolpw E4", "Send instead: <game> games [<userid>] [next | active | all]"),
    (BOB, "greatkingdom move 101 bob bobpw accept", "Send instead: <game> move <board> <userid> <password> <move>"),
    (BOB, "greatkingdom move 101 bob bobpw undo", "Send instead: <game> move <board> <userid> <password>"),
    (CAROL, "add carol carolpw notanaddress", "Send instead: add <userid> <password> <email>"),
    (CAROL, "greatkingdom challenge carol pbm@pbm.test", "Send instead: <game> challenge <user1> <user2>"),
    (BOB, "greatkingdom move 101 bob bobpw newround", "Send instead: your moves on board 101"),
])
def test_an_error_mail_says_what_to_send_instead(server, outbox, game, sender, subject, send_instead):
    error = expect_error(server, outbox, game, sender, subject, "")
    assert send_instead in " ".join(body(error).split())


def test_a_refused_challenge_says_what_to_send_instead(server, outbox, game):
    game.send(BOB, "greatkingdom limit bob bobpw 1")
    outbox.new()
    expect_error(server, outbox, game, CAROL, "greatkingdom challenge carol bob", "")
    said = " ".join(body(outbox.to(CAROL)[-1]).split())
    assert "bob already plays 1 active Great Kingdom board" in said
    assert "Send instead: a challenge to another player, or to bob once a board ends" in said
    game.send(BOB, "greatkingdom reject bob bobpw")
    outbox.new()
    expect_error(server, outbox, game, CAROL, "greatkingdom challenge carol bob", "")
    assert "Send instead: a challenge to another player" in " ".join(body(outbox.to(CAROL)[-1]).split())


def test_a_move_on_a_finished_board_is_pointed_to_a_new_round(server, outbox, game):
    assert game.send(BOB, "greatkingdom resign 101 bob bobpw").status == "applied"
    outbox.new()
    error = expect_error(server, outbox, game, BOB, "greatkingdom move 101 bob bobpw E4", "is finished")
    assert 'Send instead: "newround" (both players send it) for a new round' in " ".join(body(error).split())


def test_the_same_move_sent_twice_is_told_it_was_played(server, outbox, game):
    # by mail twice (or once on the web page and once by mail): no advice to queue it
    assert game.send(BOB, "greatkingdom move 101 bob bobpw F6").status == "applied"
    outbox.new()
    error = expect_error(server, outbox, game, BOB, "greatkingdom move 101 bob bobpw f6",
                         "Your move F6 on board 101 was already played (move 2); it is alice's turn now.")
    assert "queue" not in " ".join(body(error).split())
    assert 'Send instead: "greatkingdom show 101" for the board as it is now' in " ".join(body(error).split())


@pytest.mark.parametrize("move", ["Z99", "show 101", "pass me the salt"])
def test_no_move_with_a_stale_number_is_told_what_is_wrong_with_it(server, outbox, game, move):
    """#n says the board moved on only about a move: text that is none is told that."""
    expect_error(server, outbox, game, BOB, f"greatkingdom move 101 bob bobpw {move}#1",
                 "A Great Kingdom move is a point like D4, or pass.")


def test_a_reply_that_is_no_move_is_not_told_the_board_changed(server, outbox, game):
    tag = [m for m in outbox.to(ALICE) if m["Reply-To"]][-1]["Reply-To"].addresses[0].addr_spec
    error = expect_error(server, outbox, game, ALICE, "Re: Great Kingdom Board 101 bob", "", "show 101#0", to=tag)
    assert "the board changed since you looked" not in body(error)
    assert "A Great Kingdom move is a point like D4, or pass." in " ".join(body(error).split())
