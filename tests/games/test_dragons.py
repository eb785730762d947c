"""Dragons rules as positions and moves: the tile, fits, auto and gap moves,
loops, the pool, Tantrix scoring, and the seed's own worked examples."""

import random
import re
import textwrap

import pytest

from pbm.games import Consequences, IllegalMoveError, InvalidMoveError, Outcome
from pbm.games.dragons_diagram import draw
from pbm.games.dragons import (
    DIRECTIONS,
    DRAGONS,
    ORIENTATIONS,
    DragonsState,

    edge_colours,
    fitting,
    longest_loop,
    neighbour,
)
from pbm.games.dragons_tiles import main_edges


def orient(name: str) -> int:
    return ORIENTATIONS.index(name)


def state_of(tiles, turn=0, pool=50, tantrix=False) -> DragonsState:
    return DragonsState(tuple((q, r, orient(o)) for (q, r), o in tiles), pool, tantrix, turn)


def play(state, *moves):
    for text in moves:
        state = DRAGONS.apply(state, state.turn, DRAGONS.parse_move(text, state))
    return state


def without_numbers(text: str) -> str:
    return "\n".join(line.translate(str.maketrans("0123456789", " " * 10)).rstrip() for line in text.split("\n"))


# -- the tile -----------------------------------------------------------------

def test_front_and_back_faces_as_rules_md_decodes_them():
    assert edge_colours(orient("F0")) == ("o", "o", "x", "x", "x", "o")
    assert edge_colours(orient("B0")) == ("o", "x", "o", "x", "o", "x")
    assert main_edges(orient("B0"), "x") == {5, 1} and main_edges(orient("B0"), "o") == {2, 4}
    assert main_edges(orient("F0"), "o") == {5, 0, 1}
    assert edge_colours(orient("F1")) == ("o", "o", "o", "x", "x", "x")  # turned clockwise once


def test_all_twelve_orientations_are_different_tiles():
    tiles = {(edge_colours(o), tuple(sorted(main_edges(o, "o"))), tuple(sorted(main_edges(o, "x"))))
             for o in range(12)}
    assert len(tiles) == 12
    # B0, B2, B4 share edge colours but join different edges
    assert edge_colours(orient("B0")) == edge_colours(orient("B2")) == edge_colours(orient("B4"))


@pytest.mark.parametrize("first", range(6))
def test_three_consecutive_sides_two_equal_neighbours_fit_exactly_one(first):
    for colours in (("o", "o", "x"), ("x", "o", "o"), ("o", "o", "o"), ("x", "x", "o"), ("x", "x", "x")):
        constraint = [None] * 6
        for i, c in enumerate(colours):
            constraint[(first + i) % 6] = c
        assert len(fitting(tuple(constraint))) == 1, colours


@pytest.mark.parametrize("first", range(6))
def test_three_consecutive_alternating_sides_fit_three(first):
    for colours in (("o", "x", "o"), ("x", "o", "x")):
        constraint = [None] * 6
        for i, c in enumerate(colours):
            constraint[(first + i) % 6] = c
        fits = fitting(tuple(constraint))
        assert len(fits) == 3 and all(ORIENTATIONS[o].startswith("B") for o in fits)


# -- notation ---------------------------------------------------------------------

def test_cell_names_are_lenient_and_every_name_of_a_cell_works():
    state = play(DRAGONS.initial_state({}), "1ne:F5")  # tile 2 on the NE side of tile 1
    canonical = DRAGONS.parse_move("1se:B2", state)  # the cell SE of tile 1 is S of tile 2
    assert DRAGONS.format_move(canonical) == "1se:B2"
    for text in ("2s:B2", "1SE B2", "2s-b2", " 1 se : b2 ", "2sw.se:B2", "1se/B2"):
        assert DRAGONS.parse_move(text, state) == canonical, text


