"""2 Dragons pictures: the pieces where the state has them, the last piece
marked, and each side's scoring dragons (the biggest groups, as many as the
game counts) highlighted, adding up to the game's own score."""

from pbm.games.grid import point_name
from pbm.games.twodragons import TWO_DRAGONS as TD
from pbm.render import board_svg

from .svgtree import assert_board_root, centre, children, classed, one, parse, texts


def play(state, *moves):
    for text in moves:
        state = TD.apply(state, state.turn, TD.parse_move(text, state))
    return state


# White: C3-C4-D4 (3), C7-C8 (2), A1 (1). Black: G7-G6-F6 (3), G3-G2 (2), J9 (1).
MOVES = ("C3", "G7", "C4", "G6", "D4", "F6", "C7", "G3", "C8", "G2", "A1", "J9")


def test_the_two_biggest_dragons_of_each_side_are_highlighted():
    state = play(TD.initial_state({"size": 9, "dragons": 2}), *MOVES)
    root = parse(board_svg("twodragons", state, move_number=12, last_move="J9", interactive=True))
    assert_board_root(root, 12)
    points = {e.get("data-point"): centre(e) for e in classed(root, "points")[0]}
    white = {centre(e) for e in children(one(root, "pieces", "white"), "circle")}
    black = {centre(e) for e in children(one(root, "pieces", "black"), "circle")}
    assert white == {points[p] for p in ("C3", "C4", "D4", "C7", "C8", "A1")}
    assert black == {points[p] for p in ("G7", "G6", "F6", "G3", "G2", "J9")}
    white_dragons = {centre(e) for e in children(one(root, "dragon", "white"), "circle")}
    black_dragons = {centre(e) for e in children(one(root, "dragon", "black"), "circle")}
    assert white_dragons == {points[p] for p in ("C3", "C4", "D4", "C7", "C8")}
    assert black_dragons == {points[p] for p in ("G7", "G6", "F6", "G3", "G2")}
    assert (len(white_dragons), len(black_dragons)) == TD.scores(state) == (5, 5)
    assert centre(one(root, "last-move")) == points["J9"]
    assert "Scoring dragons: White 3+2 = 5; Black 3+2 = 5" in texts(root)


def test_with_one_dragon_counted_only_the_biggest_is_highlighted():
    state = play(TD.initial_state({"size": 9, "dragons": 1}), *MOVES)
    root = parse(board_svg("twodragons", state, move_number=12))
    assert len(children(one(root, "dragon", "white"), "circle")) == TD.scores(state)[0] == 3


def test_the_default_board_has_a_point_for_every_name():
    state = TD.initial_state(TD.parse_options({}))
    root = parse(board_svg("twodragons", state, move_number=0, interactive=True))
    names = [e.get("data-point") for e in classed(root, "points")[0]]
    assert sorted(names) == sorted(point_name(x, y) for x in range(18) for y in range(18))
    assert "S18" in names and "T1" not in names
    assert classed(root, "last-move") == []
