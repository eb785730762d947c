"""Two Tigers rules as positions and moves: the board's lines, goat and tiger
moves, leaps and multi-leaps, the ends of the game."""

from dataclasses import replace

import pytest

from pbm.games import Consequences, IllegalMoveError, Outcome
from pbm.games.twotigers import GOATS, TIGER, TIGERS, TWO_TIGERS as TT, parse_name


def position(goats: dict[str, int], tigers: tuple[str, str], turn: int):
    board = [0] * 25
    for point, count in goats.items():
        board[parse_name(point)] = count
    for point in tigers:
        board[parse_name(point)] = TIGER
    start = (tuple(board), turn)
    return replace(TT.initial_state({}), board=tuple(board), turn=turn, seen_once=frozenset({start}))


def play(state, *moves):
    for text in moves:
        state = TT.apply(state, state.turn, TT.parse_move(text, state))
    return state


def moves(state) -> set[str]:
    return {TT.format_move(m) for m in TT.legal_moves(state)}


def test_the_start_position_and_its_diagram():
    state = TT.initial_state({})
    lines = TT.diagram(state).split("\n")
    assert lines[1] == "  5    . --- G5 -- . --- G5 -- .     5"
    assert lines[2] == "       |  \\  |  /  |  \\  |  /  |"
    assert lines[3] == "  4    . --- . --- T --- . --- .     4"
    assert lines[4] == "       |  /  |  \\  |  /  |  \\  |"
    assert state.goats == 20 and TT.to_move(state) == GOATS


def test_goats_have_fourteen_first_moves():
    # b5 and d5 (no diagonals): left, right, down = 3 each; b3 and d3: 4 each.
    assert moves(TT.initial_state({})) == {
        "b5-a5", "b5-c5", "b5-b4", "d5-c5", "d5-e5", "d5-d4",
        "b3-a3", "b3-c3", "b3-b2", "b3-b4", "d3-c3", "d3-e3", "d3-d2", "d3-d4"}


def test_tigers_moves_after_a_goat_steps_next_to_one():
    state = play(TT.initial_state({}), "b3-b4")
    # c4: steps d4, c5, c3 and the leap over b4 to a4; c2: steps b2, d2, c1, c3.
    assert moves(state) == {"c4-d4", "c4-c5", "c4-c3", "c4-a4", "c2-b2", "c2-d2", "c2-c1", "c2-c3"}
    after = play(state, "c4-a4")
    assert after.goats == 19 and after.board[parse_name("b3")] == 4
    assert after.board[parse_name("b4")] == 0


def test_tigers_moves_at_the_start_after_a_far_goat_move():
    state = play(TT.initial_state({}), "d5-e5")
    assert len(moves(state)) == 8  # four steps each, no goat next to a tiger


def test_a_leap_over_a_pile_takes_only_the_top_goat():
    state = position({"b3": 5, "a1": 1}, ("c3", "e5"), TIGERS)
    after = play(state, "c3-a3")
    assert after.board[parse_name("b3")] == 4 and after.goats == 5


def test_multi_leap_and_optional_stop():
    state = position({"b2": 1, "b4": 1, "d4": 3, "a5": 2, "e1": 3}, ("c3", "e5"), TIGERS)
    # c3 has diagonals: over b2 to a1, then a1 cannot go on; over b4 to a5? a5 is taken.
    assert "c3-a1" in moves(state)
    assert "c3-e5" not in moves(state)  # e5 holds the other tiger
    chain = position({"d3": 2, "e4": 1, "d5": 1, "c4": 1, "a1": 5}, ("c3", "a5"), TIGERS)
    assert {"c3-e3", "c3-e3-e5", "c3-e3-e5-c5", "c3-e3-e5-c5-c3"} <= moves(chain)
    after = play(chain, "c3-e3-e5")
    assert after.goats == 8 and after.board[parse_name("e5")] == TIGER
    assert after.board[parse_name("c3")] == 0
    assert TT.consequences(chain, after) == Consequences(captures=2)  # listed "c3-e3-e5 (captures 2)"
    assert TT.consequences(chain, play(chain, "c3-b3")) == Consequences()  # a step captures nothing


