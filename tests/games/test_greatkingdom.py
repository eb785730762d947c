"""Great Kingdom rules as rules.md settles them, written as positions and moves."""

from dataclasses import replace

import pytest

from pbm.games import IllegalMoveError, InvalidMoveError, Outcome
from pbm.games.greatkingdom import BLUE, EMPTY, GREAT_KINGDOM as GK, NEUTRAL, ORANGE, PASS, territory

from .diagrams import board_from_rows

CODES = {".": EMPTY, "B": BLUE, "O": ORANGE, "#": NEUTRAL}


def position(diagram: str, turn: int = 0, margin: int = 3):
    """A position from rows of B/O/#/. (top row first, as in the mailed diagram)."""
    size, board = board_from_rows(diagram, CODES)
    return replace(GK.initial_state({"size": size, "margin": margin}), board=board, turn=turn)


def play(state, *moves):
    for text in moves:
        state = GK.apply(state, state.turn, GK.parse_move(text, state))
    return state


def rows(state) -> list[str]:
    """The diagram's board rows without coordinates, e.g. ['. B .', ...]."""
    lines = GK.diagram(state).split("\n")[1:state.size + 1]
    return [" ".join(line[4:4 + 3 * state.size].replace("(", " ").replace(")", " ").split())
            for line in lines]


def test_start_position_has_the_neutral_castle_in_the_centre():
    state = GK.initial_state(GK.parse_options({}))
    assert state.size == 9
    assert GK.diagram(state).split("\n")[5].startswith("  5  .  .  .  .  #  .  .  .  .  5")
    assert GK.to_move(state) == 0 and state.stock == (40, 40)


def test_diagram_has_coordinates_on_all_four_sides_and_marks_the_last_move():
    state = play(GK.initial_state({"size": 9}), "D4")
    lines = GK.diagram(state).split("\n")
    assert lines[0].split() == list("ABCDEFGHJ") == lines[10].split()
    assert lines[6] == "  4  .  .  . (B) .  .  .  .  .  4"
    assert all(line.split()[0] == line.split()[-1] for line in lines[1:10])


def test_siege_destroys_an_enemy_castle_and_wins_at_once():
    state = position("""
        . O . . .
        O B O . .
        . . # . .
        . . . . .
        . . . . .""", turn=1)
    after = play(state, "b3")
    assert after.outcome == Outcome(1, "siege: Orange destroyed B4", kind="siege")
    assert rows(after)[:2] == ["o O . . .", "O * O . ."]  # A5 is now Orange land
    with pytest.raises(IllegalMoveError, match="over"):
        play(after, "e1")


def test_edges_and_the_neutral_castle_are_walls_in_a_siege():
    state = position("""
        . . . . .
        . . . . .
        . . # B O
        . . . . .
        . . . . .""", turn=1)
    after = play(state, "d4", "a1", "d2")
    assert after.outcome.winner == 1 and "D3" in after.outcome.reason


def test_enemy_castles_are_checked_first_so_a_double_siege_wins_for_the_placer():
    # Orange's B5 takes Blue A5's last liberty and has none of its own until A5 is destroyed.
    state = position("""
        B . O B .
        O B B . .
        . . # . .
        . . . . .
        . . . . .""", turn=1)
    after = play(state, "b5")
    assert after.outcome == Outcome(1, "siege: Orange destroyed A5", kind="siege")
    assert rows(after)[:2] == ["* O O B .", "O B B . ."]


def test_self_siege_that_destroys_nothing_is_illegal():
    # A5 is not Blue's territory (its region holds Orange's A4), but filling it
    # would leave Orange's A5-A4 without a free neighbour and destroy nothing.
    state = position("""
        . B . . .
        O B . . .
        B . # . .
        . . . . .
        . . . . .""", turn=1)
    with pytest.raises(IllegalMoveError, match="no free space"):
        play(state, "a5")
    assert state.turn == 1  # the turn stays


