"""Every registered game obeys the game interface (OpenSpiel's games_sim_test habit):
random playouts, replay of the log equals the live state, JSON round trips,
parse(format(m)) == m, ``only_move`` agrees with ``legal_moves``, finished games accept
no move, diagrams fit a mail."""

import json
import random

import pytest

from pbm.movelog import LogEntry, replay
from pbm.games import REGISTRY, IllegalMoveError, MoveError

GAMES = sorted(REGISTRY)
SEEDS = range(12)


ENDING_MOVES = ("pass", "done")


def playout(game, options, seed, budget=150, limit=3000):
    """Uniformly random legal moves; after ``budget`` moves, prefer the moves that
    end a game (pass, done) where the game has them, so that every playout ends."""
    rng = random.Random(seed)
    state = game.initial_state(options)
    log = []
    while game.outcome(state) is None and len(log) < limit:
        actors = game.actors(state)
        assert actors, f"{game.name}: an unfinished game must let someone act"
        side = rng.choice(actors)
        moves = game.legal_moves(state)
        assert moves, f"{game.name}: an unfinished game must offer a move"
        endings = [m for m in moves if game.format_move(m) in ENDING_MOVES]
        move = rng.choice(endings if endings and len(log) >= budget else list(moves))
        yield state, side, move, moves
        state = game.apply(state, side, move)
        log.append(LogEntry("move", side, game.format_move(move)))
    yield state, None, None, log


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_playout_obeys_the_interface(name, seed):
    game = REGISTRY[name]
    options = game.parse_options({})
    for state, side, move, extra in playout(game, options, seed):
        data = game.to_json(state)
        assert game.from_json(json.loads(json.dumps(data))) == state
        assert all(len(line) <= 78 for line in game.diagram(state).split("\n"))
        if move is None:
            final, log = state, extra
            break
        for m in extra:
            assert game.parse_move(game.format_move(m), state) == m
        assert game.only_move(state) == (extra[0] if len(extra) == 1 else None)
    assert game.outcome(final) is not None, f"{name} seed {seed} did not finish"
    assert game.to_move(final) is None and game.actors(final) == ()
    assert list(game.legal_moves(final)) == []
    replayed, outcome = replay(game, options, log)
    assert replayed == final
    assert outcome == game.outcome(final)


@pytest.mark.parametrize("name", GAMES)
def test_finished_game_accepts_no_move(name):
    game = REGISTRY[name]
    options = game.parse_options({})
    *_, (final, _, _, log) = playout(game, options, 99)
    probe = game.initial_state(options)
    for move in game.legal_moves(probe)[:5]:
        for side in (0, 1):
            with pytest.raises(IllegalMoveError):
                game.apply(final, side, move)


@pytest.mark.parametrize("name", GAMES)
def test_a_move_off_the_board_is_refused_not_wrapped(name):
    """apply() gets its moves from parse_move, which checks the range; a move built elsewhere
    with a part out of range (or of the wrong shape) is refused too, never wrapped round the
    board, never read from the end of a list, never an IndexError."""
    game = REGISTRY[name]
    state = game.initial_state(game.parse_options({}))
    side = game.actors(state)[0]
    legal = next(m for m in game.legal_moves(state) if isinstance(m, tuple))
    for i in range(len(legal)):
        for wrong in (-1, 99, 400):
            move = legal[:i] + (wrong,) + legal[i + 1:]
            with pytest.raises(IllegalMoveError) as error:
                game.apply(state, side, move)
            assert str(error.value).endswith("."), (move, str(error.value))
    for junk in ((), ("x", "y"), "xyzzy"):
        with pytest.raises(IllegalMoveError):
            game.apply(state, side, junk)


@pytest.mark.parametrize("name", GAMES)
def test_garbage_is_refused_with_a_sentence(name):
    game = REGISTRY[name]
    state = game.initial_state(game.parse_options({}))
    for text in ("", "xyzzy", "99999", "::", "A0"):
        with pytest.raises(MoveError) as error:
            game.parse_move(text, state)
        sentence = str(error.value)
        assert sentence and sentence.endswith(".") and "Traceback" not in sentence


@pytest.mark.parametrize("name", GAMES)
def test_help_text_names_the_game_and_shows_a_board(name):
    game = REGISTRY[name]
    text = game.help_text()
    assert game.title.upper() in text.upper()
    assert all(len(line) <= 78 for line in text.split("\n"))
