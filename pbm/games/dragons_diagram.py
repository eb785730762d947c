"""The ASCII drawing of a Dragons board for mails (rules in ``dragons``): flat-topped
hexes of 9 x 5 characters, edge colours written inside each edge, tile numbers in
the middle."""

from __future__ import annotations

from .dragons import DragonsState
from .dragons_tiles import Cell, edge_colours, inside, regions

# Vertex characters, by which of the three cells around a vertex hold tiles. A
# vertex whose horizontal edge runs to the right has cells up-right (U),
# down-right (D) and left (L); a mirrored vertex has up-left, down-left, right.
RIGHT_VERTEX = {(0, 1, 0): ".", (1, 0, 0): "`", (0, 0, 1): ")", (1, 1, 0): ")", (1, 0, 1): ".",
                (0, 1, 1): "`", (1, 1, 1): " "}
LEFT_VERTEX = {(0, 1, 0): ".", (1, 0, 0): "'", (0, 0, 1): "(", (1, 1, 0): "(", (1, 0, 1): ".",
               (0, 1, 1): "'", (1, 1, 1): " "}


def tile_rows(orientation: int) -> tuple[str, str, str]:
    """The three inner rows (7 characters each) of a tile."""
    reg, ins, col = regions(orientation), inside(orientation), edge_colours(orientation)

    def band(a: int, b: int) -> str:  # the boundary between neighbouring edges a, b
        same = _joined(reg, a, b)
        return ins[a] if same else " "

    top = col[5] + ins[5] + band(5, 0) + ins[0] + band(0, 1) + ins[1] + col[1]
    middle = " " + (ins[5] if _joined(reg, 5, 4) else " ") + "   " + (ins[1] if _joined(reg, 1, 2) else " ") + " "
    bottom = col[4] + ins[4] + band(4, 3) + ins[3] + band(3, 2) + ins[2] + col[2]
    return top, middle, bottom


def _joined(reg: tuple[str, ...], a: int, b: int) -> bool:
    """Do the insides of edges a and b belong to one region (a tail lets its band pass)?"""
    def main(e: int) -> str:
        r = reg[e]
        return r if r.isupper() else ("X" if r == "o" else "O")
    return main(a) == main(b)


def draw_single(orientation: int) -> list[str]:
    top, middle, bottom = tile_rows(orientation)
    col = edge_colours(orientation)
    return [f"  .-{col[0]}-.  ", f" {top} ", f"({middle})", f" {bottom} ", f"  `-{col[3]}-'  "]


def draw(state: DragonsState, marks: dict[Cell, str], width: int = 78) -> str:
    """The board in the seed's style, wrapped in strips of whole hex columns."""
    cells = {(q, r): o for q, r, o in state.tiles}
    qs = [q for q, _ in cells] + [q for q, _ in marks]
    low, high = min(qs), max(qs)
    per_strip = max(1, (width - 3) // 6)
    strips = []
    for start in range(low, high + 1, per_strip):
        strips.append(_draw_strip(state, cells, marks, start, min(high, start + per_strip - 1)))
    return "\n\n".join(strips)


def _draw_strip(state, cells, marks, q_low, q_high) -> str:
    canvas: dict[tuple[int, int], str] = {}

    def put(line: int, col: int, text: str) -> None:
        for i, ch in enumerate(text):
            canvas[(line, col + i)] = ch

    def present(cell: Cell) -> bool:
        return cell in cells

    for (q, r), o in cells.items():
        if not q_low <= q <= q_high:
            continue
        col, line = 6 * (q - q_low), 4 * r + 2 * q
        top, middle, bottom = tile_rows(o)
        colours = edge_colours(o)
        number = str(state.at[(q, r)] + 1)
        # a two-digit number leans away from the side whose band is drawn
        label = f"{number:<3}" if len(number) == 2 and middle[5] != " " else f"{number:>3}" \
            if len(number) == 2 else number.center(3)
        middle = middle[:2] + label + middle[5:]
        put(line + 1, col + 1, top)
        put(line + 2, col + 1, middle)
        put(line + 3, col + 1, bottom)
        up, down = (q, r - 1), (q, r + 1)
        put(line, col + 3, f" {colours[0]} " if present(up) else f"-{colours[0]}-")
        put(line + 4, col + 3, f" {colours[3]} " if present(down) else f"-{colours[3]}-")
        # vertices: (column offset, line offset, kind, the three cells around it)
        for dc, dl, kind, around in (
            (2, 0, "R", ((q, r - 1), (q, r), (q - 1, r))),          # top-left: U=N, D=self, L=NW
            (6, 0, "L", ((q, r - 1), (q, r), (q + 1, r - 1))),      # top-right: U=N, D=self, R=NE
            (0, 2, "L", ((q - 1, r), (q - 1, r + 1), (q, r))),      # west: U=NW, D=SW, R=self
            (8, 2, "R", ((q + 1, r - 1), (q + 1, r), (q, r))),      # east: U=NE, D=SE, L=self
            (2, 4, "R", ((q, r), (q, r + 1), (q - 1, r + 1))),      # bottom-left: U=self, D=S, L=SW
            (6, 4, "L", ((q, r), (q, r + 1), (q + 1, r))),          # bottom-right: U=self, D=S, R=SE
        ):
            key = tuple(int(present(c)) for c in around)
            put(line + dl, col + dc, (RIGHT_VERTEX if kind == "R" else LEFT_VERTEX)[key])
    for (q, r), mark in marks.items():
        if q_low <= q <= q_high:
            put(4 * r + 2 * q + 2, 6 * (q - q_low) + 4, mark)
    if not canvas:
        return ""
    lines = [l for l, _ in canvas]
    top_line, bottom_line = min(lines), max(lines)
    out = []
    for line in range(top_line, bottom_line + 1):
        row = "".join(canvas.get((line, c), " ") for c in range(6 * (q_high - q_low) + 9))
        out.append(row.rstrip())
    return "\n".join(out)


