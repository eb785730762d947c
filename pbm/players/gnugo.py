"""GNU Go as the computer's Go player, over GTP.

Each question starts one GNU Go process (``--mode gtp --chinese-rules
--positional-superko``), sends the whole conversation at once (board size,
the game's moves so far, then the question, then ``quit``) and reads the
answers. A process per question keeps nothing alive between moves and makes
the time limit simple: the process, and anything it started, is killed when
the limit passes, and always reaped. Replaying the moves (rather than
setting up the stones) gives GNU Go the history that positional superko
needs; GNU Go answers in a few milliseconds per move at low levels.

In pbm's scoring phase (after two passes) the computer marks the groups
GNU Go judges dead (``final_status_list dead``), one group per answer, and
confirms (``done``) once the marking agrees with GNU Go's judgement; it never
resumes play. If the opponent marks differently, the computer marks back;
the opponent can ``resume`` to settle the question on the board.

Every failure (engine missing, crashed, too slow, or refusing the game's
moves) raises EngineError, whose text is one plain sentence.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence

from pbm.games.base import MoveError
from pbm.games.grid import point_name
from pbm.games.go import EMPTY, GO, PASS, PLAY, SCORING, GoState
from pbm.games.go_board import group_and_liberties

DEFAULT_PATH = "/usr/games/gnugo"
COLOURS = ("black", "white")


class EngineError(RuntimeError):
    """GNU Go could not give an answer; ``str(error)`` says why in one sentence."""


class EngineTimeout(EngineError):
    """GNU Go did not answer within the time limit."""


def available(path: str = DEFAULT_PATH) -> bool:
    """Whether an executable file is at ``path`` (not whether it works: that shows at the first move)."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def ask(path: str, level: int, size: int, komi: float, moves: Sequence[tuple[int, str]],
        question: str, timeout: float) -> str:
    """GNU Go's answer to one GTP ``question`` after replaying ``moves`` on an empty board.

    ``moves`` are (seat, text) pairs in order, seat 0 Black, text a point like
    ``D4`` or ``pass``. Raises EngineError when the engine is missing, crashes,
    refuses a command or has not finished within ``timeout`` seconds.
    """
    commands = [f"boardsize {size}", "clear_board"]
    for seat, text in moves:
        commands.append(f"play {COLOURS[seat]} {text}")
    commands.append(question)
    return _converse(path, level, komi, commands, timeout)[-1]


def genmove(path: str, level: int, size: int, komi: float, moves: Sequence[tuple[int, str]],
            side: int, timeout: float) -> str:
    """GNU Go's move for ``side`` (0 Black, 1 White) after ``moves``: a point in pbm's
    notation (``D4``), ``pass`` or ``resign``."""
    answer = ask(path, level, size, komi, moves, f"genmove {COLOURS[side]}", timeout)
    word = answer.strip().lower()
    if word in ("pass", "resign"):
        return word
    return word.upper()


def dead_stones(path: str, level: int, size: int, komi: float, moves: Sequence[tuple[int, str]],
                timeout: float) -> set[str]:
    """The points of the stones GNU Go judges dead after ``moves`` (``D4`` notation)."""
    return set(ask(path, level, size, komi, moves, "final_status_list dead", timeout).upper().split())


def go_move(state: GoState, side: int, moves: Sequence[tuple[int, str]], *, path: str, level: int,
            timeout: float) -> str:
    """The computer's move text for ``side`` in a pbm Go game.

    ``moves`` are the game's moves so far as (seat, text) pairs in order, as the
    move log holds them; scoring entries (``mark``, ``done``, ``resume``) are
    skipped, since GNU Go only needs the stones and passes. In play: GNU Go's
    ``genmove``, checked against pbm's rules (EngineError if they refuse it,
    so the game is never left with an illegal answer). In scoring: ``mark <point>`` for one group whose marking
    differs from GNU Go's judgement, else ``done``.
    """
    played = []
    for seat, text in moves:
        move = GO.parse_move(text, state)
        if move == PASS or isinstance(move[0], int):
            played.append((seat, GO.format_move(move)))
    if state.phase == PLAY:
        text = genmove(path, level, state.size, state.komi, played, side, timeout)
        if text != "resign":
            try:
                GO.apply(state, side, GO.parse_move(text, state))
            except MoveError as error:
                raise EngineError(f"GNU Go answered {text}, which the rules refuse: {error}") from None
        return text
    if state.phase != SCORING:
        raise ValueError("The game is over; GNU Go has no move to make.")
    dead = dead_stones(path, level, state.size, state.komi, played, timeout)
    seen: set[int] = set()
    for index, value in enumerate(state.board):
        if value == EMPTY or index in seen:
            continue
        group, _ = group_and_liberties(state.board, index, state.size)
        seen |= group
        names = {point_name(i % state.size, i // state.size) for i in group}
        if bool(names & dead) != (index in state.dead):
            return f"mark {point_name(index % state.size, index // state.size)}"
    return "done"


def _converse(path: str, level: int, komi: float, commands: list[str], timeout: float) -> list[str]:
    """Run one GNU Go process through ``commands``; the answers in order."""
    args = [path, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--positional-superko",
            "--komi", f"{komi:g}"]
    script = "".join(f"{number} {command}\n" for number, command in enumerate(commands, 1)) + "quit\n"
    try:
        process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    except OSError as error:
        raise EngineError(f"GNU Go could not be started from {path}: {error.strerror}.") from None
    try:
        output, _ = process.communicate(script, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise EngineTimeout(f"GNU Go did not answer within {timeout:g} seconds.") from None
    finally:
        if process.poll() is None:  # still running: kill it and whatever it started, then reap
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    answers = _answers(output)
    for number, command in enumerate(commands, 1):
        if number not in answers:
            how = f"exited with status {process.returncode}" if process.returncode else "stopped"
            raise EngineError(f"GNU Go {how} before answering {command!r}.")
        ok, text = answers[number]
        if not ok:
            raise EngineError(f"GNU Go refused {command!r}: {text}.")
    return [answers[number][1] for number in range(1, len(commands) + 1)]


def _answers(output: str) -> dict[int, tuple[bool, str]]:
    """GTP answers by command number: ``=7 D4`` or ``?7 illegal move``, each ended by
    an empty line; an answer may span several lines."""
    answers = {}
    for block in output.replace("\r", "").split("\n\n"):
        block = block.strip()
        words = block[1:].split(None, 1)
        if block[:1] in ("=", "?") and words and words[0].isdigit():
            answers[int(words[0])] = (block[0] == "=", " ".join(words[1:]).replace("\n", " ").strip())
    return answers
