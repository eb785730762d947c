"""The computer's players: GNU Go for Go, the generic search player for every other game.

No database and no web here: the service asks ``computer_move`` for the
computer's move text outside any transaction and then submits that text
like a person's move. ``computer_can_act`` says when to ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbm.games import get_game
from pbm.games.base import State

from . import gnugo, search
from .gnugo import EngineError, available
from .search import CannotActError

__all__ = ["CannotActError", "EngineError", "available", "computer_can_act", "computer_move"]


def computer_can_act(game_name: str, state: State, side: int) -> bool:
    """Whether the computer, playing ``side``, has something to do now. In Go's scoring
    both sides may act; the computer acts until it has confirmed the marking."""
    game = get_game(game_name)
    if side not in game.actors(state):
        return False
    return not (game_name == "go" and side in state.confirmed)


def computer_move(game_name: str, state: State, side: int, *, seed: int,
                  moves: Sequence[tuple[int, str]] = (), gnugo_path: str = gnugo.DEFAULT_PATH,
                  gnugo_level: int = 1, gnugo_timeout: float = 10.0, search_seconds: float = 1.0,
                  search_iterations: int = search.ITERATIONS) -> str:
    """The computer's move for ``side`` as text in the game's canonical notation.

    Go: GNU Go at ``gnugo_level`` replays ``moves`` (the game's moves so far, as
    (seat, text) pairs in order; scoring entries may be included) and answers a
    point, ``pass``, ``resign`` (to be handled as a resignation), or in scoring
    ``mark <point>`` or ``done``; a move that takes longer than ``gnugo_timeout``
    seconds is asked again at level 1; EngineError when GNU Go fails or level 1 is
    too slow as well. Other games: the search player, seeded by
    ``seed``, within ``search_seconds`` and ``search_iterations``; ``moves`` is
    not needed. CannotActError when ``computer_can_act`` is false.
    """
    game = get_game(game_name)
    if not computer_can_act(game_name, state, side):
        raise CannotActError(f"{game.sides[side]} has nothing to do now in this {game.title} game.")
    if game_name == "go":
        try:
            return gnugo.go_move(state, side, moves, path=gnugo_path, level=gnugo_level, timeout=gnugo_timeout)
        except gnugo.EngineTimeout:
            if gnugo_level <= 1:
                raise
            # Level 10 takes about 10 seconds on a crowded 19x19 board: level 1 answers in
            # milliseconds, so a strong setting costs this move its strength, not the game its progress.
            return gnugo.go_move(state, side, moves, path=gnugo_path, level=1, timeout=gnugo_timeout)
    move = search.choose_move(game, state, side, seed=seed, iterations=search_iterations,
                              seconds=search_seconds)
    return game.format_move(move)
