"""2 Dragons rules as positions and moves: sight, cutting through, blobs,
passing, scoring."""

from dataclasses import replace

import pytest

from pbm.games import IllegalMoveError, Outcome
from pbm.games.twodragons import BLACK, EMPTY, TWO_DRAGONS as TD, WHITE

from .diagrams import board_from_rows

CODES = {".": EMPTY, "O": WHITE, "X": BLACK}


def position(diagram: str, turn: int = 0, dragons: int = 2):
    """Rows of O (White) / X (Black) / . , top row first."""
    size, board = board_from_rows(diagram, CODES)
    return replace(TD.initial_state({"size": size, "dragons": dragons}), board=board, turn=turn)


def play(state, *moves):
    for text in moves:
        state = TD.apply(state, state.turn, TD.parse_move(text, state))
    return state


EMPTY9 = "\n".join([". . . . . . . . ."] * 9)


def test_first_pieces_go_anywhere_then_sight_is_needed():
    state = play(TD.initial_state({"size": 9}), "A1", "J9")
    assert play(state, "E5").board[4 * 9 + 4] == WHITE  # diagonal from A1, nothing between
    with pytest.raises(IllegalMoveError, match="B3 is not in sight of your pieces"):
        play(state, "B3")  # a knight's move away: no line


def test_sight_is_blocked_by_a_piece_of_either_colour():
    state = position("""
        . . . . .
        . . . . .
        O X . . .
        . . . . .
        O . . . .""")
    with pytest.raises(IllegalMoveError, match="not in sight"):
        play(state, "E3")  # the black piece at B3 hides White's A3
    own = position("""
        . . . . .
        . . . . .
        O O . . .
        . . . . .
        . . . . .""")
    # An own piece in the way is still "the first piece met": in sight.
    assert play(own, "E3").board[2 * 5 + 4] == WHITE


def test_diagonal_cut_by_two_opponent_pieces_but_not_by_one():
    state = position("""
        . . . . .
        . . . . .
        . X . . .
        . . X . .
        O . . . .""")
    # White A1 -> B2 -> C3 (target): the step from B2 to C3 passes between B3 and C2.
    with pytest.raises(IllegalMoveError, match="cuts through two of Black's pieces at C2-B3"):
        play(state, "C3")
    one = position("""
        . . . . .
        . . . . .
        . X . . .
        . . . . .
        O . . . .""")
    assert play(one, "C3").board[2 * 5 + 2] == WHITE  # a single black piece does not cut
    own = position("""
        . . . . .
        . . . . .
        . O . . .
        . . X . .
        O . . . .""")
    assert play(own, "C3").board[2 * 5 + 2] == WHITE  # nor does one of each colour


@pytest.mark.parametrize("diagram, point, square", [
    (". . . .\n. O O .\n. O . .\n. . . .", "C2", "B2-C3"),  # the new point is the square's lower right
    (". . . .\n. O . .\n. O O .\n. . . .", "C3", "B2-C3"),  # upper right
    (". . . .\n. . O .\n. O O .\n. . . .", "B3", "B2-C3"),  # upper left
    (". . . .\n. O O .\n. . O .\n. . . .", "B2", "B2-C3"),  # lower left
])
def test_no_2x2_blob_in_any_of_the_four_squares(diagram, point, square):
    state = position(diagram)
    with pytest.raises(IllegalMoveError, match=f"{point} would make a 2x2 blob at {square}"):
        play(state, point)


def test_a_2x2_of_mixed_colours_is_fine():
    state = position(". . . .\n. O X .\n. O . .\n. . . .")
    assert play(state, "C2").board[1 * 4 + 2] == WHITE


def test_after_one_pass_the_other_moves_alone_until_passing():
    state = play(TD.initial_state({"size": 9}), "A1", "J9", "pass")
    assert state.turn == 1
    state = play(state, "H9", "G9")  # Black twice in a row
    assert state.turn == 1 and state.outcome is None
    ended = play(state, "pass")
    assert ended.outcome == Outcome(1, "the 2 biggest dragons", "White 1, Black 3", "score", 2)
    assert TD.legal_moves(ended) == []


def test_score_counts_the_n_biggest_dragons_and_ties_go_to_black():
    state = position("""
        O O . X X
        . . . . .
        O . . X X
        O . . . .
        . . . . X""", turn=0)
    assert TD.scores(state) == (4, 4)
    tie = play(state, "pass", "pass")
    assert tie.outcome == Outcome(1, "the 2 biggest dragons (a tie goes to Black)", "White 4, Black 4", "score", 0)
    three = replace(state, dragons=3)
    assert TD.scores(three) == (4, 5)
    one = play(replace(state, dragons=1), "pass", "pass")
    assert one.outcome == Outcome(1, "the biggest dragon (a tie goes to Black)", "White 2, Black 2", "score", 0)


def test_no_legal_point_means_pass_and_the_player_is_told():
    state = position("""
        O X O
        X . X
        O X O""", turn=0)
    assert TD.legal_moves(state) == ["pass"]
    with pytest.raises(IllegalMoveError, match="You have no legal point left and must pass"):
        play(state, "B2")
    assert "White has no legal point and must pass." in TD.status(state)


def test_show_marks_the_legal_points_and_the_last_move():
    state = play(TD.initial_state({"size": 9}), "E5", "A1")
    text = TD.diagram(state, legal=True)
    assert "(X)" in text and "*" in text and "* where the player to move may play" in text
    assert "*" not in TD.diagram(state)


def test_the_legend_names_the_last_moves_own_stone():
    white_moved = play(TD.initial_state({"size": 9}), "E5")
    assert TD.diagram(white_moved).split("\n")[-1] == "O White  X Black  (O) the last move"
    black_moved = play(white_moved, "A1")
    assert TD.diagram(black_moved).split("\n")[-1] == "O White  X Black  (X) the last move"


def test_diagonal_contact_does_not_join_a_dragon():
    # rules.md: a dragon is orthogonally connected; Black's three diagonal pieces are
    # three dragons of 1, so his two biggest count 2, White's one row of 3 counts 3.
    state = position("""
        X . . . .
        . X . . .
        . . X . .
        . . . . .
        O O O . .""")
    assert TD.scores(state) == (3, 2)
    assert TD.scores(replace(state, dragons=3)) == (3, 3)


def test_the_board_is_18_by_18_unless_sized_from_9_to_19():
    assert TD.parse_options({}) == {"size": 18, "dragons": 2}
    assert TD.initial_state(TD.parse_options({})).size == 18
    assert TD.parse_options({"size": "9", "dragons": "3"}) == {"size": 9, "dragons": 3}
    assert TD.parse_options({"size": "19"})["size"] == 19
    for bad, reason in ((8, "-size must be a number from 9 to 19, not 8."),
                        (20, "-size must be a number from 9 to 19, not 20.")):
        with pytest.raises(ValueError, match=reason):
            TD.parse_options({"size": str(bad)})
    assert TD.to_move(TD.initial_state(TD.parse_options({}))) == 0  # White moves first


def test_a_game_that_is_over_says_nothing_of_passing():
    state = TD.initial_state({"size": 9})
    state = TD.apply(state, 0, TD.parse_move("pass", state))
    assert "has passed" in TD.status(state)
    assert "has passed" not in TD.status(state, over=True)  # resigned meanwhile, say
