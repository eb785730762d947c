"""Go pictures: the board with its coordinates, stones as the state has them,
the last move marked, captures written, and in scoring the dead stones and
each side's area; one clickable point per intersection on play pages."""

import random

from pbm.games.grid import point_name
from pbm.games.go import BLACK, GO, WHITE
from pbm.render import board_svg

from .svgtree import assert_board_root, centre, children, classed, hooks, one, parse, texts


def play(state, *moves):
    for text in moves:
        side = state.turn if GO.to_move(state) is not None else 0
        state = GO.apply(state, side, GO.parse_move(text, state))
    return state


# White surrounds and takes the black stone on E5, then Black plays D4.
CAPTURE = ("E5", "D5", "J9", "F5", "J8", "E4", "J7", "E6", "D4")


def test_a_position_shows_its_stones_captures_and_last_move():
    state = play(GO.initial_state({"size": 9}), *CAPTURE)
    root = parse(board_svg("go", state, move_number=9, last_move="D4", interactive=True))
    assert_board_root(root, 9)
    assert len(children(one(root, "stones", "black"), "circle")) == 4  # J9 J8 J7 D4
    assert len(children(one(root, "stones", "white"), "circle")) == 4  # D5 F5 E4 E6
    points = {e.get("data-point"): e for e in classed(root, "points")[0]}
    assert sorted(points) == sorted(point_name(x, y) for x in range(9) for y in range(9))
    assert centre(one(root, "last-move")) == centre(points["D4"])
    assert "Captured by Black 0, by White 1" in texts(root)
    assert "last move D4" in root.get("aria-label")


def test_stones_sit_on_the_points_the_notation_names():
    state = play(GO.initial_state({"size": 9}), *CAPTURE)
    root = parse(board_svg("go", state, move_number=9, interactive=True))
    points = {e.get("data-point"): centre(e) for e in classed(root, "points")[0]}
    black = {centre(e) for e in children(one(root, "stones", "black"), "circle")}
    assert black == {points[p] for p in ("J9", "J8", "J7", "D4")}


def test_coordinates_are_the_mails_letters_without_i():
    root = parse(board_svg("go", GO.initial_state({"size": 19}), move_number=0))
    coordinates = texts(one(root, "coordinates"))
    assert coordinates.count("J") == 2 and "I" not in coordinates  # above and below
    assert coordinates.count("19") == 2  # left and right
    assert len(children(one(root, "stars"), "circle")) == 9


def test_every_picture_names_its_points_and_interactive_changes_nothing_else():
    state = play(GO.initial_state({"size": 13}), "D4", "K10")
    plain = board_svg("go", state, move_number=2, last_move="K10")
    assert board_svg("go", state, move_number=2, last_move="K10", interactive=True) == plain
    points = hooks(parse(plain), "data-point")
    assert len(points) == len(set(points)) == 169 and {"A1", "N13", "K10"} <= set(points)


def test_a_pass_or_a_scoring_move_marks_no_point():
    state = play(GO.initial_state({"size": 9}), "D4", "pass")
    for last in ("pass", "mark D4", "resign", None):
        assert classed(parse(board_svg("go", state, move_number=2, last_move=last)), "last-move") == []


def walls():
    """Black's wall on column C, White's on G, a black stone inside White's side on H5;
    two passes open the scoring and H5 is marked dead."""
    moves = [m for row in range(1, 10) for m in (f"C{row}", f"G{row}")] + ["H5", "pass", "pass", "mark H5"]
    return play(GO.initial_state({"size": 9}), *moves)


def test_scoring_shades_each_sides_area_and_marks_dead_stones():
    state = walls()
    assert state.phase == "scoring" and len(state.dead) == 1
    root = parse(board_svg("go", state, move_number=22, last_move="mark H5"))
    black_area = children(one(root, "area", "black"), "rect")
    white_area = children(one(root, "area", "white"), "rect")
    assert (len(black_area), len(white_area)) == (18, 18)  # columns A-B; H-J with the dead stone
    black_alive = len(children(one(root, "stones", "black"), "circle"))
    white_alive = len(children(one(root, "stones", "white"), "circle"))
    assert (black_alive + len(black_area), white_alive + len(white_area) + state.komi) == GO.score(state)
    assert len(children(one(root, "dead", "black"), "circle")) == 1
    assert one(root, "dead-marks").get("d")
    assert "Area now: Black 27, White 34.5 (komi 7.5)" in texts(root)


def test_the_final_count_stays_shaded_when_both_confirm():
    state = play(walls(), "done")
    state = GO.apply(state, 1, "done")
    assert state.phase == "over"
    root = parse(board_svg("go", state, move_number=24))
    assert len(children(one(root, "area", "white"), "rect")) == 18
    assert "Final area: Black 27, White 34.5 (komi 7.5)" in texts(root)


def test_a_full_19x19_board_in_scoring_stays_under_60_kb():
    rng = random.Random(19)
    state = GO.initial_state({"size": 19})
    for _ in range(400):
        moves = [m for m in GO.legal_moves(state) if m != "pass"]
        if not moves:
            break
        state = GO.apply(state, state.turn, rng.choice(moves))
    state = play(state, "pass", "pass")
    for index in [i for i, v in enumerate(state.board) if v != 0][:40:8]:
        state = GO.apply(state, 0, ("mark", (index % 19, index // 19)))
    assert sum(1 for v in state.board if v in (BLACK, WHITE)) > 200 and state.dead
    svg = board_svg("go", state, move_number=402, last_move="mark A1", interactive=True)
    parse(svg)
    assert len(svg.encode()) < 60_000
