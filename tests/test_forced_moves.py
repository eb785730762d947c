"""Forced moves are the server's job (pbmserv's ForcedMove): when the rules leave a
player exactly one move, the server plays it at once and the mail says so."""

import random

from sqlmodel import select

from pbm.db import reading
from pbm.games import get_game
from pbm.models import Board, MoveRecord

from .conftest import body

ALICE, BOB = "alice@players.test", "bob@players.test"
PLAYERS = ({"userid": "alice", "password": "alicepw", "address": ALICE},
           {"userid": "bob", "password": "bobpw", "address": BOB})


def test_a_player_left_only_a_pass_gets_it_played_for_them(server, players, outbox):
    players.send(ALICE, "twodragons challenge alice bob -size=9")
    rng = random.Random(0)
    forced_mail = None
    for _ in range(120):  # 2 Dragons on 9x9: by move 75 one side has no point left in sight
        with reading(server.engine) as session:
            board = session.get(Board, 101)
        game = get_game("twodragons")
        state = game.from_json(board.state)
        seat = game.to_move(state)
        points = [m for m in game.legal_moves(state) if m != "pass"]
        assert points, "the server should have passed for a player with no point"
        me = PLAYERS[seat]
        move = game.format_move(rng.choice(points))
        outbox.new()
        assert players.send(me["address"], f"twodragons move 101 {me['userid']} {me['password']} {move}"
                            ).status == "applied"
        forced_mail = next((m for m in outbox.new() if "had no other move" in body(m)), None)
        if forced_mail:
            break
    assert forced_mail is not None, "no forced pass happened"
    with reading(server.engine) as session:
        last = session.exec(select(MoveRecord).where(MoveRecord.board_id == 101)
                            .order_by(MoveRecord.number.desc())).first()
    assert (last.kind, last.text) == ("auto", "pass")
    who = PLAYERS[last.seat]["userid"]
    assert f"{who} had no other move: the server played pass for them (move {last.number})." in body(forced_mail)
    assert f"{who:<12} pass (forced)" in body(forced_mail)  # in the list of recent moves
    assert server.rebuild() == []


def test_a_game_ended_by_a_forced_pass_says_so_then_gives_the_ratings(server, players, outbox):
    """2 Dragons: after one side is left only a pass, the other plays alone until it
    too has no point; the server's pass for it ends the game."""
    players.send(ALICE, "twodragons challenge alice bob -size=9")
    rng = random.Random(0)
    game = get_game("twodragons")
    for _ in range(200):
        with reading(server.engine) as session:
            board = session.get(Board, 101)
        if board.status != "active":
            break
        state = game.from_json(board.state)
        me = PLAYERS[game.to_move(state)]
        move = game.format_move(rng.choice([m for m in game.legal_moves(state) if m != "pass"]))
        outbox.new()
        assert players.send(me["address"], f"twodragons move 101 {me['userid']} {me['password']} {move}"
                            ).status == "applied"
    assert board.status != "active", "the game did not end"
    with reading(server.engine) as session:
        last = session.exec(select(MoveRecord).where(MoveRecord.board_id == 101)
                            .order_by(MoveRecord.number.desc())).first()
    assert (last.kind, last.text) == ("auto", "pass")
    final = next(body(m) for m in outbox.new() if m["To"] == ALICE)
    who = PLAYERS[last.seat]["userid"]
    assert (f"{who} had no other move: the server played pass for them (move {last.number}).\n"
            "\nRatings in 2 Dragons (? = provisional") in final
