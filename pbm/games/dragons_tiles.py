"""The Dragons tile: its two faces turned six ways (orientations F0..F5, B0..B5), the
colour and region of each edge, and the hex cells' neighbours (``dragons`` module
docstring: edges numbered clockwise from N, axial coordinates)."""

from __future__ import annotations

from functools import lru_cache

O, X = "o", "x"
COLOURS = (O, X)  # seat 0 plays O, seat 1 plays X
DIRECTIONS = ("n", "ne", "se", "s", "sw", "nw")
STEP = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))
EDGE_NAMES = ("N", "NE", "SE", "S", "SW", "NW")
ORIENTATIONS = tuple(f"F{k}" for k in range(6)) + tuple(f"B{k}" for k in range(6))
WIN_LENGTH = 6

Cell = tuple[int, int]


@lru_cache(maxsize=None)
def edge_colours(orientation: int) -> tuple[str, ...]:
    """The colour of edges 0..5 of orientation 0..11 (F0..F5, B0..B5)."""
    base = (O, O, X, X, X, O) if orientation < 6 else (O, X, O, X, O, X)
    k = orientation % 6
    return tuple(base[(e - k) % 6] for e in range(6))


@lru_cache(maxsize=None)
def regions(orientation: int) -> tuple[str, ...]:
    """For each edge, the region covering it: 'O'/'X' the main region of that colour,
    'o'/'x' a dead-end tail (back tiles only)."""
    k = orientation % 6
    if orientation < 6:
        return tuple(c.upper() for c in edge_colours(orientation))
    base = ("o", "X", "O", "x", "O", "X")  # B0: tail 0 (o), X band 5-1, O band 2-4, tail 3 (x)
    return tuple(base[(e - k) % 6] for e in range(6))


@lru_cache(maxsize=None)
def inside(orientation: int) -> tuple[str, ...]:
    """The colour drawn just inside each edge: the region's colour, or for a tail the
    band that passes it."""
    return tuple(r.lower() if r.isupper() else (X if r == "o" else O) for r in regions(orientation))


@lru_cache(maxsize=None)
def main_edges(orientation: int, colour: str) -> frozenset[int]:
    return frozenset(e for e, r in enumerate(regions(orientation)) if r == colour.upper())


@lru_cache(maxsize=None)
def fitting(constraint: tuple) -> tuple[int, ...]:
    """The orientations whose edges match ``constraint`` (a colour or None per edge)."""
    return tuple(o for o in range(12)
                 if all(c is None or c == edge_colours(o)[e] for e, c in enumerate(constraint)))


def neighbour(cell: Cell, direction: int) -> Cell:
    dq, dr = STEP[direction]
    return cell[0] + dq, cell[1] + dr
