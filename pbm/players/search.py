"""A generic computer player: Monte Carlo tree search (UCT) with random playouts.

The search uses only the game interface of ``pbm.games.base`` (``actors``,
``legal_moves``, ``apply``, ``outcome``), so it plays every registered game,
automatic moves, compulsory gap moves, forced passes and leap chains
included: those are the rules module's business, and the search only plays
what ``legal_moves`` offers or what ``apply`` accepts.

A playout plays random moves to the end of the game, or to a cap of plies
where an unfinished playout counts as a draw. Two games need more, and
``JUDGES`` is the one place that knows a game beyond the interface: 2
Dragons' random games are too long and its move lists too dear for many
playouts a second, and in Two Tigers random goats lose nearly every
playout, whatever the position, so the goats' search would learn nothing.
For them a playout stops after a few plies and the position is judged (the
first side's prospects, from 0 to 1): 2 Dragons by its score (``scores``,
the pieces in each side's biggest dragons), Two Tigers by the goats left
and how freely the tigers can move.

Reproducible: all chance comes from ``random.Random(seed)``; with the
iteration budget alone (``seconds=None``) the same call returns the same
move. The time budget only stops the search earlier.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable

from pbm.games.base import Game, IllegalMoveError, Move, State

EXPLORATION = 1.0  # UCB1 constant for rewards from 0 to 1
ITERATIONS = 3000
DRAW = 0.5


class CannotActError(ValueError):
    """The computer was asked to move for a side that cannot act now."""


@dataclass(frozen=True)
class Judge:
    """How playouts of one game end: after ``cap`` plies, ``value(game, state)`` (the
    first side's prospects from 0 to 1; None: a draw)."""

    cap: int
    value: Callable[[Game, State], float] | None = None
    pass_last: bool = False  # never pass while a point can be played (passing looks free to ``value``),
    # unless the pass wins at once (2 Dragons: alone after the other side passed, and ahead)


def _share(game, state) -> float:
    first, second = game.scores(state)
    return DRAW if first + second == 0 else first / (first + second)


FEWEST_GOATS, ALL_GOATS, TIGER_ROOM = 7, 20, 16


def _goats_prospects(game, state) -> float:
    """Goats (the first side) are better off with more goats left and the tigers hemmed in."""
    material = (state.goats - FEWEST_GOATS) / (ALL_GOATS - FEWEST_GOATS)
    if state.turn == 0:
        return material
    room = min(len(game.legal_moves(state)), TIGER_ROOM) / TIGER_ROOM
    return 0.75 * material + 0.25 * (1 - room)


JUDGES = {
    "twodragons": Judge(0, _share, pass_last=True),
    "twotigers": Judge(2, _goats_prospects),
}
FULL_PLAYOUT = Judge(200)


class _Node:
    """A position in the search tree. ``wins`` counts from the point of view of
    ``mover``, the side whose move led here; ``untried`` is listed on the first
    visit that expands the node."""

    __slots__ = ("state", "move", "mover", "actor", "untried", "children", "visits", "wins")

    def __init__(self, state: State, move: Move | None, mover: int, actor: int | None):
        self.state, self.move, self.mover, self.actor = state, move, mover, actor
        self.untried: list | None = None if actor is not None else []
        self.children: list[_Node] = []
        self.visits = 0
        self.wins = 0.0

    def expandable(self, game: Game, rng: random.Random) -> bool:
        if self.untried is None:
            self.untried = list(game.legal_moves(self.state))
            rng.shuffle(self.untried)
        return bool(self.untried)


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
    (``None``: no time limit), whichever comes first (at least one playout),
    and returns the most visited move; a move that wins at once is taken at
    once. Raises CannotActError when ``side`` may not act in ``state``.
    """
    if iterations < 1:
        raise ValueError(f"The search needs at least one iteration, not {iterations}.")
    if game.outcome(state) is not None or side not in game.actors(state):
        raise CannotActError(f"{game.sides[side]} cannot move now in this {game.title} game.")
    rng = random.Random(seed)
    judge = JUDGES.get(game.name, FULL_PLAYOUT)
    # A private copy: Go's states share one table of the positions seen along a line of
    # play, which the many lines of a search would otherwise write into.
    root = _Node(game.from_json(game.to_json(state)), None, 1 - side, side)
    root.expandable(game, rng)
    if judge.pass_last and len(root.untried) > 1:
        if "pass" in root.untried and _wins_at_once(game, root.state, side, "pass"):
            return "pass"  # alone after the opponent passed, and ahead: more points only prolong the game
        root.untried = [move for move in root.untried if move != "pass"]
    if len(root.untried) == 1:
        return root.untried[0]
    deadline = None if seconds is None else time.monotonic() + seconds
    for _ in range(iterations):
        if _iterate(game, root, judge, rng):
            return root.children[-1].move
        if deadline is not None and time.monotonic() >= deadline:
            break
    return _safest(game, sorted(root.children, key=lambda c: (c.visits, c.wins), reverse=True))


def _safest(game: Game, ranked: list[_Node]) -> Move:
    """The best ranked move after which the opponent cannot win at once, if there is one.

    A few hundred playouts cannot visit every reply to every move, and a blunder
    that hands the opponent the game in one move (a siege in Great Kingdom, a
    loop in Dragons) is the one mistake even a random player punishes; checking
    the chosen move costs one list of replies, rarely more."""
    for child in ranked:
        if child.actor is None or not any(_wins_at_once(game, child.state, child.actor, reply)
                                          for reply in game.legal_moves(child.state)):
            return child.move
    return ranked[0].move


def _wins_at_once(game: Game, state: State, side: int, move: Move) -> bool:
    try:
        outcome = game.outcome(game.apply(state, side, move))
    except IllegalMoveError:  # Go: another line of the search made this a repetition
        return False
    return outcome is not None and outcome.winner == side


def _iterate(game: Game, root: _Node, judge: Judge, rng: random.Random) -> bool:
    """One descent, expansion, playout and update; True when the root's newest child
    wins the game at once."""
    node, path = root, [root]
    while not node.expandable(game, rng) and node.children:
        node = _select(node)
        path.append(node)
    while node.untried:
        move = node.untried.pop()
        try:
            after = game.apply(node.state, node.actor, move)
        except IllegalMoveError:  # Go: another line of the search made this a repetition
            continue
        child = _Node(after, move, node.actor, acting_side(game, after, node.actor))
        node.children.append(child)
        outcome = game.outcome(after)
        if node is root and outcome is not None and outcome.winner == root.actor:
            return True
        node = child
        path.append(node)
        break
    first = _playout(game, node.state, node.mover, judge, rng)
    for visited in path:
        visited.visits += 1
        visited.wins += first if visited.mover == 0 else 1.0 - first
    return False


def _select(node: _Node) -> _Node:
    log_visits = math.log(node.visits)
    return max(node.children,
               key=lambda c: c.wins / c.visits + EXPLORATION * math.sqrt(log_visits / c.visits))


def _playout(game: Game, state: State, mover: int, judge: Judge, rng: random.Random) -> float:
    """Random moves to the end of the game or ``judge.cap`` plies: 1 when the first
    side wins, 0 when it loses, 0.5 for a draw; an unfinished playout is judged.

    Listing legal moves is the dear part of most rules modules (they try every
    candidate), so each side draws its moves from a pool made by ``legal_moves``
    and lets ``apply`` judge them: a move it refuses leaves the pool, and the pool
    is made afresh once half of it has gone."""
    pools: dict[int, list] = {}
    full: dict[int, int] = {}
    for _ in range(judge.cap):
        outcome = game.outcome(state)
        if outcome is not None:
            return DRAW if outcome.winner is None else float(outcome.winner == 0)
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
    return DRAW if judge.value is None else judge.value(game, state)
