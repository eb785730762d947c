"""Two Tigers: the alquerque board (its lines as the game defines them), the
tigers, the goats (a pile drawn stacked, with its count), and the last move's
path."""

from __future__ import annotations

from pbm.games.base import MoveError
from pbm.games.twotigers import (COLUMNS, FEWEST_GOATS, SIZE, TIGER, TWO_TIGERS, TwoTigersState, lines, name,
                                 step)
from pbm.i18n import gettext as _

from .svg import INK, caption, document, el, label, num, point_hooks, points

GROUND = "#e9dfc4"
MARGIN = 0.9
TIGER_FILL = "#a34a0c"
GOAT_FILL = "#fdfdf8"
GOAT_EDGE = "#2e6b30"
PATH = "#1f5fbf"


def at(point: int) -> tuple[float, float]:
    """Picture coordinates of a point; a1 lower left, one unit between points."""
    return MARGIN + point % SIZE, MARGIN + SIZE - 1 - point // SIZE


def render(state: TwoTigersState, move_number: int, last_move: str | None, interactive: bool) -> str:
    width = 2 * MARGIN + SIZE - 1
    height = width + 0.7
    segments = "".join(f"M{num(ax)} {num(ay)}L{num(bx)} {num(by)}"
                       for p, directions in sorted(lines().items()) for d in directions
                       if d > (0, 0)  # each segment once, from its left (or lower) end
                       for (ax, ay), (bx, by) in [(at(p), at(step(p, d)))])
    parts = [el("rect", width=width, height=height, fill=GROUND),
             el("path", d=segments, stroke="#4a3b22", stroke_width=0.04, stroke_linecap="round",
                fill="none", class_="lines"),
             coordinates()]
    path = last_path(state, last_move)
    if path:
        parts.append(el("polyline", points=points(at(p) for p in path), fill="none", stroke=PATH,
                        stroke_width=0.1, stroke_linejoin="round", stroke_opacity=0.7, class_="last-path"))
    tigers, goats = [], []
    for p, value in enumerate(state.board):
        x, y = at(p)
        if value == TIGER:
            tigers.append(el("g", el("circle", cx=x, cy=y, r=0.34),
                             el("text", "T", x=x, y=y, font_size=0.38, font_weight="bold", fill="#fff",
                                stroke="none", text_anchor="middle", dominant_baseline="central"),
                             data_tiger=name(p)))
        elif value > 0:
            goats.append(pile(x, y, value, name(p)))
    parts += [el("g", *tigers, fill=TIGER_FILL, stroke="#3d1a02", stroke_width=0.04, class_="tigers"),
              el("g", *goats, class_="goats")]
    if path:
        x, y = at(path[-1])
        parts.append(el("circle", cx=x, cy=y, r=0.42, fill="none", stroke=PATH, stroke_width=0.06,
                        class_="last-move"))
    words = _("Goats left: %(goats)s of 20 (the tigers win below %(fewest)s)", goats=state.goats,
              fewest=FEWEST_GOATS)
    parts.append(caption(width / 2, width + 0.25, words, width, size=0.3))
    parts.append(point_hooks([(name(p), *at(p)) for p in range(SIZE * SIZE)], 0.48))
    return document(*parts, width=width, height=height, kind="twotigers", move_number=move_number,
                    title=describe(state, move_number, last_move))


def pile(x: float, y: float, count: int, point: str) -> str:
    """A goat, or a pile drawn as stacked discs with its count on top."""
    shown = min(count, 5)
    discs = [el("circle", cx=x, cy=y + 0.05 * ((shown - 1) / 2 - k), r=0.3) for k in range(shown)]
    top_y = y - 0.05 * (shown - 1) / 2
    count_text = label(x, top_y, count, 0.34, fill=INK, stroke="none", font_weight="bold") if count > 1 \
        else ""
    return el("g", *discs, count_text, fill=GOAT_FILL, stroke=GOAT_EDGE, stroke_width=0.04,
              data_goats=count, data_pile=point)


def coordinates() -> str:
    low, high = MARGIN - 0.6, MARGIN + SIZE - 1 + 0.6
    marks = []
    for i in range(SIZE):
        x, _ = at(i)
        _, y = at(i * SIZE)
        marks += [label(x, low, COLUMNS[i], 0.3), label(x, high, COLUMNS[i], 0.3),
                  label(low, y, i + 1, 0.3), label(high, y, i + 1, 0.3)]
    return el("g", *marks, fill=INK, class_="coordinates")


def last_path(state: TwoTigersState, last_move: str | None) -> tuple[int, ...] | None:
    """The points of ``last_move`` (a step or a leap chain), if it is one."""
    if not last_move:
        return None
    try:
        return TWO_TIGERS.parse_move(last_move, state)
    except MoveError:
        return None


def describe(state: TwoTigersState, move_number: int, last_move: str | None) -> str:
    tigers = [name(p) for p, v in enumerate(state.board) if v == TIGER]
    places = _("%(first)s and %(second)s", first=tigers[0], second=tigers[1]) if len(tigers) == 2 \
        else ", ".join(tigers)
    words = [_("Two Tigers after move %(move)s: tigers on %(places)s; goats: %(goats)s", move=move_number,
               places=places, goats=state.goats)]
    if last_move:
        words.append(_("last move %(move)s", move=last_move))
    return "; ".join(words)
