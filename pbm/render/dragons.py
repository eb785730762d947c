"""Dragons: flat-topped hex tiles with their O and X regions, tile numbers, the
last move's tile and the tiles it placed automatically, the cells the player
to move may fill (outlined; a ``data-cell`` hook each on play pages), cells no
tile can ever fill (greyed), and the previews of the orientations that fit a
cell.

A tile is drawn as the rules join its edges: the front (``F0``) has its O
half over edges NW, N, NE and its X half below; the back (``B0``) has an X
band over the top and an O band below, with a dead-end O tail on the N edge
and an X tail on the S edge (half discs). ``Fk``/``Bk`` turn it clockwise by
k x 60 degrees. Every edge is one colour from corner to corner, so matching
edges meet in one colour.
"""

from __future__ import annotations

from math import sqrt

from pbm.games.base import MoveError
from pbm.games.dragons import DRAGONS, ORIENTATIONS, STEP, Cell, DragonsState, fitting
from pbm.i18n import gettext as _

from .svg import INK, caption, document, el, num, points, text

ROOT3 = sqrt(3)
COLOUR = {"o": "#f0a230", "x": "#2c63b0"}
HEX = tuple((round(x, 3), round(y, 3)) for x, y in
            ((1, 0), (0.5, ROOT3 / 2), (-0.5, ROOT3 / 2), (-1, 0), (-0.5, -ROOT3 / 2), (0.5, -ROOT3 / 2)))
HEX_PATH = "M1 0 .5.866H-.5L-1 0-.5-.866H.5Z"
TOP_HALF = "M-1 0-.5-.866H.5L1 0Z"
N_TAIL = "M-.5-.866A.5 .5 0 0 0 .5-.866Z"
S_TAIL = "M.5 .866A.5 .5 0 0 0-.5 .866Z"
MUST = "#b00020"
DEAD_CELL = "#d4d4d4"


def centre(cell: Cell) -> tuple[float, float]:
    q, r = cell
    return 1.5 * q, ROOT3 * (r + q / 2)


def hexagon(cell: Cell, scale: float = 1.0, **attrs) -> str:
    x, y = centre(cell)
    return el("polygon", points=points((x + scale * hx, y + scale * hy) for hx, hy in HEX), **attrs)


def tile(cell: Cell, orientation: int, number: int | None = None, **attrs) -> str:
    """One tile's coloured regions (outlines and numbers are drawn over all tiles
    at once, by :func:`outlines` and :func:`numbers`). The group is filled O; the
    X parts say so."""
    x, y = centre(cell)
    if orientation < 6:
        regions = [el("path", d=HEX_PATH, fill=COLOUR["x"]), el("path", d=TOP_HALF)]
    else:
        regions = [el("path", d=HEX_PATH), el("path", d=TOP_HALF, fill=COLOUR["x"]), el("path", d=N_TAIL),
                   el("path", d=S_TAIL, fill=COLOUR["x"])]
    turn = orientation % 6
    place = f"translate({num(x)} {num(y)})" + (f" rotate({60 * turn})" if turn else "")
    return el("g", *regions, transform=place, fill=COLOUR["o"], data_tile=number,
              data_tile_orientation=ORIENTATIONS[orientation], **attrs)


def outlines(cells, **attrs) -> str:
    """The borders of these cells' hexagons, as one path."""
    d = "".join(f"M{num(x + 1)} {num(y)}l-.5.866h-1l-.5-.866.5-.866h1z" for x, y in map(centre, cells))
    return el("path", d=d, fill="none", stroke=INK, stroke_width=0.05, **attrs)


def numbers(state: DragonsState) -> str:
    """Each tile's number on a white disc in its middle."""
    discs, figures = [], []
    for i, (q, r, _turn) in enumerate(state.tiles):
        x, y = centre((q, r))
        discs.append(el("circle", cx=x, cy=y, r=0.3))
        figures.append(el("text", text(i + 1), x=x, y=y))
    return el("g", el("g", *discs, fill="#fff", stroke=INK, stroke_width=0.03),
              el("g", *figures, fill=INK, font_size=0.32, text_anchor="middle", dominant_baseline="central"),
              class_="numbers")


def playable_cells(state: DragonsState) -> list[tuple[str, Cell, list[str]]]:
    """The cells the player to move may fill: canonical name, cell, fitting orientations."""
    if state.outcome:
        return []
    return [(name, DRAGONS.parse_cell(name, state), fits) for name, fits in DRAGONS.playable(state)]


def own_tile(state: DragonsState, last_move: str | None) -> int | None:
    """The number of the tile ``last_move`` placed (the cell before its colon), if any."""
    if not last_move or ":" not in last_move:
        return None
    try:
        cell = DRAGONS.parse_cell(last_move.split(":")[0], state)
    except MoveError:
        return None
    index = state.at.get(cell)
    return None if index is None else index + 1


