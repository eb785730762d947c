"""Great Kingdom: a board of squares, one per point; Blue's and Orange's castles,
the neutral castle, each side's territory shaded, castles destroyed by the
winning siege crossed out, the last castle marked."""

from __future__ import annotations

from pbm.games.base import MoveError
from pbm.games.greatkingdom import BLUE, GREAT_KINGDOM, NEUTRAL, ORANGE, GreatKingdomState, territory
from pbm.i18n import gettext as _

from .square import SquareBoard
from .svg import document, el, num

GROUND = "#f1e9d2"
CASTLE_FILL = {BLUE: "#1d5bb8", ORANGE: "#c25400", NEUTRAL: "#5f5f5f"}
LAND_FILL = {BLUE: "#bcd3f2", ORANGE: "#f6cfa3"}
NAME = {BLUE: "blue", ORANGE: "orange", NEUTRAL: "neutral"}
# A castle with three merlons and a gate, centred on its point.
CASTLE = "M-.34 .34V-.3H-.2V-.16H-.07V-.3H.07V-.16H.2V-.3H.34V.34H.11V.12A.11 .11 0 0 0-.11 .12V.34Z"


def render(state: GreatKingdomState, move_number: int, last_move: str | None, interactive: bool) -> str:
    size = state.size
    board = SquareBoard(size, margin=1.4, caption_lines=2)
    low = board.margin - 0.5
    grid = "".join(f"M{num(low)} {num(low + i)}h{size}M{num(low + i)} {num(low)}v{size}"
                   for i in range(size + 1))
    parts = [el("rect", width=board.width, height=board.height, fill=GROUND)]
    for colour in (BLUE, ORANGE):
        land = sorted(territory(state.board, size, colour))
        parts.append(el("g", *(cell(*board.index_at(i)) for i in land), fill=LAND_FILL[colour],
                        class_=f"territory {NAME[colour]}"))
    parts += [el("path", d=grid, stroke="#6d5c3d", stroke_width=0.04, fill="none"),
              board.coordinates(offset=1.0)]
    for colour in (BLUE, ORANGE, NEUTRAL):
        castles = [castle(*board.index_at(i)) for i, v in enumerate(state.board) if v == colour]
        parts.append(el("g", *castles, fill=CASTLE_FILL[colour], stroke="#111", stroke_width=0.03,
                        class_=f"castles {NAME[colour]}"))
    ruins = "".join(f"M{num(x - .3)} {num(y - .3)}l.6 .6m0-.6l-.6 .6"
                    for x, y in (board.index_at(i) for i in state.destroyed))
    if ruins:
        parts.append(el("path", d=ruins, stroke="#b00020", stroke_width=0.1, class_="destroyed"))
    mark = last_point(state, last_move)
    if mark is not None:
        x, y = board.at(*mark)
        parts.append(el("circle", cx=x, cy=y - 0.02, r=0.13, fill="#fff", stroke="#111", stroke_width=0.03,
                        class_="last-move"))
    blue, orange = GREAT_KINGDOM.scores(state)
    parts += [board.caption(0, _("Territory: Blue %(blue)s, Orange %(orange)s", blue=blue, orange=orange)),
              board.caption(1, _("Castles in hand: Blue %(blue)s, Orange %(orange)s", blue=state.stock[0],
                                 orange=state.stock[1]))]
    parts.append(board.hits())
    return document(*parts, width=board.width, height=board.height, kind="greatkingdom",
                    move_number=move_number, title=describe(state, move_number, last_move))


def cell(x: float, y: float) -> str:
    return el("rect", x=x - 0.5, y=y - 0.5, width=1, height=1)


def castle(x: float, y: float) -> str:
    return el("path", transform=f"translate({num(x)} {num(y)})", d=CASTLE)


def last_point(state: GreatKingdomState, last_move: str | None) -> tuple[int, int] | None:
    """The point of a castle placed by ``last_move``, if it names one that holds a castle."""
    if not last_move:
        return None
    try:
        move = GREAT_KINGDOM.parse_move(last_move, state)
    except MoveError:
        return None
    if move == "pass" or state.board[move[1] * state.size + move[0]] not in (BLUE, ORANGE):
        return None
    return move


def describe(state: GreatKingdomState, move_number: int, last_move: str | None) -> str:
    blue = state.board.count(BLUE)
    orange = state.board.count(ORANGE)
    words = [_("Great Kingdom %(size)sx%(size)s after move %(move)s: castles %(blue)s blue, %(orange)s orange",
               size=state.size, move=move_number, blue=blue, orange=orange)]
    if last_move:
        words.append(_("last move %(move)s", move=last_move))
    return "; ".join(words)
