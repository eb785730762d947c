"""Go: wood, lines, star points, stones, the last move, coordinates, captures;
in scoring, dead stones faded and crossed, and each side's area shaded."""

from __future__ import annotations

from pbm.games.base import MoveError
from pbm.games.go import BLACK, EMPTY, GO, OVER, PLAY, WHITE, GoState
from pbm.games.go_board import area_owners as go_area_owners, star_points
from pbm.i18n import gettext as _
from pbm.i18n import ngettext, number

from .square import SquareBoard
from .svg import INK, document, el, num

WOOD = "#dcb35c"
STONE_FILL = {BLACK: "#111", WHITE: "#f7f7f2"}
STONE_EDGE = {BLACK: "#000", WHITE: "#444"}
MARK_ON = {BLACK: "#fff", WHITE: "#111"}  # a mark drawn on a stone of this colour
COLOUR_NAME = {BLACK: "black", WHITE: "white"}


def area_owners(state: GoState) -> dict[int, int]:
    """Every point counted as area but not holding a living stone, with its colour."""
    return go_area_owners(state.board, state.size, state.dead)


def last_point(state: GoState, last_move: str | None) -> int | None:
    """The board index of a stone played by ``last_move``, if it names a point."""
    if not last_move:
        return None
    try:
        move = GO.parse_move(last_move, state)
    except MoveError:
        return None
    if isinstance(move, tuple) and isinstance(move[0], int):
        return move[1] * state.size + move[0]
    return None


def render(state: GoState, move_number: int, last_move: str | None, interactive: bool) -> str:
    size = state.size
    scoring = state.phase != PLAY
    board = SquareBoard(size, caption_lines=2 if scoring else 1)
    first, last = board.margin, board.margin + size - 1
    lines = "".join(f"M{num(first)} {num(first + i)}H{num(last)}M{num(first + i)} {num(first)}V{num(last)}"
                    for i in range(size))
    parts = [
        el("rect", width=board.width, height=board.height, fill=WOOD),
        el("path", d=lines, stroke=INK, stroke_width=0.045, fill="none"),
        el("rect", x=first, y=first, width=size - 1, height=size - 1, stroke=INK, stroke_width=0.09,
           fill="none"),
        el("g", *(circle(*board.index_at(i), 0.11) for i in sorted(star_points(size))), fill=INK,
           class_="stars"),
        board.coordinates(),
    ]
    for colour in (BLACK, WHITE):
        alive = [i for i, v in enumerate(state.board) if v == colour and i not in state.dead]
        dead = [i for i, v in enumerate(state.board) if v == colour and i in state.dead]
        name = COLOUR_NAME[colour]
        parts.append(el("g", *(circle(*board.index_at(i), 0.47) for i in alive), fill=STONE_FILL[colour],
                        stroke=STONE_EDGE[colour], stroke_width=0.03, class_=f"stones {name}"))
        if dead:
            parts.append(el("g", *(circle(*board.index_at(i), 0.47) for i in dead), fill=STONE_FILL[colour],
                            stroke=STONE_EDGE[colour], stroke_width=0.03, opacity=0.45,
                            class_=f"dead {name}"))
    if scoring:
        owners = area_owners(state)
        for colour in (BLACK, WHITE):
            squares = [square(*board.index_at(i)) for i, owner in sorted(owners.items()) if owner == colour]
            parts.append(el("g", *squares, fill=STONE_FILL[colour], stroke=STONE_EDGE[colour],
                            stroke_width=0.03, class_=f"area {COLOUR_NAME[colour]}"))
        crosses = "".join(f"M{num(x - .2)} {num(y - .2)}l.4 .4m0-.4l-.4 .4"
                          for x, y in (board.index_at(i) for i in sorted(state.dead)))
        if crosses:
            parts.append(el("path", d=crosses, stroke="#b00020", stroke_width=0.08, class_="dead-marks"))
    mark = last_point(state, last_move)
    if mark is not None and state.board[mark] != EMPTY:
        x, y = board.index_at(mark)
        parts.append(el("circle", cx=x, cy=y, r=0.2, fill="none", stroke=MARK_ON[state.board[mark]],
                        stroke_width=0.08, class_="last-move"))
    parts.append(board.caption(0, _("Captured by Black %(black)s, by White %(white)s", black=state.captures[0],
                                    white=state.captures[1])))
    if scoring:
        black, white = GO.score(state)
        count = {"black": number(black), "white": number(white), "komi": number(state.komi)}  # 7,5 in German
        parts.append(board.caption(1, _("Final area: Black %(black)s, White %(white)s (komi %(komi)s)", **count)
                                   if state.phase == OVER else
                                   _("Area now: Black %(black)s, White %(white)s (komi %(komi)s)", **count)))
    parts.append(board.hits())
    return document(*parts, width=board.width, height=board.height, kind="go", move_number=move_number,
                    title=describe(state, move_number, last_move))


def circle(x: float, y: float, r: float) -> str:
    return el("circle", cx=x, cy=y, r=r)


def square(x: float, y: float) -> str:
    return el("rect", x=x - 0.17, y=y - 0.17, width=0.34, height=0.34)


def describe(state: GoState, move_number: int, last_move: str | None) -> str:
    black = sum(1 for v in state.board if v == BLACK)
    white = sum(1 for v in state.board if v == WHITE)
    words = [_("Go %(size)sx%(size)s after move %(move)s: stones %(black)s black, %(white)s white",
               size=state.size, move=move_number, black=black, white=white)]
    if last_move:
        words.append(_("last move %(move)s", move=last_move))
    if state.phase != PLAY:
        words.append(ngettext("scoring: %(num)s stone marked dead", "scoring: %(num)s stones marked dead",
                              len(state.dead), num=len(state.dead)))
    return "; ".join(words)
