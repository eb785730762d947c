"""Every move list shows what a move did besides itself (issue 9, items 2 and 11):
Dragons' automatic tiles, marked (Auto), under the move that caused them, and the
stones or goats a Go or Two Tigers move captured. The lists: the board mail's
recent moves, the history mail, the board page, its .txt and .json, the play page."""

import re

import pytest

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"


def reply(players, outbox, sender, move):
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    return players.send(sender, "Re: " + str(last["Subject"]), f"{move}\n",
                        to=last["Reply-To"].addresses[0].addr_spec)


def play_game(players, outbox, challenge, moves):
    assert players.send(ALICE, challenge).status == "applied"
    for number, move in enumerate(moves):
        result = reply(players, outbox, (ALICE, BOB)[number % 2], move)
        assert result.status == "applied", (move, result.error)


def page_text(html: str) -> str:
    """What a reader sees of a page: the words, without tags."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def move_lists(players, outbox, client, server, game):
    """alice's view of board 101 in every move list: the text ones, the pages (as
    their words) and the JSON."""
    from pbm.db import reading
    from pbm.models import Board

    board_mail = body(outbox.to(ALICE)[-1])
    players.send(ALICE, f"{game} history 101")
    with reading(server.engine) as session:
        token = session.get(Board, 101).token(0)
    texts = {"board mail": board_mail, "history": body(outbox.to(ALICE)[-1]),
             ".txt": client.get("/games/101.txt").get_data(as_text=True)}
    pages = {"board page": page_text(client.get("/games/101").get_data(as_text=True)),
             "play page": page_text(client.get(f"/play/{token}").get_data(as_text=True))}
    return texts, pages, client.get("/games/101.json").json["moves"]


# A game, its moves, and how the move that did more shows in the lists: as text
# lines, as the words of a page, and in the JSON entry of that move.
GAMES = {
    "dragons auto tiles": (
        "dragons challenge alice bob", ["1se:B0", "1sw:B2", "1s:B1", "4s:B0"],
        "   4. bob          4s:B0\n"
        "                   (Auto) 2s:F2\n"
        "                   (Auto) 3s:F4\n",
        "bob: 4s:B0 (Auto) 2s:F2 (Auto) 3s:F4",
        {"move": "4s:B0", "captures": 0, "auto": ["2s:F2", "3s:F4"]}),
    "go captures": (
        "go challenge alice bob", ["A2", "A1", "B2", "B1", "C1"],
        "   5. alice        C1 (captures 2)\n",
        "alice: C1 (captures 2)",
        {"move": "C1", "captures": 2, "auto": []}),
    "two tigers captures": (
        "twotigers challenge alice bob", ["b3-b4", "c4-a4"],
        "   2. bob          c4-a4 (captures 1)\n",
        "bob: c4-a4 (captures 1)",
        {"move": "c4-a4", "captures": 1, "auto": []}),
}


@pytest.mark.parametrize("case", GAMES)
def test_every_move_list_shows_what_a_move_did_besides_itself(players, outbox, client, server, case):
    challenge, moves, lines, words, entry = GAMES[case]
    play_game(players, outbox, challenge, moves)
    texts, pages, json_moves = move_lists(players, outbox, client, server, challenge.split()[0])
    for name, text in texts.items():
        assert lines in text, name
    for name, text in pages.items():
        assert words in text, name
    assert {key: json_moves[-1][key] for key in entry} == entry
    assert (json_moves[0]["captures"], json_moves[0]["auto"]) == (0, [])


def test_a_move_that_did_nothing_more_is_listed_alone(players, outbox, client, server):
    play_game(players, outbox, "go challenge alice bob", ["D4", "E5"])
    texts, pages, _ = move_lists(players, outbox, client, server, "go")
    assert "   2. bob          E5\n" in texts["board mail"] and "captures" not in texts["history"]
    assert "(Auto)" not in pages["board page"]


def test_the_mail_of_a_compulsory_gap_move_names_the_gaps_and_what_fits(players, outbox):
    play_game(players, outbox, "dragons challenge alice bob", ["1se:B0", "1sw:B2"])
    gap = " ".join(body(outbox.to(ALICE)[-1]).split())
    assert "Must fill a gap: 1s. Orientations that fit: 1s B1 B3 B5." in gap
    assert "* a gap that must be filled" in gap
