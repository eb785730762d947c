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
    the table once, so no line ever sees another line's positions.

    Beside the table, the same entries as stored (``stored``: ``[ply, hash in
    hex]`` in the order of play), kept as the table grows, so that storing a
    long game's state formats each hash once, not on every move."""

    __slots__ = ("first_seen", "length", "continued", "stored")

    def __init__(self, first_seen: dict[int, int], length: int, stored: list[list]):
        self.first_seen, self.length, self.continued, self.stored = first_seen, length, False, stored

    @classmethod
    def start(cls, position: int = 0) -> "PositionHistory":
        """The history of a game from ``position`` (by default the empty board, hash 0) at ply 0."""
        return cls({position: 0}, 1, [[0, format(position, "016x")]])

    @classmethod
    def from_stored(cls, stored: list, length: int) -> "PositionHistory":
        """The history written by ``stored_up_to`` (the list is not kept: the caller's stays its own)."""
        return cls({int(h, 16): p for p, h in stored}, length, list(stored))

    def seen_before(self, position: int, ply: int) -> bool:
        return self.first_seen.get(position, ply + 1) <= ply

    def extended(self, position: int, ply: int) -> "PositionHistory":
        """The history with ``position`` at ``ply``."""
        if self.length == ply and not self.continued:
            table, stored = self.first_seen, self.stored
        else:  # a branch: copy this line's view
            table = {h: p for h, p in self.first_seen.items() if p < ply}
            stored = [entry for entry in self.stored if entry[0] < ply]
        self.continued = True
        if position not in table:
            table[position] = ply
            stored.append([ply, format(position, "016x")])
        return PositionHistory(table, ply + 1, stored)

    def stored_up_to(self, ply: int) -> list[list]:
        """The stored entries of the positions up to ``ply``, in the order of play (a
        new list: the line may grow after it is written)."""
        if self.stored[-1][0] <= ply:
            return list(self.stored)
        return [entry for entry in self.stored if entry[0] <= ply]
