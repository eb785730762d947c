"""Every registered game has a picture: seeded random games, every position
drawn, read back as XML, with the board hooks of interface.md."""

import random

import pytest

from pbm.games import REGISTRY
from pbm.render import board_svg

from .svgtree import assert_board_root, hooks, parse

ENDINGS = ("pass", "done")


def positions(game, seed, budget=120, limit=400):
    """(state, move number, last move text) along a random game; after ``budget``
    moves the moves that end a game (pass, done) are preferred."""
    rng = random.Random(seed)
    state = game.initial_state(game.parse_options({}))
    last, number = None, 0
    yield state, number, last
    while game.outcome(state) is None and number < limit:
        moves = list(game.legal_moves(state))
        endings = [m for m in moves if game.format_move(m) in ENDINGS]
        move = rng.choice(endings if endings and number >= budget else moves)
        state = game.apply(state, rng.choice(game.actors(state)), move)
        last, number = game.format_move(move), number + 1
        yield state, number, last


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize("seed", range(3))
def test_every_position_of_random_games_is_drawn(name, seed):
    game = REGISTRY[name]
    for state, number, last in positions(game, seed):
        interactive = number % 2 == 0
        root = parse(board_svg(name, state, move_number=number, last_move=last, interactive=interactive))
        assert_board_root(root, number)
        if name == "dragons":
            playable = [] if state.outcome or not interactive else [cell for cell, _ in game.playable(state)]
            assert sorted(hooks(root, "data-cell")) == sorted(playable)
        else:  # every picture names its points (a play page's script makes them play)
            points = hooks(root, "data-point")
            assert len(points) == len(set(points)) == (25 if name == "twotigers" else state.size ** 2)


def test_a_game_without_a_picture_is_refused_in_a_sentence():
    with pytest.raises(ValueError, match="There is no board picture for the game 'chess'"):
        board_svg("chess", None, move_number=0)
