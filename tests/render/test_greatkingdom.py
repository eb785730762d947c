"""Great Kingdom pictures: castles of both sides and the neutral castle where the
state has them, each side's territory shaded as the game counts it, the
castles a siege destroyed crossed out, the last castle marked."""

import re

from pbm.games.grid import point_name
from pbm.games.greatkingdom import GREAT_KINGDOM as GK
from pbm.render import board_svg
from pbm.render.svg import num

from .svgtree import assert_board_root, centre, children, classed, one, parse, texts


def play(state, *moves):
    for text in moves:
        state = GK.apply(state, state.turn, GK.parse_move(text, state))
    return state


def castle_centres(group):
    return {tuple(map(float, re.fullmatch(r"translate\((\S+) (\S+)\)", e.get("transform")).groups()))
            for e in children(group, "path")}


# Blue walls off the lower left corner, Orange the upper right one.
CORNERS = ("A3", "J7", "B3", "H7", "C3", "H8", "C2", "H9", "C1", "E7")


def test_castles_territory_and_the_last_castle():
    state = play(GK.initial_state({"size": 9, "margin": 3}), *CORNERS)
    root = parse(board_svg("greatkingdom", state, move_number=10, last_move="E7", interactive=True))
    assert_board_root(root, 10)
    points = {e.get("data-point"): centre(e) for e in classed(root, "points")[0]}
    assert sorted(points) == sorted(point_name(x, y) for x in range(9) for y in range(9))
    assert castle_centres(one(root, "castles", "blue")) == {points[p] for p in ("A3", "B3", "C3", "C2", "C1")}
    orange = {points[p] for p in ("J7", "H7", "H8", "H9", "E7")}
    assert castle_centres(one(root, "castles", "orange")) == orange
    assert castle_centres(one(root, "castles", "neutral")) == {points["E5"]}
    blue_land = {centre(e) for e in children(one(root, "territory", "blue"), "rect")}
    orange_land = {centre(e) for e in children(one(root, "territory", "orange"), "rect")}
    assert blue_land == {points[p] for p in ("A1", "A2", "B1", "B2")}
    assert orange_land == {points[p] for p in ("J8", "J9")}
    assert GK.scores(state) == (4, 2)
    mark = centre(one(root, "last-move"))
    assert abs(mark[0] - points["E7"][0]) + abs(mark[1] - points["E7"][1]) < 0.05
    assert "Territory: Blue 4, Orange 2" in texts(root)
    assert "Castles in hand: Blue 35, Orange 35" in texts(root)


def test_a_siege_crosses_out_the_destroyed_castles():
    state = play(GK.initial_state({"size": 5}), "A2", "A1", "B1")
    assert state.outcome.winner == 0 and state.destroyed == (0,)
    root = parse(board_svg("greatkingdom", state, move_number=3, last_move="B1", interactive=True))
    assert children(one(root, "castles", "orange"), "path") == []
    x, y = next(centre(e) for e in classed(root, "points")[0] if e.get("data-point") == "A1")
    cross = one(root, "destroyed").get("d")  # one cross per destroyed castle, from its upper left
    assert cross.count("M") == 1 and cross.startswith(f"M{num(x - .3)} {num(y - .3)}l")


def test_a_pass_marks_nothing():
    state = play(GK.initial_state({"size": 7}), "C3", "pass")
    assert classed(parse(board_svg("greatkingdom", state, move_number=2, last_move="pass")), "last-move") == []
