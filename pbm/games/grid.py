"""Board coordinates shared by the square-board games (Go/GTP notation: columns
A-T without I, rows from the bottom), their neighbours, flood fill and diagram."""

from __future__ import annotations

from functools import lru_cache

from .base import IllegalMoveError, InvalidMoveError
from .said import as_typed


COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRST"  # no I, as on Go boards


@lru_cache(maxsize=None)
def grid_neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """For each point of a row-major ``size`` x ``size`` board, its orthogonal neighbours."""
    return tuple(tuple(j for j, ok in ((i - 1, i % size > 0), (i + 1, i % size < size - 1),
                                        (i - size, i >= size), (i + size, i < size * (size - 1))) if ok)
                 for i in range(size * size))


def flood(board, start: int, size: int) -> tuple[set[int], set[int]]:
    """The orthogonally connected points holding ``board[start]``'s value, and the
    points next to them holding another value."""
    value, nbrs = board[start], grid_neighbours(size)
    group, boundary, stack = {start}, set(), [start]
    while stack:
        for n in nbrs[stack.pop()]:
            if board[n] != value:
                boundary.add(n)
            elif n not in group:
                group.add(n)
                stack.append(n)
    return group, boundary


def point_name(x: int, y: int) -> str:
    """``(0, 0)`` is A1, the lower left corner."""
    return f"{COLUMN_LETTERS[x]}{y + 1}"


def parse_point(text: str, size: int) -> tuple[int, int]:
    """Read ``d4``/``D4`` into ``(x, y)``; raise InvalidMoveError naming the problem."""
    t = text.strip().upper()
    if len(t) < 2 or len(t) > 4 or not t[0].isalpha() or not (t[1:].isascii() and t[1:].isdecimal()):
        raise InvalidMoveError("\"%(text)s\" is not a point; write a column letter and a row number, like D4.",
                               text=as_typed(text))
    if t[0] == "I":
        raise InvalidMoveError("\"%(text)s\" is not a point: column letters skip I (H is followed by J).",
                               text=as_typed(text))
    x = COLUMN_LETTERS.find(t[0])
    y = int(t[1:]) - 1
    if x < 0 or x >= size or not 0 <= y < size:
        last = point_name(size - 1, size - 1)
        raise InvalidMoveError("%(point)s is off the board; points run from A1 to %(last)s.", point=t, last=last)
    return x, y


def board_point(move, size: int) -> tuple[int, int]:
    """``move`` if it is a point ``(x, y)`` of a ``size`` x ``size`` board; IllegalMoveError
    otherwise. parse_move checks the range already: this guards apply() against a move
    built elsewhere, which would otherwise wrap round the board or fail with IndexError."""
    if isinstance(move, tuple) and len(move) == 2 and all(type(c) is int and 0 <= c < size for c in move):
        return move
    raise IllegalMoveError("%(point)s is off the board; points run from A1 to %(last)s.", point=str(move),
                           last=point_name(size - 1, size - 1))


def parse_point_or_pass(text: str, size: int, title: str, example: str):
    """``pass`` (or ``p``), or a point; errors say what a move of this game looks like."""
    t = text.strip().lower()
    if t in ("pass", "p"):
        return "pass"
    if not t:
        raise InvalidMoveError("The move is empty; send a point like %(example)s, or pass.", example=example)
    try:
        return parse_point(text, size)  # its errors quote the point as written
    except InvalidMoveError as error:
        raise InvalidMoveError("%(error)s A %(game)s move is a point like %(example)s, or pass.", error=error,
                               game=title, example=example) from None


def square_diagram(size: int, cell, last: tuple[int, int] | None) -> str:
    """Draw a square board with coordinates on all four sides.

    ``cell(x, y)`` returns one character; the last move is shown in
    parentheses. Each column is three characters wide, so 19x19 needs 63.
    """
    letters = "    " + "".join(f" {COLUMN_LETTERS[x]} " for x in range(size))
    lines = [letters]
    for y in range(size - 1, -1, -1):
        row = []
        for x in range(size):
            ch = cell(x, y)
            row.append(f"({ch})" if last == (x, y) else f" {ch} ")
        lines.append(f"{y + 1:>3} " + "".join(row) + f" {y + 1:<3}".rstrip())
    lines.append(letters)
    return "\n".join(line.rstrip() for line in lines)
