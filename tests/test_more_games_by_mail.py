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
    assert "Game won by bob (Black): the 2 biggest dragons. White 3, Black 4." in text
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
