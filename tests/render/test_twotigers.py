"""Two Tigers pictures: the alquerque lines as the game joins its points, the
tigers, the goat piles with their counts, the last move's path, and one
clickable point per point, named a1..e5 as in the notation."""

from dataclasses import replace

from pbm.games.twotigers import TIGER, TIGERS, TWO_TIGERS as TT, lines, parse_name
from pbm.render import board_svg

from .svgtree import assert_board_root, centre, children, classed, one, parse


def play(state, *moves):
    for text in moves:
        state = TT.apply(state, state.turn, TT.parse_move(text, state))
    return state


def picture(state, move_number, last_move=None):
    svg = board_svg("twotigers", state, move_number=move_number, last_move=last_move, interactive=True)
    root = parse(svg)
    points = {e.get("data-point"): centre(e) for e in classed(root, "points")[0]}
    return root, points


def test_the_start_position():
    root, points = picture(TT.initial_state({}), 0)
    assert_board_root(root, 0)
    assert sorted(points) == sorted(f"{c}{r}" for c in "abcde" for r in "12345")
    tigers = children(one(root, "tigers"), "g")
    assert sorted(t.get("data-tiger") for t in tigers) == ["c2", "c4"]
    piles = children(one(root, "goats"), "g")
    assert {p.get("data-pile"): int(p.get("data-goats")) for p in piles} == {"b5": 5, "b3": 5, "d5": 5, "d3": 5}
    assert all(children(p, "text")[0].text == "5" for p in piles)
    assert {centre(children(p, "circle")[0])[0] for p in piles} == {points["b5"][0], points["d5"][0]}
    assert classed(root, "last-move") == [] and classed(root, "last-path") == []


def test_the_lines_are_the_games_lines():
    root, _ = picture(TT.initial_state({}), 0)
    segments = one(root, "lines").get("d").count("M")
    # 40 orthogonal segments and 16 diagonal ones, through every other point
    assert segments == sum(len(directions) for directions in lines().values()) // 2 == 56


def test_a_leap_shows_its_path_and_the_pile_one_goat_lower():
    state = play(TT.initial_state({}), "b3-b4", "c4-a4")
    root, points = picture(state, 2, "c4-a4")
    path = one(root, "last-path").get("points").split()
    assert [tuple(map(float, p.split(","))) for p in path] == [points["c4"], points["a4"]]
    assert centre(one(root, "last-move")) == points["a4"]
    piles = {p.get("data-pile"): int(p.get("data-goats")) for p in children(one(root, "goats"), "g")}
    assert piles["b3"] == 4 and "b4" not in piles and sum(piles.values()) == state.goats == 19


def test_a_leap_chain_is_drawn_point_by_point():
    board = [0] * 25
    for point, count in {"d3": 2, "e4": 1, "d5": 1, "c4": 1, "a1": 5}.items():
        board[parse_name(point)] = count
    for point in ("c3", "a5"):
        board[parse_name(point)] = TIGER
    start = (tuple(board), TIGERS)
    state = replace(TT.initial_state({}), board=tuple(board), turn=TIGERS, seen_once=frozenset({start}))
    after = play(state, "c3-e3-e5-c5")
    root, points = picture(after, 1, "c3-e3-e5-c5")
    path = [tuple(map(float, p.split(","))) for p in one(root, "last-path").get("points").split()]
    assert path == [points[p] for p in ("c3", "e3", "e5", "c5")]
    assert sorted(t.get("data-tiger") for t in children(one(root, "tigers"), "g")) == ["a5", "c5"]
