"""2 Dragons and Two Tigers played by mail to the end, with their errors."""

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"


def reply(mailer, outbox, sender, move):
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    return mailer.send(sender, "Re: " + str(last["Subject"]), f"{move}\n",
                       to=last["Reply-To"].addresses[0].addr_spec)


def flat(message) -> str:
    return " ".join(body(message).split())


def test_two_dragons_by_mail(players, outbox):
    assert players.send(ALICE, "twodragons challenge alice bob -size=9").status == "applied"
    first = outbox.to(ALICE)[-1]
    assert first["Subject"] == "2 Dragons Board 101 alice" and "alice (White) vs bob (Black)" in body(first)
    for number, move in enumerate(["E5", "A1", "E6", "B1", "F6"]):
        assert reply(players, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    wrong = reply(players, outbox, BOB, "C4")
    assert wrong.status == "rejected" and "C4 is not in sight of your pieces" in wrong.error
    blob = reply(players, outbox, BOB, "A2")
    assert blob.status == "applied"
    square = reply(players, outbox, ALICE, "F5")
    assert square.status == "rejected" and "F5 would make a 2x2 blob at E5-F6" in square.error
    players.send(BOB, "twodragons show 101")
    shown = body(outbox.to(BOB)[-1])
    assert "* where the player to move may play" in shown
    assert reply(players, outbox, ALICE, "pass").status == "applied"
    alone = outbox.to(BOB)[-1]
    assert "White has passed; Black moves alone until passing too." in flat(alone)
    assert reply(players, outbox, BOB, "C1").status == "applied"
    assert outbox.to(BOB)[-1]["Subject"] == "2 Dragons Board 101 bob"  # still bob
    assert reply(players, outbox, BOB, "pass").status == "applied"
    final = outbox.to(ALICE)[-1]
    assert final["Subject"] == "2 Dragons Board 101 game over"
    text = flat(final)
    assert "Game won by bob. The 2 biggest dragons. White 3, Black 4." in text
    assert "White dragons 3 = 3; Black dragons 4 = 4." in text


def test_two_tigers_by_mail_to_a_draw(players, outbox):
    assert players.send(ALICE, "twotigers challenge alice bob").status == "applied"
    start = outbox.to(BOB)[-1]
    assert "alice (Goats) vs bob (Tigers)" in body(start)
    assert "  5    . --- G5 -- . --- G5 -- .     5" in body(start)
    bad = reply(players, outbox, ALICE, "b5-c4")
    assert bad.status == "rejected" and "b5-c4 is not a line on this board (b5 has no diagonals)" in bad.error
    moves = ["b3-b4", "c2-c1", "b4-a4", "c1-c2", "a4-b4", "c2-c1", "b4-a4", "c1-c2", "a4-b4"]
    for number, move in enumerate(moves):
        assert reply(players, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    final = outbox.to(BOB)[-1]
    assert final["Subject"] == "Two Tigers Board 101 game over"
    assert "Game drawn: the same position occurred a third time." in flat(final)


def test_two_tigers_capture_by_mail(players, outbox):
    players.send(ALICE, "twotigers challenge alice bob")
    assert reply(players, outbox, ALICE, "b3-b4").status == "applied"
    assert reply(players, outbox, BOB, "c4-a4").status == "applied"
    assert "Goats left: 19 of 20" in flat(outbox.to(ALICE)[-1])


def test_dragons_by_mail_with_a_gap_move_and_auto_moves_to_a_win(players, outbox, client):
    assert players.send(ALICE, "dragons challenge alice bob").status == "applied"
    first = outbox.to(ALICE)[-1]
    assert first["Subject"] == "Dragons Board 101 alice" and "alice (O) vs bob (X)" in body(first)
    assert reply(players, outbox, ALICE, "1SE B0").status == "applied"
    assert reply(players, outbox, BOB, "1sw-b2").status == "applied"
    gap = outbox.to(ALICE)[-1]
    assert "Must fill a gap: 1s." in flat(gap)
    refused = reply(players, outbox, ALICE, "1n:F3")
    assert refused.status == "rejected"
    assert "A gap must be filled first: play in 1s (it fits two or more orientations)." in refused.error
    clash = reply(players, outbox, ALICE, "1s:F0")
    assert clash.status == "rejected"
    assert clash.error == "1s:F0 does not fit: its N edge is O but tile 1's S edge is X."
    assert reply(players, outbox, ALICE, "1s:B1").status == "applied"  # the gap move
    page = client.get("/games/101").get_data(as_text=True)
    assert "Playable cells" in page and "<td>1n</td>" in page
    assert reply(players, outbox, BOB, "4s:B0").status == "applied"
    final = outbox.to(ALICE)[-1]
    assert final["Subject"] == "Dragons Board 101 game over"
    text = flat(final)
    assert "Game won by bob. A loop of 6 X tiles." in text
    assert "Last move: tile 5 (B0), (Auto) tile 6 (F2), (Auto) tile 7 (F4)." in text
    assert all(len(line) <= 78 for line in body(final).split("\n"))
    assert "Playable cells" not in client.get("/games/101").get_data(as_text=True)


def test_a_game_without_passing_refuses_pass_and_p_with_that_reason(players, outbox, server):
    for game, title in (("twotigers", "Two Tigers"), ("dragons", "Dragons")):
        assert players.send(ALICE, f"{game} challenge alice bob").status == "applied"
        for word in ("pass", "p", "Pa"):
            refused = reply(players, outbox, ALICE, word)
            assert refused.status == "rejected", word
            assert refused.error == f"{title} has no passing: every turn is a move (resign ends the game).", word
    # and no draw was offered by "p"
    assert not any("offers a draw" in flat(m) for m in outbox.to(BOB))


def test_a_board_ended_by_resignation_or_agreement_marks_nothing_still_to_do(players, outbox):
    """The rules never saw these ends: the diagram must not offer the mover's points
    (2 Dragons' show) or ask for a gap to be filled (Dragons)."""
    players.send(ALICE, "twodragons challenge alice bob -size=9")
    assert reply(players, outbox, ALICE, "D4").status == "applied"
    assert reply(players, outbox, BOB, "resign").status == "applied"
    players.send(ALICE, "twodragons show 101")
    shown = body(outbox.to(ALICE)[-1])
    assert "Game won by alice. Black resigned." in shown
    assert "*" not in shown and "may play" not in shown
    players.send(ALICE, "dragons challenge alice bob")
    for number, move in enumerate(["1s:F4", "1ne:B0", "2sw:F1", "5sw:F4", "1n:B5"]):
        assert reply(players, outbox, (ALICE, BOB)[number % 2], move).status == "applied"
    assert "* a gap that must be filled" in flat(outbox.to(BOB)[-1])  # the position asks for one
    assert players.send(BOB, "dragons move 102 bob bobpw propose").status == "applied"
    assert players.send(ALICE, "dragons move 102 alice alicepw accept").status == "applied"
    players.send(ALICE, "dragons show 102")
    drawn = flat(outbox.to(ALICE)[-1])
    assert "Game drawn" in drawn and "must be filled" not in drawn and "Playable cells" not in drawn
