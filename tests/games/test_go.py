"""Go rules as positions and moves: captures, snapback, suicide, ko and superko,
area scoring with seki and dead stones, the scoring dialogue by mark/done/resume."""

from dataclasses import replace

import pytest

from pbm.games import Consequences, IllegalMoveError, InvalidMoveError, Outcome
from pbm.games.go import BLACK, EMPTY, GO, WHITE
from pbm.games.go_board import area_score
from pbm.games.go_positions import PositionHistory, zobrist

from .diagrams import board_from_rows

CODES = {".": EMPTY, "+": EMPTY, "X": BLACK, "O": WHITE}


def position(diagram: str, turn: int = 0, komi: float = 7.5):
    """A position from rows of X/O/. (top row first, as in the mailed diagram)."""
    size, board = board_from_rows(diagram, CODES)
    keys = zobrist(size)
    digest = 0
    for i, v in enumerate(board):
        digest ^= keys[i][v]
    start = GO.initial_state({"size": size, "komi": komi})
    return replace(start, board=board, turn=turn, hash=digest, history=PositionHistory.start(digest))


def play(state, *moves):
    for text in moves:
        side = state.turn if GO.actors(state) == (state.turn,) else int(text[0])
        text = text if GO.actors(state) == (state.turn,) else text[2:]
        state = GO.apply(state, side, GO.parse_move(text, state))
    return state


def rows(state) -> list[str]:
    lines = GO.diagram(state).split("\n")[1:state.size + 1]
    return [" ".join(line[4:4 + 3 * state.size].replace("(", " ").replace(")", " ").split()) for line in lines]


def test_single_stone_capture():
    state = position("""
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .""")
    after = play(state, "C2")
    assert rows(after)[1:4] == [". . X . .", ". X . X .", ". . X . ."]
    assert after.captures == (1, 0)
    assert GO.diagram(after).split("\n")[-1] == "Captured so far: by Black 1, by White 0"


def test_multi_stone_capture_on_the_edge():
    state = position("""
        . . . . .
        . . . . .
        X X X . .
        O O O X .
        . . . . .""")
    after = play(state, "A1", "E5", "B1", "E4", "C1")
    assert rows(after)[3:] == [". . . X .", "X X X . ."]
    assert after.captures == (3, 0)


def test_snapback():
    state = position("""
        . . . . .
        . . . . .
        X X X . .
        O O O X .
        . . O X .""")
    throw_in = play(state, "A1")  # in atari, on purpose
    taken = play(throw_in, "B1")  # White captures one stone ...
    assert taken.captures == (0, 1)
    snap = play(taken, "A1")  # ... and Black takes back five
    assert snap.captures == (5, 1)
    assert rows(snap)[3:] == [". . . X .", "X . . X ."]


def test_suicide_is_illegal_but_a_capturing_move_is_not():
    state = position("""
        . O . . .
        O . O . .
        . O . . .
        . . . . .
        . . . . .""")
    with pytest.raises(IllegalMoveError, match="B4 would be suicide"):
        play(state, "B4")
    corner = position("""
        . X O . .
        X O . . .
        O . . . .
        . . . . .
        . . . . .""")
    captured = play(corner, "pass", "A5")  # White A5 captures the two black stones
    assert rows(captured)[:2] == ["O . O . .", ". O . . ."]


def test_simple_ko_cannot_be_retaken_at_once():
    state = position("""
        . . . . .
        . . . . .
        . X O . .
        X O . O .
        . X O . .""")
    taken = play(state, "C2")
    with pytest.raises(IllegalMoveError, match="B2 would repeat an earlier position"):
        play(taken, "B2")
    # after a move elsewhere by each, the ko may be retaken
    assert play(taken, "E5", "E4", "B2").captures == (1, 1)


TRIPLE_KO = """
    . X O . . . . . .
    X . X O . . . . .
    . X O . . . . . .
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . .
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . ."""


