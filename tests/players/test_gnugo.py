"""GNU Go as the computer's Go player: legal answers through pbm's rules, a whole game
with scoring, and one typed error for a missing, crashing, hanging or confused engine
(fake engines are small script files)."""

import random
from pathlib import Path

import pytest

from pbm.games import get_game
from pbm.players import EngineError, available, computer_can_act, computer_move
from pbm.players.gnugo import DEFAULT_PATH, dead_stones, genmove

GO = get_game("go")
needs_gnugo = pytest.mark.skipif(
    not available(DEFAULT_PATH),
    reason=f"GNU Go is not installed at {DEFAULT_PATH} (Debian package gnugo; .ci/run installs it)")


def fake_engine(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-gnugo"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def play(state, texts):
    """Apply move texts alternately from Black; return the state and the (seat, text) log."""
    log = []
    for text in texts:
        seat = state.turn
        state = GO.apply(state, seat, GO.parse_move(text, state))
        log.append((seat, text))
    return state, log


@needs_gnugo
def test_genmove_answers_a_legal_move_after_some_moves():
    rng = random.Random(4)
    state = GO.initial_state(GO.parse_options({"size": "9"}))
    log = []
    for _ in range(12):
        move = rng.choice([m for m in GO.legal_moves(state) if m != "pass"])
        log.append((state.turn, GO.format_move(move)))
        state = GO.apply(state, state.turn, move)
    text = genmove(DEFAULT_PATH, 1, 9, 7.5, log, state.turn, timeout=30)
    move = GO.parse_move(text, state)
    assert move in GO.legal_moves(state)
    assert GO.format_move(move) == text


@needs_gnugo
def test_the_computer_marks_the_dead_stones_then_confirms():
    """Black walls off columns A-C, White columns G-J; a white stone in Black's area and a
    black one in White's are dead. After two passes the computer (Black) marks both, one
    group per answer, then confirms."""
    state = GO.initial_state(GO.parse_options({"size": "9"}))
    texts = []
    for row in range(1, 10):
        texts += [f"D{row}", f"F{row}"]
    texts += ["H8", "B2", "pass", "pass"]
    state, log = play(state, texts)
    assert state.phase == "scoring"
    assert dead_stones(DEFAULT_PATH, 1, 9, 7.5, log, timeout=30) == {"B2", "H8"}
    answers = []
    while computer_can_act("go", state, 0):
        text = computer_move("go", state, 0, seed=1, moves=log)
        answers.append(text)
        state = GO.apply(state, 0, GO.parse_move(text, state))
        log.append((0, text))
    assert answers == ["mark B2", "mark H8", "done"]
    assert state.dead == {1 * 9 + 1, 7 * 9 + 7}


@needs_gnugo
def test_a_whole_9x9_game_against_gnugo_level_1_reaches_an_outcome():
    """GNU Go (Black) against a random player who passes once GNU Go has passed and then
    confirms; every move goes through pbm's rules, the scoring included."""
    rng = random.Random(9)
    state = GO.initial_state(GO.parse_options({"size": "9"}))
    log, resigned = [], False
    while GO.outcome(state) is None and not resigned:
        assert len(log) < 400, "the game did not finish"
        if computer_can_act("go", state, 0):
            side, text = 0, computer_move("go", state, 0, seed=len(log), moves=log, gnugo_level=1)
            resigned = text == "resign"
            if resigned:
                continue
        elif state.phase == "play":
            stones = [m for m in GO.legal_moves(state) if m != "pass"]
            gnugo_passed = log[-1] == (0, "pass")
            side, text = 1, "pass" if gnugo_passed or not stones else GO.format_move(rng.choice(stones))
        else:
            side, text = 1, "done"
        state = GO.apply(state, side, GO.parse_move(text, state))
        log.append((side, text))
    assert resigned or GO.outcome(state).reason == "area scoring"


def test_a_missing_engine_is_reported(tmp_path):
    missing = str(tmp_path / "no-gnugo")
    assert not available(missing)
    with pytest.raises(EngineError, match="could not be started"):
        genmove(missing, 1, 9, 7.5, [], 0, timeout=5)


def test_a_crashing_engine_is_reported(tmp_path):
    engine = fake_engine(tmp_path, "read line\necho '=1'\necho\nexit 3")
    assert available(engine)
    with pytest.raises(EngineError, match="exited with status 3 before answering 'clear_board'"):
        genmove(engine, 1, 9, 7.5, [(0, "D4")], 1, timeout=5)


def test_a_hanging_engine_is_killed_after_the_timeout(tmp_path):
    pid_file = tmp_path / "pid"
    engine = fake_engine(tmp_path, f"echo $$ > {pid_file}\nexec sleep 600")
    with pytest.raises(EngineError, match="did not answer within 0.5 seconds"):
        genmove(engine, 1, 9, 7.5, [], 0, timeout=0.5)
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists(), "the engine process was killed and reaped"


def test_an_engine_that_talks_nonsense_is_reported(tmp_path):
    engine = fake_engine(tmp_path, "cat > /dev/null\necho 'hello, I am not GTP'")
    with pytest.raises(EngineError, match="before answering 'boardsize 9'"):
        genmove(engine, 1, 9, 7.5, [], 0, timeout=5)


def test_an_engine_that_refuses_a_move_is_reported(tmp_path):
    engine = fake_engine(tmp_path, "cat > /dev/null\nprintf '=1\\n\\n=2\\n\\n?3 illegal move\\n\\n'")
    with pytest.raises(EngineError, match="refused 'play black D4': illegal move"):
        genmove(engine, 1, 9, 7.5, [(0, "D4")], 1, timeout=5)



def test_an_answer_the_rules_refuse_is_reported(tmp_path):
    """An engine that answers an occupied point: the computer's move is never illegal."""
    engine = fake_engine(tmp_path, "cat > /dev/null\nprintf '=1\\n\\n=2\\n\\n=3\\n\\n=4 D4\\n\\n'")
    state, log = play(GO.initial_state(GO.parse_options({"size": "9"})), ["D4"])
    with pytest.raises(EngineError, match="GNU Go answered D4, which the rules refuse: D4 is already occupied"):
        computer_move("go", state, 1, seed=1, moves=log, gnugo_path=engine)


def test_an_engine_too_slow_at_its_level_is_asked_again_at_level_1(tmp_path):
    """GNU Go at level 10 takes about 10 seconds on a crowded 19x19 board: a move that times
    out is asked again at level 1 (milliseconds), so a strong setting never stalls a game."""
    engine = fake_engine(tmp_path, 'if [ "$4" != 1 ]; then exec sleep 600; fi\n'
                                   'while read n command rest; do echo "=$n$([ "$command" = genmove ] && echo " E5")";'
                                   ' echo; [ "$command" = quit ] && exit 0; done')
    state = GO.initial_state(GO.parse_options({"size": "9"}))
    assert computer_move("go", state, 0, seed=1, gnugo_path=engine, gnugo_level=10, gnugo_timeout=0.5) == "E5"
    with pytest.raises(EngineError, match="did not answer within 0.5 seconds"):  # level 1 too slow: no retry
        computer_move("go", state, 0, seed=1, gnugo_path=fake_engine(tmp_path, "exec sleep 600"), gnugo_level=1,
                      gnugo_timeout=0.5)