@pytest.mark.parametrize("text, reason", [
    ("7ne:F0", "There is no tile 7"),
    ("1up:F0", "is not a Dragons move"),
    ("1ne:F9", "is not a Dragons move"),
    ("1nene:F0", "1nene is not next to any tile"),
])
def test_bad_cells_are_refused(text, reason):
    with pytest.raises((InvalidMoveError, IllegalMoveError), match=reason):
        DRAGONS.parse_move(text, DRAGONS.initial_state({}))


def test_a_clash_names_the_edge():
    state = DRAGONS.initial_state({})
    with pytest.raises(IllegalMoveError, match="1ne:F2 does not fit: its SW edge is X but tile 1's NE edge is O"):
        play(state, "1ne:F2")
    with pytest.raises(IllegalMoveError, match="already tile 1|taken"):
        play(play(state, "1ne:F5"), "2sw:F0")


# -- the seed's worked examples ------------------------------------------------------

# The third picture of the seed's auto-move example ("Auto move"), cut from
# seeds/002 at column 54 and dedented: nothing else changed.
SEED_AUTO_RESULT = (
    "        .-x-.\n"
    "       xxxx oo\n"
    "  .-o-' x   o )\n"
    " xxxxxxxx oooo\n"
    "(         o (\n"
    " ooooooooooooo\n"
    "  ) x         )\n"
    " xxxxxxxxxxxxx\n"
    "(       .-x-'\n"
    " ooooooo\n"
    "  `-o-'"
)


def test_seed_auto_move_example_move_a_forces_tile_b():
    # The seed's position: a back tile (B0) above a front tile turned three times (F3).
    position = state_of([((0, 0), "B0"), ((0, 1), "F3")])
    assert without_numbers(draw(position, {})) == textwrap.dedent("""\
          .-o-.
         xxxxxxx
        (       )
         ooooooo
          ) x (
         xxxxxxx
        (       )
         ooooooo
          `-o-'""")
    after = play(position, "1ne:F2")  # move "a"
    assert after.last == (3, 4)  # tile 3 is the move, tile 4 the auto move "b"
    assert after.tiles[3] == (1, 0, orient("F0"))
    drawn = without_numbers(draw(after, {}))
    assert drawn == SEED_AUTO_RESULT
    assert "Last move: tile 3 (F2), (Auto) tile 4 (F0)." in DRAGONS.status(after)
    # The move lists name the auto tile as a move: its cell, from tile 1 (its only
    # neighbour before it then), and its orientation.
    assert DRAGONS.consequences(position, after) == Consequences(auto=("1se:F0",))


def test_seed_gap_move_example_the_move_at_g_is_compulsory():
    # The seed's second picture: tiles F4 (left), F2 (up right) and F1 (below); g is SE of tile 1.
    position = state_of([((0, 0), "F4"), ((1, -1), "F2"), ((0, 1), "F1")])
    g = (1, 0)
    assert position.compulsory() == [g]
    assert sorted(ORIENTATIONS[o] for o in fitting(position.constraint(g))) == ["B0", "B2", "B4"]
    with pytest.raises(IllegalMoveError, match=r"A gap must be filled first: play in 1se \(it fits two or more"):
        play(position, "1n:F0")  # fits there, but the gap comes first
    filled = play(position, "1se:B0")
    assert filled.tiles[3] == (1, 0, orient("B0"))
    assert "*" in DRAGONS.diagram(position)  # the gap is marked
    assert "Must fill a gap: 1se. Orientations that fit: 1se B0 B2 B4." in DRAGONS.status(position)


def test_auto_tiles_are_named_from_the_tiles_before_them():
    # X's tile 5 leaves two gaps that fit one orientation each: tiles 6 and 7 fill them,
    # each named from the lowest-numbered tile beside its cell just before it was placed.
    state = play(DRAGONS.initial_state({}), "1se:B0", "1sw:B2", "1s:B1")
    after = play(state, "4s:B0")
    assert after.last == (5, 6, 7)
    assert DRAGONS.consequences(state, after) == Consequences(auto=("2s:F2", "3s:F4"))
    for number, name in ((6, "2s"), (7, "3s")):
        tile, direction = int(name[0]), name[1:]
        assert after.tiles[number - 1][:2] == neighbour(after.tiles[tile - 1][:2], DIRECTIONS.index(direction))


