"""2 Dragons: a lined board of points, White's and Black's pieces, the last move,
and each side's scoring dragons (the biggest groups, as many as the game
counts) highlighted: a red band runs under and around their pieces."""

from __future__ import annotations

from pbm.games.base import MoveError
from pbm.games.twodragons import BLACK, TWO_DRAGONS, WHITE, TwoDragonsState
from pbm.i18n import gettext as _

from .square import SquareBoard
from .svg import document, el, num

GROUND = "#e3d3ab"
PIECE_FILL = {WHITE: "#fafaf5", BLACK: "#141414"}
PIECE_EDGE = {WHITE: "#3a3a3a", BLACK: "#000"}
MARK_ON = {WHITE: "#111", BLACK: "#fff"}
NAME = {WHITE: "white", BLACK: "black"}
DRAGON = "#c62828"


def groups(state: TwoDragonsState, colour: int) -> list[list[int]]:
    """``colour``'s orthogonally connected groups (board indices, each sorted), the
    biggest first; equal sizes in board order, so the choice among equals is fixed."""
    size, board = state.size, state.board
    seen: set[int] = set()
    found = []
    for start, value in enumerate(board):
        if value != colour or start in seen:
            continue
        seen.add(start)
        group, stack = [start], [start]
        while stack:
            i = stack.pop()
            for n in orthogonal(i, size):
                if board[n] == colour and n not in seen:
                    seen.add(n)
                    group.append(n)
                    stack.append(n)
        found.append(sorted(group))
    return sorted(found, key=lambda g: (-len(g), g[0]))


def orthogonal(i: int, size: int):
    x, y = i % size, i // size
    if x > 0:
        yield i - 1
    if x < size - 1:
        yield i + 1
    if y > 0:
        yield i - size
    if y < size - 1:
        yield i + size


def scoring_dragons(state: TwoDragonsState, colour: int) -> list[list[int]]:
    """The groups that score: the ``state.dragons`` biggest."""
    return groups(state, colour)[:state.dragons]


def render(state: TwoDragonsState, move_number: int, last_move: str | None, interactive: bool) -> str:
    size = state.size
    board = SquareBoard(size)
    first, last = board.margin, board.margin + size - 1
    lines = "".join(f"M{num(first)} {num(first + i)}H{num(last)}M{num(first + i)} {num(first)}V{num(last)}"
                    for i in range(size))
    parts = [el("rect", width=board.width, height=board.height, fill=GROUND),
             el("path", d=lines, stroke="#5b4a2e", stroke_width=0.04, fill="none"),
             board.coordinates()]
    summary = []
    for colour in (WHITE, BLACK):
        dragons = scoring_dragons(state, colour)
        links = "".join(f"M{num(ax)} {num(ay)}L{num(bx)} {num(by)}"
                        for group in dragons for i in group for j in orthogonal(i, size)
                        if j > i and state.board[j] == colour
                        for (ax, ay), (bx, by) in [(board.index_at(i), board.index_at(j))])
        halos = [circle(*board.index_at(i), 0.56) for group in dragons for i in group]
        parts.append(el("g", el("path", d=links, stroke_width=0.7, stroke=DRAGON) if links else "", *halos,
                        fill=DRAGON, class_=f"dragon {NAME[colour]}"))
        summary.append(f"{_(TWO_DRAGONS.sides[colour - 1])} "
                       f"{'+'.join(str(len(g)) for g in dragons) or '0'} = {sum(map(len, dragons))}")
    for colour in (WHITE, BLACK):
        pieces = [circle(*board.index_at(i), 0.44) for i, v in enumerate(state.board) if v == colour]
        parts.append(el("g", *pieces, fill=PIECE_FILL[colour], stroke=PIECE_EDGE[colour], stroke_width=0.03,
                        class_=f"pieces {NAME[colour]}"))
    mark = last_point(state, last_move)
    if mark is not None:
        x, y = board.index_at(mark)
        parts.append(el("circle", cx=x, cy=y, r=0.27, fill="none", stroke=MARK_ON[state.board[mark]],
                        stroke_width=0.07, class_="last-move"))
    parts.append(board.caption(0, _("Scoring dragons: %(dragons)s", dragons="; ".join(summary))))
    parts.append(board.hits())
    return document(*parts, width=board.width, height=board.height, kind="twodragons",
                    move_number=move_number, title=describe(state, move_number, last_move))


def circle(x: float, y: float, r: float) -> str:
    return el("circle", cx=x, cy=y, r=r)


def last_point(state: TwoDragonsState, last_move: str | None) -> int | None:
    """The board index of a piece placed by ``last_move``, if it names a point holding one."""
    if not last_move:
        return None
    try:
        move = TWO_DRAGONS.parse_move(last_move, state)
    except MoveError:
        return None
    if move == "pass":
        return None
    index = move[1] * state.size + move[0]
    return index if state.board[index] in (WHITE, BLACK) else None


def describe(state: TwoDragonsState, move_number: int, last_move: str | None) -> str:
    words = [_("2 Dragons %(size)sx%(size)s after move %(move)s: pieces %(white)s white, %(black)s black",
               size=state.size, move=move_number, white=state.board.count(WHITE), black=state.board.count(BLACK))]
    if last_move:
        words.append(_("last move %(move)s", move=last_move))
    return "; ".join(words)
