"""Geometry shared by the square boards (Go, Great Kingdom, 2 Dragons).

One unit of the picture is the distance between two neighbouring points.
Point (x, y) of the game, A1 = (0, 0) in the lower left corner, sits at
picture coordinates (margin + x, margin + size - 1 - y): row 1 at the
bottom, as in the mails' diagrams.
"""

from __future__ import annotations

from pbm.games.grid import COLUMN_LETTERS, point_name

from .svg import INK, caption, el, label, point_hooks


class SquareBoard:
    def __init__(self, size: int, margin: float = 1.3, caption_lines: int = 1):
        self.size = size
        self.margin = margin
        self.width = 2 * margin + size - 1
        self.board_height = self.width
        self.height = self.board_height + 0.7 * caption_lines

    def at(self, x: int, y: int) -> tuple[float, float]:
        """The picture coordinates of point (x, y)."""
        return self.margin + x, self.margin + self.size - 1 - y

    def index_at(self, index: int) -> tuple[float, float]:
        """The picture coordinates of the point at board index ``y * size + x``."""
        return self.at(index % self.size, index // self.size)

    def coordinates(self, offset: float = 0.8) -> str:
        """Column letters above and below, row numbers left and right, ``offset``
        outside the outermost points."""
        low, high = self.margin - offset, self.margin + self.size - 1 + offset
        marks = []
        for i in range(self.size):
            x, _ = self.at(i, 0)
            _, y = self.at(0, i)
            marks += [label(x, low, COLUMN_LETTERS[i], 0.42), label(x, high, COLUMN_LETTERS[i], 0.42),
                      label(low, y, i + 1, 0.42), label(high, y, i + 1, 0.42)]
        return el("g", *marks, fill=INK, class_="coordinates")

    def caption(self, line: int, words: str) -> str:
        """A line of text under the board (``line`` 0 is the first)."""
        return caption(self.width / 2, self.board_height + 0.3 + 0.7 * line, words, self.width)

    def hits(self) -> str:
        """The ``[data-point]`` hooks (``data-point="D4"``), as wide as the distance
        between points (:func:`svg.point_hooks`)."""
        points = [(point_name(x, y), *self.at(x, y)) for y in range(self.size) for x in range(self.size)]
        return point_hooks(points, 0.5)