def test_no_placing_in_the_opponents_territory_but_in_your_own():
    state = position("""
        . B . . .
        B B . . .
        . . # . .
        . . . . .
        . . . . .""", turn=1)
    with pytest.raises(IllegalMoveError, match="inside Blue's territory"):
        play(state, "a5")
    blue_fills_own = play(replace(state, turn=0), "a5")
    assert blue_fills_own.board[4 * 5 + 0] == BLUE


def test_territory_touching_all_four_edges_is_nobodys():
    state = GK.initial_state({"size": 5})
    assert GK.scores(state) == (0, 0)
    state = position("""
        . . B . .
        . . B . .
        . . # . .
        . . B . .
        . . B . .""")
    assert GK.scores(state) == (20, 0)  # both halves touch three edges only


def test_a_region_with_an_enemy_castle_is_not_territory():
    state = position("""
        . O B . .
        B B B . .
        . . # . .
        . . . . .
        . . . . .""")
    assert territory(state.board, 5, BLUE) == set()
    assert GK.scores(state) == (0, 0)


def test_two_passes_blue_needs_three_more_points():
    # Blue 12, Orange 9: Blue wins by 3.
    state = position("""
        . . . B O . . . .
        . . . B O . . . .
        . . . B O . . . .
        B B B B O O O O O
        . . . . # . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .""")
    blue, orange = GK.scores(state)
    assert (blue, orange) == (9, 12)
    ended = play(state, "pass", "pass")
    assert ended.outcome == Outcome(1, "territory after two passes (Blue needs 3 more)", "Blue 9, Orange 12", "score",
                                    5.5)
    state = position("""
        . . . . B O . . .
        . . . . B O . . .
        . . . . B O . . .
        B B B B B O O O O
        . . . . # . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .""")
    assert GK.scores(state) == (12, 9)
    made_it = play(state, "pass", "pass").outcome
    assert (made_it.winner, made_it.margin) == (0, 0.5)  # the margin is the winner's lead, as SGF's B+0.5
    short = play(replace(state, margin=4), "pass", "pass").outcome
    assert (short.winner, short.margin) == (1, 0.5)


def test_a_move_between_passes_resets_the_count():
    state = play(GK.initial_state({"size": 5}), "pass", "a1", "pass")
    assert state.outcome is None and state.passes == 1


def test_no_castles_left_means_pass_only():
    state = replace(GK.initial_state({"size": 9}), stock=(0, 40))
    with pytest.raises(IllegalMoveError, match="no castles left"):
        play(state, "a1")
    assert GK.legal_moves(state) == [PASS]


@pytest.mark.parametrize("text, reason", [
    ("E5", "neutral castle"),
    ("K1", "off the board"),
    ("I3", "skip I"),
    ("hello", "not a point"),
])
def test_bad_points_are_refused_with_the_reason(text, reason):
    state = GK.initial_state({"size": 9})
    with pytest.raises((IllegalMoveError, InvalidMoveError), match=reason):
        play(state, text)


def test_options_are_checked():
    assert GK.parse_options({"size": "7", "margin": "5"}) == {"size": 7, "margin": 5}
    for bad in ({"size": "8"}, {"size": "21"}, {"size": "x"}, {"komi": "7"}):
        with pytest.raises(ValueError):
            GK.parse_options(bad)


@pytest.mark.parametrize("size, centre", [(5, "C3"), (7, "D4"), (19, "K10")])
def test_every_odd_size_from_5_to_19_has_the_neutral_castle_in_its_centre(size, centre):
    state = GK.initial_state(GK.parse_options({"size": str(size)}))
    assert state.size == size and state.stock == (40, 40)
    with pytest.raises(IllegalMoveError, match="neutral castle"):
        play(state, centre)
    for bad in ("3", "4", "20", "21"):
        with pytest.raises(ValueError, match=f"-size must be an odd number from 5 to 19, not {bad}."):
            GK.parse_options({"size": bad})


def test_the_status_names_whose_castles_are_in_hand():
    state = play(GK.initial_state(GK.parse_options({"size": "9"})), "A3", "A2", "pass", "B1")
    assert str(GK.status(state)).endswith("Castles in hand: Blue 39, Orange 38.")
