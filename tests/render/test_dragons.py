"""Dragons pictures: every tile with its number and orientation, the last
move's tile and the tiles it placed automatically marked, the cells the player
to move may fill outlined (``data-cell`` on play pages), cells nothing fits
greyed, and the previews of the orientations that fit a cell."""

import random
import re

import pytest

from pbm.games import InvalidMoveError
from pbm.games.dragons import DRAGONS, ORIENTATIONS, DragonsState, fitting, neighbour
from pbm.render import board_svg, dragons_orientation_choices
from pbm.render.dragons import centre as cell_centre

from .svgtree import NS, assert_board_root, children, classed, hooks, one, parse, texts


def state_of(tiles, turn=0) -> DragonsState:
    return DragonsState(tuple((q, r, ORIENTATIONS.index(o)) for (q, r), o in tiles), 50, False, turn)


def play(state, *moves):
    for text in moves:
        state = DRAGONS.apply(state, state.turn, DRAGONS.parse_move(text, state))
    return state


def polygon_centre(element) -> tuple[float, float]:
    pairs = [tuple(map(float, p.split(","))) for p in element.get("points").split()]
    return (round(sum(x for x, _ in pairs) / 6, 2), round(sum(y for _, y in pairs) / 6, 2))


def rounded(point) -> tuple[float, float]:
    return round(point[0], 2), round(point[1], 2)


def tiles(root) -> dict[int, tuple[str, tuple[float, float]]]:
    """Tile number -> (orientation, centre) as drawn; each turned as its orientation says."""
    drawn = {}
    for e in root.iter(NS + "g"):
        if e.get("data-tile"):
            x, y, turn = re.fullmatch(r"translate\((\S+) (\S+)\)(?: rotate\((\d+)\))?",
                                      e.get("transform")).groups()
            orientation = e.get("data-tile-orientation")
            assert int(turn or 0) == 60 * (ORIENTATIONS.index(orientation) % 6)
            drawn[int(e.get("data-tile"))] = (orientation, (float(x), float(y)))
    return drawn


def test_the_first_tile_and_the_six_cells_around_it():
    state = DRAGONS.initial_state({})
    root = parse(board_svg("dragons", state, move_number=0, interactive=True))
    assert_board_root(root, 0)
    assert tiles(root) == {1: ("F0", (0, 0))}
    assert sorted(hooks(root, "data-cell")) == sorted(["1n", "1ne", "1se", "1s", "1sw", "1nw"])
    assert "1" in texts(one(root, "numbers"))
    plain = parse(board_svg("dragons", state, move_number=0))
    assert hooks(plain, "data-cell") == [] and len(children(one(plain, "playable"), "polygon")) == 6


def test_the_seeds_auto_move_is_marked_as_automatic():
    # The seed's example: move "a" (1ne:F2) forces tile "b" (tile 4) into the gap below it.
    after = play(state_of([((0, 0), "B0"), ((0, 1), "F3")]), "1ne:F2")
    assert after.last == (3, 4)
    root = parse(board_svg("dragons", after, move_number=1, last_move="1ne:F2"))
    drawn = tiles(root)
    assert {n: o for n, (o, _) in drawn.items()} == {1: "B0", 2: "F3", 3: "F2", 4: "F0"}
    assert polygon_centre(one(root, "last-move")) == rounded(drawn[3][1])
    assert [polygon_centre(p) for p in children(one(root, "auto"), "polygon")] == [rounded(drawn[4][1])]
    assert "O orange, X blue; tiles 4 of 50; placed automatically: 4" in texts(root)
    assert rounded(drawn[4][1]) == rounded(cell_centre((1, 0)))


def test_a_compulsory_gap_is_the_only_cell_and_offers_its_three_fits():
    # The seed's gap example: g (1se) must be filled; the back tile fits three ways.
    position = state_of([((0, 0), "F4"), ((1, -1), "F2"), ((0, 1), "F1")])
    root = parse(board_svg("dragons", position, move_number=3, interactive=True))
    assert hooks(root, "data-cell") == ["1se"]
    assert "a gap must be filled" in texts(root)[-1]
    choices = dragons_orientation_choices(position, "1se")
    assert [name for name, _ in choices] == ["B0", "B2", "B4"]
    for name, svg in choices:
        preview = parse(svg)
        assert preview.get("data-orientation") == name and preview.get("class") == "orientation"
        assert preview.get("aria-label") == f"1se:{name}"
        assert hooks(preview, "data-cell") == [] and hooks(preview, "data-orientation") == [name]
    assert dragons_orientation_choices(position, "1n") == []  # fits, but the gap comes first
    assert dragons_orientation_choices(position, "2s") == choices  # another name of 1se


def test_a_taken_cell_offers_nothing_and_a_bad_name_is_explained():
    state = DRAGONS.initial_state({})
    assert dragons_orientation_choices(state, "1n.s") == []  # tile 1's own cell
    with pytest.raises(InvalidMoveError, match="There is no tile 9"):
        dragons_orientation_choices(state, "9n")


def test_cells_and_choices_are_the_games_own_in_random_games():
    for seed in range(3):
        rng = random.Random(seed)
        state = DRAGONS.initial_state({})
        while state.outcome is None:
            state = DRAGONS.apply(state, state.turn, rng.choice(DRAGONS.legal_moves(state)))
            root = parse(board_svg("dragons", state, move_number=len(state.tiles), interactive=True))
            playable = dict(DRAGONS.playable(state)) if state.outcome is None else {}
            assert sorted(hooks(root, "data-cell")) == sorted(playable)
            assert len(tiles(root)) == len(state.tiles)
            if playable:
                cell = rng.choice(sorted(playable))
                assert [name for name, _ in dragons_orientation_choices(state, cell)] == playable[cell]


def test_a_cell_nothing_fits_is_greyed_and_not_offered():
    # Four tiles show the empty centre O on its N, NE, SE and S sides: a tile has
    # three O edges in a row (front) or alternating ones (back), so none fits.
    position = DragonsState((), 50, False, 0)
    for d in range(4):
        cell = neighbour((0, 0), d)
        wanted = list(position.constraint(cell))
        wanted[(d + 3) % 6] = "o"
        position = position.placed(cell, fitting(tuple(wanted))[0])
    assert fitting(position.constraint((0, 0))) == ()
    root = parse(board_svg("dragons", position, move_number=4, interactive=True))
    grey = [polygon_centre(p) for p in children(one(root, "dead-cells"), "polygon")]
    assert rounded(cell_centre((0, 0))) in grey
    assert position.name((0, 0)) not in hooks(root, "data-cell")
    assert dragons_orientation_choices(position, position.name((0, 0))) == []


def test_a_finished_game_outlines_no_cells():
    state = play(DRAGONS.initial_state({"num_tiles": 3}), "1ne:F5", "1n:F3")
    assert state.outcome is not None
    root = parse(board_svg("dragons", state, move_number=2, last_move="1n:F3", interactive=True))
    assert hooks(root, "data-cell") == [] and children(one(root, "playable"), "polygon") == []