# -- auto moves ---------------------------------------------------------------------

def test_random_playouts_exercise_auto_move_cascades():
    longest_cascade = 0
    for seed in range(20):
        rng = random.Random(seed)
        state = DRAGONS.initial_state({})
        while state.outcome is None:
            state = DRAGONS.apply(state, state.turn, rng.choice(DRAGONS.legal_moves(state)))
            longest_cascade = max(longest_cascade, len(state.last) - 1)
    assert longest_cascade >= 2


def test_gaps_nothing_fits_stay_empty():
    # Six tiles around an empty cell whose sides all show O: no tile fits it.
    ring = ring_around({(0, 0)}, "o")
    state = state_of(ring)
    assert (0, 0) not in state.at and fitting(state.constraint((0, 0))) == ()
    assert state.compulsory() == []


# -- loops ---------------------------------------------------------------------------

def ring_around(hole: set, colour: str, shift=(0, 0)):
    """Tiles on every cell next to ``hole`` whose ``colour`` region joins the ring."""
    hole = {(q + shift[0], r + shift[1]) for q, r in hole}
    ring = {neighbour(c, d) for c in hole for d in range(6)} - hole
    tiles = []
    for cell in sorted(ring):
        towards = {d for d in range(6) if neighbour(cell, d) in ring}
        assert len(towards) == 2
        o = next(o for o in range(12) if towards <= main_edges(o, colour))
        tiles.append((cell, ORIENTATIONS[o]))
    return tiles


def test_a_three_tile_loop_round_one_vertex_does_not_win():
    state = state_of([((0, 0), "F1"), ((1, -1), "F3")])
    closed = play(state, "1se:F5")
    assert longest_loop(closed, "o", {2}) == 3
    assert closed.outcome is None


def test_a_six_tile_loop_wins():
    ring = ring_around({(0, 0)}, "o")
    last_cell, last_orientation = ring[-1]
    state = state_of(ring[:-1], turn=0)
    won = play(state, f"{state.name(last_cell)}:{last_orientation}")
    assert won.outcome == Outcome(0, "a loop of 6 O tiles", kind="loop")


def test_auto_moves_closing_the_opponents_loop_make_the_opponent_win():
    # Tile 1 (F0) in the centre, ring tiles on its SE, S, SW (backs) and NW sides.
    state = state_of([((0, 0), "F0"), ((1, 0), "B2"), ((0, 1), "B3"), ((-1, 1), "B4"), ((-1, 0), "F2")],
                     turn=1)
    after = play(state, "1ne:F4")  # X's move makes the N cell a gap with one fit: O's loop closes
    assert after.last == (6, 7) and after.tiles[6] == (0, -1, orient("F3"))
    # The ring of six and tile 1's O region: the longest O loop runs through 7 tiles.
    assert after.outcome == Outcome(0, "a loop of 7 O tiles", kind="loop")


def test_both_colours_loop_at_once_longest_wins_equal_draws():
    seven = [((0, 0), "F0"), ((1, 0), "B2"), ((0, 1), "B3"), ((-1, 1), "B4"), ((-1, 0), "F2"),
             ((0, -1), "F3"), ((1, -1), "F4")]  # ring of six plus tile 1: a 7-tile O loop
    x_ring = ring_around({(0, 0)}, "x", shift=(10, 0))
    longer = state_of(seven + x_ring)
    assert DRAGONS._judge(longer, {1, len(seven)}) == Outcome(0, "a loop of 7 O tiles", kind="loop")
    equal = state_of(ring_around({(0, 0)}, "o") + x_ring)
    assert DRAGONS._judge(equal, {0, 6}) == Outcome(None, "both colours closed loops of 6 tiles", kind="loop")
    # Turning every tile half round swaps its colours: the same seven tiles loop in X.
    x_seven = [(cell, f"{o[0]}{(int(o[1]) + 3) % 6}") for cell, o in seven]
    x_longer = state_of(ring_around({(0, 0)}, "o", shift=(10, 0)) + x_seven)
    assert DRAGONS._judge(x_longer, {0, 7}) == Outcome(1, "a loop of 7 X tiles", kind="loop")


