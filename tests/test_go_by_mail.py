"""Go by mail: a whole game through scoring to the result mail with its SGF,
every Go mistake answered by an error mail, new rounds, the SGF route."""

import pytest
from sgfmill import sgf

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"


def reply(mailer, outbox, sender, move, comment=""):
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    return mailer.send(sender, "Re: " + str(last["Subject"]), f"{move}\n{comment}",
                       to=last["Reply-To"].addresses[0].addr_spec)


def flat(message) -> str:
    return " ".join(body(message).split())


@pytest.fixture
def go_game(players, outbox):
    assert players.send(ALICE, "go challenge alice bob -size=9 -komi=6.5").status == "applied"
    return players


def test_whole_go_game_by_mail_through_scoring(go_game, outbox, client):
    mailer = go_game
    moves = ["C3", "G7", "D3", "G6", "E3", "G5", "F3", "G4", "G3", "H3", "H2", "J3", "J2", "E7"]
    for number, move in enumerate(moves):
        assert reply(mailer, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    assert reply(mailer, outbox, ALICE, "pass").status == "applied"
    assert reply(mailer, outbox, BOB, "pass").status == "applied"
    scoring = outbox.to(ALICE)[-1]
    assert scoring["Subject"] == "Go Board 101 either player"
    assert "Either player may act now." in flat(scoring)
    assert "Scoring: mark dead groups (mark D4), then done; resume to play on." in flat(scoring)
    # alice marks bob's lone E7 stone dead
    assert reply(mailer, outbox, ALICE, "mark E7").status == "applied"
    marked = outbox.to(BOB)[-1]
    assert "  7  .  .  +  .  o  .  O  .  .  7" in body(marked)
    assert "Count: Black 7, White 12.5." in flat(marked)
    assert reply(mailer, outbox, BOB, "done").status == "applied"
    assert "Confirmed by: White." in flat(outbox.to(ALICE)[-1])
    assert reply(mailer, outbox, ALICE, "done").status == "applied"
    final = outbox.to(BOB)[-1]
    assert final["Subject"] == "Go Board 101 game over"
    assert "Game won by bob. Area scoring. W+5.5 (Black 7, White 12.5)." in flat(final)
    attachment = next(final.iter_attachments())
    assert attachment.get_filename() == "game.sgf"
    record = sgf.Sgf_game.from_bytes(attachment.get_content())
    root = record.get_root()
    assert (root.get("SZ"), root.get("KM"), root.get("RE"), root.get("PB"), root.get("PW")) == \
        (9, 6.5, "W+5.5", "alice", "bob")
    assert root.get("RU") == "Chinese"
    played = [node.get_move() for node in record.get_main_sequence()[1:]]
    assert len(played) == len(moves) + 2 and played[0] == ("b", (2, 2)) and played[-1] == ("w", None)
    web = client.get("/games/101.sgf")
    assert web.status_code == 200 and web.data == attachment.get_content()


@pytest.mark.parametrize("moves, reason", [
    (["E5", "E5"], "E5 is already occupied"),
    (["Z9"], "Z9 is off the board"),
    (["pass", "pass", "E5"], "The game is in scoring"),
    (["pass", "pass", "mark E5"], "E5 is empty"),
    (["A2", "J9", "B1", "A1"], "A1 would be suicide"),
])
def test_go_mistakes_are_answered(go_game, outbox, moves, reason):
    *setup, last = moves
    for number, move in enumerate(setup):
        assert reply(go_game, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    sender = (ALICE, BOB)[len(setup) % 2]
    before = len(outbox.all())
    result = reply(go_game, outbox, sender, last)
    assert result.status == "rejected" and reason in result.error
    mails = outbox.all()[before:]
    assert len(mails) == 1 and mails[0]["Subject"] == "Go Board 101 Error" and reason in flat(mails[0])


def test_superko_repeat_is_answered(go_game, outbox):
    # A ko in the corner: Black takes at C2, White may not take back at once.
    for number, move in enumerate(["B3", "C3", "A2", "B2", "B1", "D2", "E9", "C1", "C2"]):
        assert reply(go_game, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    result = reply(go_game, outbox, BOB, "B2")
    assert result.status == "rejected"
    assert "B2 would repeat an earlier position (positional superko)" in result.error


def test_new_round_needs_both_players(go_game, outbox):
    assert go_game.send(BOB, "go resign 101 bob bobpw").status == "applied"
    assert reply(go_game, outbox, ALICE, "newround").status == "applied"
    ask = outbox.to(BOB)[-1]
    assert ask["Subject"] == "Go Board 101 new round?" and "alice asks for a new round" in flat(ask)
    assert go_game.send(BOB, "go move 101 bob bobpw newround").status == "applied"
    fresh = outbox.to(BOB)[-1]
    assert fresh["Subject"] == "Go Board 102 alice"
    assert "New round: board 102 follows board 101, same players, sides and options." in flat(fresh)
    assert "alice (Black) vs bob (White)" in body(fresh)
    again = go_game.send(BOB, "go move 101 bob bobpw newround")
    assert again.status == "rejected" and "already started as board 102" in again.error
    early = go_game.send(BOB, "go move 102 bob bobpw newround")
    assert early.status == "rejected" and "still being played" in early.error


def test_a_new_round_keeps_the_colours_size_and_komi(players, outbox, client):
    assert players.send(ALICE, "go challenge alice bob -size=13 -komi=5.5").status == "applied"
    assert players.send(ALICE, "go move 101 alice alicepw K10").status == "applied"
    assert players.send(ALICE, "go resign 101 alice alicepw").status == "applied"
    for sender, password in ((ALICE, "alicepw"), (BOB, "bobpw")):
        userid = sender.split("@")[0]
        assert players.send(sender, f"go move 101 {userid} {password} newround").status == "applied"
    old, new = client.get("/games/101.json").json, client.get("/games/102.json").json
    assert new["options"] == old["options"] == {"size": 13, "komi": 5.5}
    assert (new["players"], new["move"], new["to_move"]) == (old["players"], 0, "alice")  # alice Black again
    assert "13 . . . . . . . . . . . . . 13" in " ".join(new["diagram"].split("\n")[1].split())


def test_sgf_route_is_only_for_go(players, client):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert client.get("/games/101.sgf").status_code == 404
    assert client.get("/games/999.sgf").status_code == 404


def test_resign_during_scoring(go_game, outbox):
    assert reply(go_game, outbox, ALICE, "pass").status == "applied"
    assert reply(go_game, outbox, BOB, "pass").status == "applied"
    assert reply(go_game, outbox, ALICE, "resign").status == "applied"
    final = outbox.to(BOB)[-1]
    assert "Game won by bob. Black resigned." in flat(final)
    # the game is over: no scoring to do, and no count nobody confirmed
    assert "Komi 6.5." in flat(final) and "Scoring:" not in flat(final) and "Count:" not in flat(final)
    assert "area" not in flat(final) and " b " not in body(final)  # nor the areas of that count on the board
    assert sgf.Sgf_game.from_bytes(next(final.iter_attachments()).get_content()).get_root().get("RE") == "W+R"


def test_idle_scoring_reminds_both_then_ends_without_a_winner(server, players, outbox):
    from freezegun import freeze_time

    from pbm.scheduler import sweep

    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "go challenge alice bob")
        assert reply(players, outbox, ALICE, "pass").status == "applied"
        assert reply(players, outbox, BOB, "pass").status == "applied"
    outbox.new()
    with freeze_time("2026-11-05 12:01:00"):
        assert sweep(server)["reminders"] == 1
    reminders = outbox.new()
    assert sorted(m["To"].addresses[0].addr_spec for m in reminders) == [ALICE, BOB]
    assert all("board 101 waits for both players" in flat(m) for m in reminders)
    with freeze_time("2026-11-08 12:00:01"):
        assert sweep(server)["expired"] == 1
    ends = outbox.new()
    assert len(ends) == 2
    assert all("Game over without a winner: it expired while both players could act (scoring was not "
               "finished)." in flat(m)
               for m in ends)


def test_idle_scoring_after_one_confirmation_waits_for_the_other_who_forfeits(server, players, outbox):
    """rules.md: at expiry the player to move forfeits. Once alice has confirmed the
    marking, the game waits for bob alone: he is reminded, and he loses at expiry
    (never confirming must not turn a lost count into no result)."""
    from freezegun import freeze_time

    from pbm.scheduler import sweep

    with freeze_time("2026-11-01 12:00:00"):
        players.send(ALICE, "go challenge alice bob")
        assert reply(players, outbox, ALICE, "pass").status == "applied"
        assert reply(players, outbox, BOB, "pass").status == "applied"
        assert reply(players, outbox, ALICE, "done").status == "applied"
    outbox.new()
    with freeze_time("2026-11-05 12:01:00"):
        assert sweep(server)["reminders"] == 1
    [reminder] = outbox.new()
    assert reminder["To"].addresses[0].addr_spec == BOB
    assert "the game ends and you forfeit" in flat(reminder)
    with freeze_time("2026-11-08 12:00:01"):
        assert sweep(server)["expired"] == 1
    ends = outbox.new()
    assert len(ends) == 2 and all("Game won by alice. White ran out of time." in flat(m) for m in ends)
