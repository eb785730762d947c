"""What a Go position holds, worked out from its points alone (the board as a
tuple of EMPTY, BLACK, WHITE, row by row): a group and its liberties, the area
each colour owns, the star points a diagram marks."""

from __future__ import annotations

from functools import lru_cache

from .go_positions import BLACK, EMPTY, WHITE
from .grid import flood, grid_neighbours as neighbours


@lru_cache(maxsize=None)
def star_points(size: int) -> frozenset[int]:
    """The points a diagram marks on a board of ``size`` (none below 9x9)."""
    if size < 9:
        return frozenset()
    edge = 2 if size < 13 else 3
    lines = (edge, size // 2, size - 1 - edge)
    points = {(x, y) for x in lines for y in lines}
    if size < 13:
        points = {p for p in points if p[0] != size // 2 and p[1] != size // 2} | {(size // 2, size // 2)}
    return frozenset(y * size + x for x, y in points)


def group_and_liberties(board, start: int, size: int) -> tuple[set[int], set[int]]:
    """The group of stones at ``start`` and its liberties (the empty points beside it)."""
    group, boundary = flood(board, start, size)
    return group, {n for n in boundary if board[n] == EMPTY}


def has_liberty(board, start: int, size: int) -> bool:
    """Whether the group at ``start`` has a liberty; stops at the first (the hot path
    of every move, so not ``flood``)."""
    colour = board[start]
    nbrs = neighbours(size)
    seen, stack = {start}, [start]
    while stack:
        for n in nbrs[stack.pop()]:
            v = board[n]
            if v == EMPTY:
                return True
            if v == colour and n not in seen:
                seen.add(n)
                stack.append(n)
    return False


def area_owners(board, size: int, dead: frozenset[int] = frozenset()) -> dict[int, int]:
    """Every empty point (dead stones removed) in a region reached by one colour only,
    with that colour: the area besides living stones."""
    cells = [EMPTY if i in dead else v for i, v in enumerate(board)]
    owners: dict[int, int] = {}
    seen: set[int] = set()
    for start, value in enumerate(cells):
        if value != EMPTY or start in seen:
            continue
        region, borders = flood(cells, start, size)
        seen |= region
        colours = {cells[n] for n in borders}
        if len(colours) == 1:
            owner = colours.pop()
            owners.update((i, owner) for i in region)
    return owners


def area_score(board, size: int, dead: frozenset[int] = frozenset()) -> tuple[int, int]:
    """Black's and White's area (living stones + empty regions reached only by them)."""
    score = {BLACK: 0, WHITE: 0, EMPTY: 0}
    for i, v in enumerate(board):
        score[EMPTY if i in dead else v] += 1
    for owner in area_owners(board, size, dead).values():
        score[owner] += 1
    return score[BLACK], score[WHITE]
