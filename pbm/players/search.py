"""A generic computer player: Monte Carlo tree search (UCT) with random playouts.

Built only on the game interface of ``pbm.games.base`` (``actors``,
``legal_moves``, ``apply``, ``outcome``), so it plays every registered game,
automatic moves, compulsory moves, forced passes and multi-step moves
included: those are the rules module's business, and the search only ever
plays what ``legal_moves`` offers or what ``apply`` accepts.

Reproducible: all chance comes from ``random.Random(seed)``; with the
iteration budget alone (``seconds=None``) the same call returns the same
move. The time budget only stops the search earlier.
"""

from __future__ import annotations

import math
import random
import time

from pbm.games.base import Game, IllegalMoveError, Move, State

EXPLORATION = 1.0  # UCB1 constant for rewards in [0, 1]
PLAYOUT_CAP = 200  # plies; an unfinished playout counts as a draw
DRAW = 0.5
ITERATIONS = 3000  # enough for about a second on this machine in most games
SHAPING = 0.0


class CannotActError(ValueError):
    """The computer was asked to move for a side that cannot act now."""


class _Node:
    """A position in the search tree. ``wins`` counts from the point of view of
    ``mover``, the side whose move led here."""

    __slots__ = ("state", "move", "mover", "actor", "untried", "children", "visits", "wins")

    def __init__(self, game: Game, state: State, move: Move | None, mover: int, actor: int | None,
                 rng: random.Random):
        self.state, self.move, self.mover, self.actor = state, move, mover, actor
        self.untried = [] if actor is None else list(game.legal_moves(state))
        rng.shuffle(self.untried)
        self.children: list[_Node] = []
        self.visits = 0
        self.wins = 0.0


def acting_side(game: Game, state: State, previous: int) -> int | None:
    """Who acts next in the search: the only actor, or, where both sides may act (Go's
    scoring), the side that did not just act; None at the end of the game."""
    actors = game.actors(state)
    if not actors or game.outcome(state) is not None:
        return None
    if len(actors) == 1:
        return actors[0]
    return 1 - previous if 1 - previous in actors else actors[0]


def choose_move(game: Game, state: State, side: int, *, seed: int, iterations: int = ITERATIONS,
                seconds: float | None = 1.0) -> Move:
    """The move the search player makes for ``side`` in ``state``.

    Stops after ``iterations`` playouts or once ``seconds`` have passed
    (``None``: no time limit), whichever comes first, and returns the most
    visited move. Raises CannotActError when ``side`` may not act in ``state``.
    """
    if game.outcome(state) is not None or side not in game.actors(state):
        raise CannotActError(f"{game.sides[side]} cannot move now in this {game.title} game.")
    rng = random.Random(seed)
    root = _Node(game, state, None, 1 - side, side, rng)
    if len(root.untried) == 1:
        return root.untried[0]
    deadline = None if seconds is None else time.monotonic() + seconds
    for _ in range(iterations):
        if deadline is not None and time.monotonic() >= deadline:
            break
        _iterate(game, root, rng)
    best = max(root.children, key=lambda c: (c.visits, c.wins))
    return best.move


def _iterate(game: Game, root: _Node, rng: random.Random) -> None:
    node, path = root, [root]
    while not node.untried and node.children:
        node = _select(node)
        path.append(node)
    if node.untried:
        move = node.untried.pop()
        after = game.apply(node.state, node.actor, move)
        child = _Node(game, after, move, node.actor, acting_side(game, after, node.actor), rng)
        node.children.append(child)
        node = child
        path.append(node)
    first = _playout(game, node.state, node.mover, rng)
    for visited in path:
        visited.visits += 1
        visited.wins += first if visited.mover == 0 else 1.0 - first


def _select(node: _Node) -> _Node:
    log_visits = math.log(node.visits)
    return max(node.children,
               key=lambda c: c.wins / c.visits + EXPLORATION * math.sqrt(log_visits / c.visits))


def _playout(game: Game, state: State, mover: int, rng: random.Random) -> float:
    """Random moves to the end of the game, at most PLAYOUT_CAP plies: 1 when the first
    side wins, 0 when it loses, 0.5 for a draw; an unfinished playout is judged by
    mobility (each side's share of the legal moves it had when it last looked).

    Listing legal moves is the dear part of most rules modules (they try every
    candidate), so each side draws its moves from a pool made by ``legal_moves``
    and lets ``apply`` judge them: a move it refuses leaves the pool, and the pool
    is made afresh once half of it has gone."""
    pools: dict[int, list] = {}
    full: dict[int, int] = {}
    for ply in range(PLAYOUT_CAP):
        outcome = game.outcome(state)
        if outcome is not None:
            if outcome.winner is None:
                return DRAW
            won = 1.0 - SHAPING * ply / PLAYOUT_CAP
            return won if outcome.winner == 0 else 1.0 - won
        mover = acting_side(game, state, mover)
        pool = pools.get(mover)
        if not pool or len(pool) * 2 < full[mover]:
            pool = pools[mover] = list(game.legal_moves(state))
            full[mover] = len(pool)
        while True:
            i = rng.randrange(len(pool))
            try:
                state = game.apply(state, mover, pool[i])
                break
            except IllegalMoveError:
                pool[i] = pool[-1]
                pool.pop()
                if not pool:
                    pool = pools[mover] = list(game.legal_moves(state))
                    full[mover] = len(pool)
    outcome = game.outcome(state)
    if outcome is not None:
        return DRAW if outcome.winner is None else float(outcome.winner == 0)
    if len(full) < 2:
        return DRAW
    return full[0] / (full[0] + full[1]) if full[0] + full[1] else DRAW