def render(state: DragonsState, move_number: int, last_move: str | None, interactive: bool) -> str:
    playable = playable_cells(state)
    dead = sorted(cell for cell in state.frontier() if not fitting(state.constraint(cell)))
    must = bool(state.compulsory()) and not state.outcome
    cells = [(q, r) for q, r, _ in state.tiles] + [cell for _, cell, _ in playable] + dead
    xs = [centre(c)[0] for c in cells]
    ys = [centre(c)[1] for c in cells]
    left, top = min(xs) - 1.3, min(ys) - 1.2
    width, board_height = max(xs) + 1.3 - left, max(ys) + 1.2 - top
    height = board_height + 0.8
    parts = [el("rect", x=left, y=top, width=width, height=height, fill="#f4f1ea")]
    if dead:
        parts.append(el("g", *(hexagon(c, 0.96) for c in dead), fill=DEAD_CELL, class_="dead-cells"))
    parts += [tile((q, r), o, number=i + 1) for i, (q, r, o) in enumerate(state.tiles)]
    parts.append(outlines([(q, r) for q, r, _ in state.tiles], class_="outlines"))
    own = own_tile(state, last_move)
    auto = state.last[1:]
    if own is not None:
        parts.append(hexagon(state.tiles[own - 1][:2], 0.84, fill="none", stroke="#111", stroke_width=0.16,
                             class_="last-move"))
    if auto:
        parts.append(el("g", *(hexagon(state.tiles[n - 1][:2], 0.84) for n in auto), fill="none",
                        stroke="#111", stroke_width=0.12, stroke_dasharray=".22 .14", class_="auto"))
    parts.append(numbers(state))
    outlined = [hexagon(cell, 0.9, data_cell=name if interactive else None) for name, cell, _ in playable]
    # a compulsory gap is outlined solid red; ordinary playable cells dashed
    outline = {"stroke": MUST, "stroke_width": 0.08} if must else \
        {"stroke": INK, "stroke_width": 0.05, "stroke_dasharray": ".2 .12"}
    parts.append(el("g", *outlined, fill="none", pointer_events="all" if interactive else None, class_="playable",
                    **outline))
    parts.append(caption(left + width / 2, top + board_height + 0.3, summary(state, auto, must), width))
    return document(*parts, x=left, y=top, width=width, height=height, kind="dragons",
                    move_number=move_number, title=describe(state, move_number, last_move, auto))


def summary(state: DragonsState, auto: tuple[int, ...], must: bool) -> str:
    words = [_("O orange, X blue"), _("tiles %(placed)s of %(pool)s", placed=len(state.tiles), pool=state.pool)]
    if auto:
        words.append(_("placed automatically: %(tiles)s", tiles=", ".join(map(str, auto))))
    if must:
        words.append(_("a gap must be filled"))
    return "; ".join(words)


def describe(state: DragonsState, move_number: int, last_move: str | None, auto: tuple[int, ...]) -> str:
    words = [_("Dragons after move %(move)s: %(placed)s of %(pool)s tiles placed (O orange, X blue)",
               move=move_number, placed=len(state.tiles), pool=state.pool)]
    if last_move:
        words.append(_("last move %(move)s", move=last_move))
    if auto:
        words.append(_("tiles %(tiles)s placed automatically", tiles=", ".join(map(str, auto))))
    return "; ".join(words)


def orientation_choices(state: DragonsState, cell_name: str) -> list[tuple[str, str]]:
    """For a cell the player to move may fill: each fitting orientation's name and a
    small picture of the tile in place among its neighbours, the picture's root
    carrying ``data-orientation``. Empty for a cell that cannot be played now.
    Raises the game's InvalidMoveError for a name that is no cell."""
    cell = DRAGONS.parse_cell(cell_name, state)
    name, fits = next(((n, fits) for n, c, fits in playable_cells(state) if c == cell), ("", []))
    x, y = centre(cell)
    near = [c for c in ((cell[0] + dq, cell[1] + dr) for dq, dr in STEP) if c in state.at]
    around = [tile(c, state.tiles[state.at[c]][2], number=state.at[c] + 1, opacity=0.6) for c in near]
    around.append(outlines(near, opacity=0.6))
    choices = []
    for orientation in fits:
        title = f"{name}:{orientation}"
        picture = [el("rect", x=x - 2, y=y - 2, width=4, height=4, fill="#f4f1ea"), *around,
                   tile(cell, ORIENTATIONS.index(orientation)),
                   hexagon(cell, 1.0, fill="none", stroke=INK, stroke_width=0.1)]
        choices.append((orientation, document(*picture, x=x - 2, y=y - 2, width=4, height=4, title=title,
                                              kind="orientation", class_="orientation",
                                              data_orientation=orientation)))
    return choices
