"""Go positions by Zobrist hash, and the positions a line of play has seen
(positional superko): applying a move is O(1) in the length of the game."""

from __future__ import annotations

import hashlib
from functools import lru_cache

EMPTY, BLACK, WHITE = 0, 1, 2  # what a point holds


@lru_cache(maxsize=None)
def zobrist(size: int) -> tuple[tuple[int, int, int], ...]:
    """Fixed 64-bit keys per point and colour (derived, so every process agrees)."""
    def key(i: int, colour: int) -> int:
        return int.from_bytes(hashlib.blake2b(f"go:{size}:{i}:{colour}".encode(), digest_size=8).digest(), "big")
    return tuple((0, key(i, BLACK), key(i, WHITE)) for i in range(size * size))


class PositionHistory:
    """Append-only table: position hash -> the ply at which it first occurred.

    One line of play shares one table (extending it costs nothing); the second
    continuation from the same state (a branch: a tried move, a preview) copies
    the table once, so no line ever sees another line's positions."""

    __slots__ = ("first_seen", "length", "continued")

    def __init__(self, first_seen: dict[int, int], length: int):
        self.first_seen, self.length, self.continued = first_seen, length, False

    def seen_before(self, position: int, ply: int) -> bool:
        return self.first_seen.get(position, ply + 1) <= ply

    def extended(self, position: int, ply: int) -> "PositionHistory":
        """The history with ``position`` at ``ply``."""
        if self.length == ply and not self.continued:
            table = self.first_seen
        else:  # a branch: copy this line's view
            table = {h: p for h, p in self.first_seen.items() if p < ply}
        self.continued = True
        table.setdefault(position, ply)
        return PositionHistory(table, ply + 1)