def test_a_point_cannot_be_leapt_over_twice_in_a_turn():
    chain = position({"d3": 2, "e4": 1, "d5": 1, "c4": 1, "a1": 5}, ("c3", "a5"), TIGERS)
    with pytest.raises(IllegalMoveError, match="d3 was already leapt over this turn"):
        play(chain, "c3-e3-e5-c5-c3-e3")
    assert "c3-e3-e5-c5-c3-e3" not in moves(chain)


@pytest.mark.parametrize("setup, move, reason", [
    (["b3-c3", "c2-d2"], "c3-c5", "c3 is not adjacent to c5 on this board"),
    ([], "b5-c4", "b5-c4 is not a line on this board (b5 has no diagonals)"),
    ([], "b3-b5", "b3 is not adjacent to b5 on this board"),
    ([], "b5-b3", "b5 is not adjacent to b3 on this board"),
    ([], "c4-c5", "c4 holds no goat"),
    (["b3-b4", "c2-d2"], "b4-c4", "c4 holds a tiger"),
    (["b5-b4", "c2-d2"], "b3-b4", "b4 holds goats"),
    (["b3-b4", "c2-d2"], "b5-b4", "b4 holds goats"),
    (["d5-e5"], "a1-a2", "a1 holds no tiger"),
    (["d5-e5"], "c4-c2", "c4-c2 would leap over c3, which holds no goat"),
    (["d5-e5"], "c4-b5", "c4-b5 is not a line on this board (c4 has no diagonals)"),
    (["b3-b4"], "c4-d4-e4", "c4-d4 is a step, and a step ends the tiger's turn"),
    (["b3-b4"], "c4-b4", "b4 is not empty; a tiger steps to an empty point"),
    (["d5-e5"], "c4-e5", "c4 is not adjacent to e5 on this board"),
])
def test_bad_moves_name_the_reason(setup, move, reason):
    state = play(TT.initial_state({}), *setup)
    with pytest.raises(IllegalMoveError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        play(state, move)


def test_both_tigers_trapped_by_exactly_seven_goats():
    # Tigers in the corner a1, b1: a2, b2, c1 hold them; a3, c3, b3, d1 stop the leaps.
    state = position({"a2": 1, "b2": 1, "c1": 1, "a3": 1, "c3": 1, "b3": 1, "d2": 1},
                     ("a1", "b1"), GOATS)
    assert state.goats == 7
    trapped = play(state, "d2-d1")
    assert trapped.outcome == Outcome(GOATS, "both tigers are trapped", kind="blocked")
    assert TT.legal_moves(trapped) == []


def test_fewer_than_seven_goats_lose():
    state = position({"b2": 1, "e5": 2, "e4": 1, "d5": 1, "a5": 1, "e1": 1}, ("c3", "e3"), TIGERS)
    assert state.goats == 7
    assert play(state, "c3-d3").outcome is None  # a step takes nothing
    won = play(state, "c3-a1")
    assert won.outcome == Outcome(TIGERS, "only 6 goats are left, too few to trap the tigers", kind="capture")


def test_goats_without_a_move_lose():
    full = {p: 1 for p in ("a1 b1 c1 d1 e1 a2 b2 c2 d2 e2 a3 b3 c3 d3 e3 a4 b4 d4 e4 a5 b5 d5 e5").split()}
    state = position(full, ("c4", "c5"), GOATS)
    assert TT.legal_moves(state) == []
    judged = TT._judge(state)
    assert judged.outcome == Outcome(TIGERS, "the goats cannot move", kind="blocked")


def test_threefold_repetition_draws():
    state = play(TT.initial_state({}), "b3-b4")
    cycle = ["c2-c1", "b4-a4", "c1-c2", "a4-b4"]
    state = play(state, *cycle)
    assert state.outcome is None  # second time
    state = play(state, *cycle[:3])
    assert state.outcome is None
    drawn = play(state, cycle[3])
    assert drawn.outcome == Outcome(None, "the same position occurred a third time", kind="repetition")


def test_what_stands_on_each_point_is_named_for_the_keyboard_cursor():
    state = TT.initial_state({})
    contents = TT.point_contents(state)
    assert contents["c4"] == contents["c2"] == "a tiger"
    assert {text for name, text in contents.items() if name not in ("c4", "c2")} == {"a pile of 5 goats"}
