"""The generic search player: legal, reproducible moves in every registered game, and
whole games against a random player. Strength and speed are measured by
``benchmarks/players.py``, not here."""

import random

import pytest

from pbm.games import REGISTRY, get_game
from pbm.players import CannotActError, computer_move
from pbm.players.search import acting_side, choose_move

GAMES = sorted(REGISTRY)
# Small boards keep the whole games quick; the search does not care about the size.
SMALL = {"go": {"size": "9"}, "twodragons": {"size": "9"}, "greatkingdom": {"size": "7"},
         "dragons": {"num_tiles": "24"}}
ENDING_MOVES = ("pass", "done")


def random_positions(game, options, seed, count=6):
    """Positions (state, acting side) along a seeded random game, the start included."""
    rng = random.Random(seed)
    state, side, found = game.initial_state(options), 0, []
    for ply in range(400):
        if game.outcome(state) is not None:
            break
        side = acting_side(game, state, 1 - side)
        if ply % 7 == 0:
            found.append((state, side))
        moves = game.legal_moves(state)
        endings = [m for m in moves if game.format_move(m) in ENDING_MOVES]
        state = game.apply(state, side, rng.choice(endings if endings and ply > 120 else moves))
    return found[:: max(1, len(found) // count)]


@pytest.mark.parametrize("name", GAMES)
def test_the_search_returns_a_legal_move_in_random_positions(name):
    game = REGISTRY[name]
    options = game.parse_options(SMALL.get(name, {}))
    for seed in range(2):
        for state, side in random_positions(game, options, seed):
            move = choose_move(game, state, side, seed=seed, iterations=60, seconds=None)
            assert move in game.legal_moves(state)
            game.apply(state, side, move)


@pytest.mark.parametrize("name", GAMES)
def test_a_fixed_seed_and_iteration_budget_give_the_same_move(name):
    game = REGISTRY[name]
    options = game.parse_options(SMALL.get(name, {}))
    state, side = random_positions(game, options, 7)[1]
    moves = {choose_move(game, state, side, seed=42, iterations=150, seconds=None) for _ in range(3)}
    assert len(moves) == 1


def test_the_search_refuses_a_side_that_cannot_act():
    game = get_game("greatkingdom")
    state = game.initial_state(game.parse_options({}))
    with pytest.raises(CannotActError, match="Orange cannot move now"):
        choose_move(game, state, 1, seed=1, iterations=10)
    with pytest.raises(CannotActError, match="Orange has nothing to do"):
        computer_move("greatkingdom", state, 1, seed=1)


def test_a_finished_game_has_no_computer_move():
    game = get_game("twotigers")
    state = game.initial_state({})
    finished = game.from_json({**game.to_json(state), "outcome": {"winner": 0, "reason": "test"}})
    with pytest.raises(CannotActError):
        choose_move(game, finished, 0, seed=1, iterations=10)


def great_kingdom(castles: dict[str, int]):
    """A 5x5 Great Kingdom position with Blue (1) and Orange (2) castles, Blue to move."""
    game = get_game("greatkingdom")
    board = [0] * 25
    board[12] = 3  # the neutral castle
    for name, colour in castles.items():
        x, y = "ABCDE".index(name[0]), int(name[1]) - 1
        board[y * 5 + x] = colour
    data = {**game.to_json(game.initial_state({"size": 5})), "board": board}
    return game, game.from_json(data)


def test_the_search_takes_a_win_at_once():
    game, state = great_kingdom({"D5": 1, "E5": 2})
    move = choose_move(game, state, 0, seed=3, iterations=100, seconds=None)
    assert game.format_move(move) == "E4"


def test_the_search_does_not_hand_the_opponent_a_win_at_once():
    """Blue's castle on A1 has one free point left, B1; every other move lets Orange
    destroy it at once."""
    game, state = great_kingdom({"A1": 1, "A2": 2})
    for seed in range(3):
        move = choose_move(game, state, 0, seed=seed, iterations=60, seconds=None)
        assert game.format_move(move) == "B1"


def dragons_position_with_a_compulsory_gap():
    game = get_game("dragons")
    for seed in range(100):
        rng = random.Random(seed)
        state = game.initial_state(game.parse_options({}))
        while game.outcome(state) is None:
            if state.compulsory():
                return state
            state = game.apply(state, state.turn, rng.choice(game.legal_moves(state)))
    raise AssertionError("no random Dragons game had a compulsory gap")


def test_a_compulsory_dragons_gap_is_filled():
    """While a gap fits two or more orientations, the player must fill one of those gaps."""
    game = get_game("dragons")
    state = dragons_position_with_a_compulsory_gap()
    move = choose_move(game, state, state.turn, seed=5, iterations=80, seconds=None)
    assert game.cell_of(move, state) in set(state.compulsory())


@pytest.mark.parametrize("name", [n for n in GAMES if n != "go"])
@pytest.mark.parametrize("computer", [0, 1])
def test_the_computer_plays_whole_games_against_a_random_player(name, computer):
    game = REGISTRY[name]
    options = game.parse_options(SMALL.get(name, {}))
    rng = random.Random(computer)
    state, plies = game.initial_state(options), 0
    while game.outcome(state) is None:
        assert plies < 1000, f"{name} did not finish"
        (side,) = game.actors(state)
        if side == computer:
            text = computer_move(name, state, side, seed=plies, search_iterations=40, search_seconds=None)
            move = game.parse_move(text, state)
            assert game.format_move(move) == text, "the computer writes the canonical notation"
        else:
            move = rng.choice(game.legal_moves(state))
        assert move in game.legal_moves(state)
        state = game.apply(state, side, move)
        plies += 1
    assert game.legal_moves(state) == []


def test_the_search_plays_go_through_the_scoring_to_the_end():
    """Go is GNU Go's, but the search works on any game: both sides searching, with a
    random player's habit of ending (pass, done) once the board is full enough."""
    game = get_game("go")
    state, side, plies = game.initial_state(game.parse_options({"size": "9"})), 1, 0
    rng = random.Random(11)
    while game.outcome(state) is None:
        assert plies < 600, "the Go game did not finish"
        side = acting_side(game, state, side)
        moves = game.legal_moves(state)
        endings = [m for m in moves if game.format_move(m) in ENDING_MOVES]
        if plies > 20 and endings:
            move = rng.choice(endings)
        else:
            move = choose_move(game, state, side, seed=plies, iterations=30, seconds=None)
        assert move in moves
        state = game.apply(state, side, move)
        plies += 1
    assert game.outcome(state).reason.startswith("area scoring")


@pytest.mark.parametrize("moves, side", [(("K10", "pass"), 0), (("pass",), 1)])
def test_in_2_dragons_the_computer_alone_and_ahead_passes_and_wins(moves, side):
    """After the other side passed, a pass that wins ends the game at once: the computer
    does not fill the board first (on 19x19, 250 moves and as many board mails). White
    leads 1 to 0; or nobody has a piece, and a tie goes to Black."""
    game = get_game("twodragons")
    state = game.initial_state(game.parse_options({"size": "19"}))
    for text in moves:
        state = game.apply(state, state.turn, game.parse_move(text, state))
    assert state.turn == side
    assert computer_move("twodragons", state, side, seed=2, search_seconds=None, search_iterations=50) == "pass"
    assert game.outcome(game.apply(state, side, "pass")).winner == side


def test_in_2_dragons_the_computer_alone_and_behind_plays_on():
    game = get_game("twodragons")
    state = game.initial_state(game.parse_options({"size": "9"}))
    for text in ("A1", "J9", "A2", "J7", "A3", "J5", "pass"):  # White passed, ahead 3 to 2
        state = game.apply(state, state.turn, game.parse_move(text, state))
    assert game.scores(state) == (3, 2) and state.turn == 1
    assert computer_move("twodragons", state, 1, seed=2, search_seconds=None, search_iterations=50) != "pass"
