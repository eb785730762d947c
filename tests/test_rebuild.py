"""The move log is the truth: replaying every board's log gives its cached state
(``pbm db rebuild``), for games of every kind played by mail."""

import random

import pytest
from sqlmodel import select

from pbm.db import reading, transaction
from pbm.games import REGISTRY, get_game
from pbm.models import Board, Player

ALICE, BOB = "alice@players.test", "bob@players.test"
USERS = {"alice": ("alicepw", ALICE), "bob": ("bobpw", BOB)}


def board_of(server, board_id: int) -> Board:
    with reading(server.engine) as session:
        return session.get(Board, board_id)


def play_randomly(players, server, board_id: int, moves: int, rng: random.Random) -> None:
    """Up to ``moves`` random legal moves by mail, as the players whose turn it is."""
    for _ in range(moves):
        board = board_of(server, board_id)
        if board.status != "active":
            return
        game = get_game(board.game)
        state = game.from_json(board.state)
        seat = rng.choice(game.actors(state))
        move = game.format_move(rng.choice(list(game.legal_moves(state))))
        with reading(server.engine) as session:
            userid = session.get(Player, board.player_id(seat)).userid
        password, address = USERS[userid]
        result = players.send(address, f"{board.game} move {board_id} {userid} {password} {move}")
        assert result.status == "applied", result.error


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_rebuild_changes_nothing_after_games_by_mail(server, players, name):
    options = {"go": "-size=9", "twodragons": "-size=9", "dragons": "-num_tiles=12"}.get(name, "")
    rng = random.Random(name)
    players.send(ALICE, f"{name} challenge alice bob {options}")
    play_randomly(players, server, 101, 60, rng)
    players.send(BOB, f"{name} challenge bob alice {options}")
    play_randomly(players, server, 102, 5, rng)
    assert players.send(BOB, f"{name} resign 102 bob bobpw").status == "applied"
    assert board_of(server, 102).status == "finished"
    assert server.rebuild() == []


def test_a_rebuild_finds_and_corrects_a_cache_that_differs_from_the_log(server, players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    right = board_of(server, 101).state
    with transaction(server.engine) as session:
        board = session.exec(select(Board).where(Board.id == 101)).one()
        board.state = {**board.state, "board": [0] * 81}
        board.move_count = 7
    assert server.rebuild() == ["board 101: state, move_count differed from the log; corrected"]
    assert board_of(server, 101).state == right and board_of(server, 101).move_count == 1
    assert server.rebuild() == []