def test_the_pool_running_out_is_a_draw():
    state = play(DRAGONS.initial_state({"num_tiles": 3}), "1ne:F5", "1n:F3")
    assert state.outcome == Outcome(None, "all 3 tiles were played without a winning loop", kind="exhaustion")


def test_tantrix_scores_the_best_dragon_doubled_when_closed():
    two = play(DRAGONS.initial_state(DRAGONS.parse_options({"tantrix": "true", "num_tiles": "2"})), "1n:F3")
    assert two.outcome == Outcome(0, "Tantrix scoring, the best dragon", "O 2, X 1", "score", 1)
    three = state_of([((0, 0), "F1"), ((1, -1), "F3")], pool=3, tantrix=True)
    closed = play(three, "1se:F5")
    assert closed.outcome == Outcome(0, "Tantrix scoring, the best dragon", "O 6, X 1", "score", 5)


def test_tantrix_loops_do_not_end_the_game():
    ring = ring_around({(0, 0)}, "o")
    state = state_of(ring[:-1], pool=40, tantrix=True)
    cell, orientation = ring[-1]
    after = play(state, f"{state.name(cell)}:{orientation}")
    assert after.outcome is None


def test_options():
    assert DRAGONS.parse_options({}) == {"num_tiles": 50, "tantrix": False}
    assert DRAGONS.parse_options({"tantrix": "true"}) == {"num_tiles": 40, "tantrix": True}
    for bad in ({"num_tiles": "x"}, {"num_tiles": "1"}, {"size": "9"}):
        with pytest.raises(ValueError):
            DRAGONS.parse_options(bad)


def test_a_full_fifty_tile_board_fits_in_78_columns():
    widest = 0
    for seed in range(10):
        rng = random.Random(seed)
        state = DRAGONS.initial_state({"num_tiles": 50})
        while state.outcome is None:
            state = DRAGONS.apply(state, state.turn, rng.choice(DRAGONS.legal_moves(state)))
        text = DRAGONS.diagram(state)
        widest = max(widest, max(len(line) for line in text.split("\n")))
        for number in range(1, len(state.tiles) + 1):
            assert re.search(rf"(?<!\d){number}(?!\d)", text), number  # every tile drawn, numbered
    assert widest <= 78


def test_the_server_places_tile_1_and_auto_moves_stop_when_the_pool_is_empty():
    start = DRAGONS.initial_state({})
    assert start.tiles == ((0, 0, orient("F0")),) and DRAGONS.to_move(start) == 0  # tile 1, front F0; O first
    # "4s:B0" (tile 5) leaves two gaps that fit one orientation each (tiles 6 and 7,
    # as in test_auto_tiles_are_named_from_the_tiles_before_them): a pool of 6 has
    # room for one of them, a pool of 5 for none. The pool counts tile 1 and auto tiles.
    for pool, placed in ((7, (5, 6, 7)), (6, (5, 6)), (5, (5,))):
        state = play(DRAGONS.initial_state({"num_tiles": pool}), "1se:B0", "1sw:B2", "1s:B1")
        after = play(state, "4s:B0")
        assert after.last == placed and len(after.tiles) == len(placed) + 4
        if pool < 7:
            assert after.outcome == Outcome(None, f"all {pool} tiles were played without a winning loop",
                                            kind="exhaustion")