def test_triple_ko_cycle_is_stopped_by_positional_superko():
    state = position(TRIPLE_KO)
    # Each capture is in a different ko than the one just taken: simple ko allows all six.
    cycle = play(state, "C2", "B8", "C5", "B2", "C8")
    with pytest.raises(IllegalMoveError, match="B5 would repeat an earlier position"):
        play(cycle, "B5")
    assert play(cycle, "J9").turn == 0  # White may play elsewhere


def test_a_tried_move_leaves_no_trace_in_another_line():
    """Superko looks at the positions of the game's own line: a move tried from the
    same position (a preview, a forced-move check) is not part of it."""
    state = position(TRIPLE_KO)
    tried = play(state, "C2")
    played = play(state, "J9")
    assert not played.history.seen_before(tried.hash, played.ply + 10)
    assert played == play(position(TRIPLE_KO), "J9")
    assert play(tried, "B8").history.seen_before(tried.hash, tried.ply + 1)  # its own line still sees it


def test_a_stored_state_holds_its_own_line_of_positions_only():
    """What ``to_json`` stores of the positions seen is the state's own line up to
    itself: not the positions played later on the same line, nor a tried branch's;
    and a state read back refuses the same repetitions as the one stored."""
    state = position(TRIPLE_KO)
    cycle = play(state, "C2", "B8", "C5", "B2", "C8")
    stored = GO.to_json(cycle)
    play(cycle, "J9", "J8")  # the line goes on after it was stored
    play(play(state, "C2"), "J1")  # and a branch is tried from an older position
    assert stored == GO.to_json(cycle)
    assert [ply for ply, _ in stored["history"]] == list(range(cycle.ply + 1))
    assert {int(h, 16): ply for ply, h in stored["history"]} == {
        h: ply for h, ply in cycle.history.first_seen.items() if ply <= cycle.ply}
    read_back = GO.from_json(stored)
    with pytest.raises(IllegalMoveError, match="B5 would repeat an earlier position"):
        play(read_back, "B5")
    assert GO.to_json(play(read_back, "J9")) == GO.to_json(play(cycle, "J9"))


def test_passing_never_breaks_superko():
    state = play(position(TRIPLE_KO), "C2", "pass", "pass")
    assert state.phase == "scoring"


def test_regions_touching_both_colours_are_neutral():
    state = position("""
        X . O X .
        X X O X X
        O O O X .
        . . O X X
        . . O X .""")
    # B5 touches both colours (neutral); E5, E3, E1 are Black's; A1-B2 White's.
    assert area_score(state.board, 5) == (10 + 3, 7 + 4)


def test_seki_both_sides_alive_and_shared_liberties_neutral():
    state = position("""
        . . . . .
        O O O O .
        X X X O .
        . O X O .
        O . X O .""")
    # Neither side can play A2 or B1 without being captured: seki. The five
    # black stones count as alive, A2 and B1 count for nobody.
    assert area_score(state.board, 5) == (5, 9 + 9)
    black_fills = play(state, "A2")
    assert play(black_fills, "B1").captures == (0, 6)  # Black's self-atari is punished
    white_fills = play(state, "pass", "A2")
    assert play(white_fills, "B1").captures == (3, 0)  # and so is White's


def test_scoring_with_dead_stones_marked():
    state = position("""
        . . O . .
        . X O . .
        X X O . X
        . X O . .
        . X O . .""")
    scoring = play(state, "pass", "pass")
    assert scoring.phase == "scoring" and GO.actors(scoring) == (0, 1)
    marked = play(scoring, "1 mark E3")
    assert "o" not in rows(marked)[2] and rows(marked)[2].endswith("x")
    # Black: 5 stones + A1, A2 (A5-B5-A4 also touches White's C5: neutral).
    assert GO.score(marked) == (7, 15 + 7.5)
    once = play(marked, "0 done")
    assert once.confirmed == {0} and once.outcome is None
    remarked = play(once, "0 mark E3")  # toggled back: confirmations cleared
    assert remarked.dead == frozenset() and remarked.confirmed == frozenset()
    final = play(remarked, "1 mark E3", "1 done", "0 done")
    assert final.outcome == Outcome(1, "area scoring", "W+15.5 (Black 7, White 22.5)", "score", 15.5)
    assert GO.actors(final) == ()


