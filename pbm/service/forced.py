"""Forced moves: when the rules leave the side to move exactly one move, the server
plays it (pbmserv's ForcedMove). What the server would play next, worked out
without playing it, for ``preview`` and ``submit``; ``boards.play_on`` plays them."""

from __future__ import annotations

from ..games import Game
from ..i18n import LazyText, gettext

MAX_FORCED = 20  # forced moves played in a row at most (a guard; games need two or three)


def marked_forced(move: str) -> LazyText:
    """A move the server would play for a player, as a move list marks it."""
    return LazyText(lambda: f"{move} {gettext('(forced)')}")


def with_forced_replies(game: Game, state) -> tuple[object, list[str]]:
    """The position after the moves the server would play next (``forced_move``, as
    after a real move), and those moves as written: what ``preview`` and ``submit``
    show of a move nobody has played."""
    replies = []
    for _ in range(MAX_FORCED):
        if game.outcome(state) is not None or (forced := forced_move(game, state)) is None:
            break
        state = game.apply(state, *forced)
        replies.append(game.format_move(forced[1]))
    return state, replies


def forced_move(game: Game, state) -> tuple[int, object] | None:
    """The seat to move and its one move, when the rules leave it exactly one (pbmserv's
    ForcedMove: the server plays it); else None."""
    if not game.info.forced_moves:
        return None
    actors = game.actors(state)
    move = game.only_move(state) if len(actors) == 1 else None
    return (actors[0], move) if move is not None else None