def test_the_scoring_diagram_shows_whose_area_each_point_is():
    state = position("""
        . . O . .
        . X O . .
        X X O . X
        . X O . .
        . X O . .""")
    marked = play(state, "pass", "pass", "1 mark E3")
    # b and w: empty points of Black's and White's area; x: Black's dead stone, counted
    # for White with the empty points around it; A5, B5, A4 touch both colours.
    assert rows(marked) == [". . O w w",
                            ". X O w w",
                            "X X O w x",
                            "b X O w w",
                            "b X O w w"]
    assert GO.diagram(marked).split("\n")[-2] == "X Black  O White  x/o dead  b/w Black's/White's area"
    assert GO.score(marked) == (7, 15 + 7.5)
    assert rows(play(marked, "1 done", "0 done")) == rows(marked)  # the final board too
    assert not {"b", "w"} & set(" ".join(rows(state)))  # not while playing


def test_captures_are_what_a_move_did_besides_itself():
    state = position("""
        . . . . .
        . . . . .
        X X X . .
        O O O X .
        . . . . .""")
    after = play(state, "A1", "E5", "B1", "E4")
    assert GO.consequences(after, play(after, "C1")) == Consequences(captures=3)
    assert GO.consequences(state, play(state, "A1")) == Consequences()


def test_resume_restores_play_for_the_player_who_did_not_pass_last():
    state = position(TRIPLE_KO)
    scoring = play(state, "pass", "pass")  # Black passed, then White passed last
    marked = play(scoring, "0 mark A8")
    resumed = play(marked, "1 resume")
    assert resumed.phase == "play" and resumed.turn == 0 and resumed.dead == frozenset()
    assert resumed.passes == 0


@pytest.mark.parametrize("moves, reason", [
    (["A1", "A1"], "A1 is already occupied"),
    (["Z1"], "off the board"),
    (["K3"], "off the board"),
    (["mark A1"], "belongs to the scoring"),
    (["done"], "belongs to the scoring"),
    (["pass", "pass", "0 E5"], "The game is in scoring"),
    (["pass", "pass", "0 mark E5"], "E5 is empty"),
])
def test_bad_moves_name_the_reason(moves, reason):
    state = GO.initial_state({"size": 9})
    with pytest.raises((IllegalMoveError, InvalidMoveError), match=reason):
        play(state, *moves)


def test_diagram_19x19_fits_and_shows_star_points_and_captures():
    state = play(GO.initial_state({"size": 19}), "D4", "Q16")
    lines = GO.diagram(state).split("\n")
    assert max(len(line) for line in lines) <= 78
    assert lines[0].split() == list("ABCDEFGHJKLMNOPQRST") == lines[20].split()
    assert len(lines) == 23
    assert lines[4] == " 16  .  .  .  +  .  .  .  .  .  +  .  .  .  .  . (O) .  .  .  16"
    assert lines[16].split()[4] == "X"
    assert lines[-1] == "Captured so far: by Black 0, by White 0"
    assert GO.status(state) == "Komi 7.5."


def test_options():
    assert GO.parse_options({}) == {"size": 9, "komi": 7.5}
    assert GO.parse_options({"size": "19", "komi": "6.5"}) == {"size": 19, "komi": 6.5}
    for bad in ({"size": "10"}, {"komi": "7.3"}, {"komi": "x"}, {"handicap": "2"}):
        with pytest.raises(ValueError):
            GO.parse_options(bad)


def test_what_stands_on_each_point_is_named_for_the_keyboard_cursor():
    state = GO.initial_state({"size": 9})
    for seat, point in enumerate(("D4", "E5")):
        state = GO.apply(state, seat, GO.parse_move(point, state))
    assert GO.point_contents(state) == {"D4": "a black stone", "E5": "a white stone"}

