"""What a board page shows besides the move list: the picture, the moves the
seat may make by pointer or key (as the texts a mail would carry), the
buttons for moves that are not points, the history navigation, and how many
watch the board.

The rules stay in the games: every target here comes from ``legal_moves`` or
from ``apply`` itself, so the page offers exactly what the server accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

from ..boardview import BoardView, player_name
from ..gamewords import game_sentence, side_name
from ..movelog import MOVES, OWN_MOVES, in_force, log_entries
from ..games import MoveError
from ..games.grid import point_name
from ..i18n import N_, gettext
from sqlmodel import select

from ..models import Board, Chat, Player, Vacation, utcnow
from ..render import board_svg
from ..service import movetext
from ..service.computer import USERID as COMPUTER
from ..service.letters import watchers

# Moves that are words, not places on the board, in the order their buttons show.
ACTIONS = {"pass": N_("Pass"), "done": N_("Done (accept this scoring)"), "resume": N_("Resume play")}

# How a move is written, for the hint beside the move box (shown through gettext).
EXAMPLES = {"go": N_("D4, pass, or in scoring mark D4, done, resume"), "greatkingdom": N_("D4 or pass"),
            "twodragons": N_("E5 or pass"), "twotigers": N_("b5-b4, or c2-c4-e4 for a leap chain"),
            "dragons": N_("7ne:B2 (a cell, a colon, an orientation)")}


def last_move(view: BoardView) -> str | None:
    """The canonical text of the move that led to the shown position, if it was a move."""
    if view.records and view.records[-1].kind in MOVES:
        return view.records[-1].text
    return None


def moves_in_position(view: BoardView) -> int:
    """How many moves the shown position stands on (the board picture's
    ``data-move-number``): its log entries, less those an accepted take-back
    removed (the moves it took back and its own entry)."""
    if not any(r.kind == "undo" for r in view.records):
        return view.at_move
    return len(in_force(log_entries(view.records)))


def picture(view: BoardView, interactive: bool) -> Markup:
    """The board as inline SVG; with ``interactive``, carrying the play hooks."""
    svg = board_svg(view.game.name, view.state, move_number=moves_in_position(view), last_move=last_move(view),
                    interactive=interactive)
    return Markup(precise_hooks(svg))


# Chromium hit-tests an SVG shape against its own coordinates rounded outward to
# whole units: with one unit between points (as pbm.render draws), a tap up to half
# a unit away lands on the neighbour drawn later (measured: the centre of D5 hit
# E5). The hooks are therefore redrawn in hundredths, inside a group scaled back.
HIT_SCALE = 100
_POINT_HOOK = re.compile(r'<circle data-point="([^"]+)" cx="([-\d.]+)" cy="([-\d.]+)" r="([-\d.]+)"')
_CELL_HOOK = re.compile(r'<polygon points="([-\d., ]+)" data-cell="([^"]+)"/>')


def _scaled(number: str) -> str:
    return f"{float(number) * HIT_SCALE:.1f}".rstrip("0").rstrip(".")


def precise_hooks(svg: str) -> str:
    """The picture with its ``[data-point]`` and ``[data-cell]`` hooks drawn in
    hundredths (see above); what they cover stays the same."""
    svg = _POINT_HOOK.sub(lambda m: f'<circle data-point="{m[1]}" cx="{_scaled(m[2])}" cy="{_scaled(m[3])}" '
                                    f'r="{_scaled(m[4])}"', svg)
    svg = svg.replace('pointer-events="all" class="points">',
                      f'pointer-events="all" class="points" transform="scale({1 / HIT_SCALE:g})">')
    cells = _CELL_HOOK.findall(svg)
    if not cells:
        return svg
    svg = _CELL_HOOK.sub(lambda m: f'<polygon points="{m[1]}"/>', svg)
    svg = svg.replace(' pointer-events="all" class="playable"', ' class="playable"')
    hooks = "".join(f'<polygon points="{" ".join(",".join(map(_scaled, p.split(","))) for p in points.split())}" '
                    f'data-cell="{name}"/>' for points, name in cells)
    layer = (f'<g fill="none" pointer-events="all" class="cells" transform="scale({1 / HIT_SCALE:g})">'
             f'{hooks}</g>')
    return svg[:svg.rindex("</svg>")] + layer + "</svg>"


def frame_size(svg: str) -> str:
    """``small``, ``medium`` or ``large``: how wide the board may be drawn on a wide
    screen, from its picture's width in points (a Dragons board grows tile by tile)."""
    match = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ', svg)
    width = float(match.group(1)) if match else 20.0
    return "small" if width < 9 else "medium" if width < 14 else "large"


def acting(view: BoardView, seat: int | None) -> bool:
    """Whether ``seat`` may move in the shown position (the latest, on an active board)."""
    return (seat is not None and view.is_latest and view.board.status == "active"
            and view.outcome is None and seat in view.game.actors(view.state))


def targets(view: BoardView, seat: int) -> dict:
    """What a pointer or key may send for ``seat`` (who is acting), for the script.

    ``{"mode": "point", "moves": {"D4": "D4", ...}, "confirm": true, "prefix": ""}``:
    a point sends its move (Go scoring: ``mark D4`` on every stone, ``prefix``
    "mark "; ``confirm``: a tap only selects until confirmed, for stones that stay). ``{"mode": "path",
    "paths": [["c2", "c4", "e4"], ...]}``: every legal path, chain prefixes
    included (Two Tigers). ``{"mode": "cell"}``: the picture's ``[data-cell]``
    hooks, whose orientations the page asks for (Dragons). ``holds``: what stands
    on each occupied point ("a black stone"), which the keyboard cursor says.
    """
    game, state = view.game, view.state
    texts = [game.format_move(m) for m in game.legal_moves(state)]
    if any(":" in t for t in texts):
        return {"mode": "cell"}
    holds = {name: game_sentence(text) for name, text in game.point_contents(state).items()}
    if any("-" in t for t in texts):
        return {"mode": "path", "paths": [t.split("-") for t in texts if "-" in t], "holds": holds}
    if any(t.startswith("mark ") for t in texts):
        return {"mode": "point", "confirm": False, "prefix": "mark ", "holds": holds, "moves": {
            name: f"mark {name}" for name in _points(state.size) if _legal(view, seat, f"mark {name}")}}
    return {"mode": "point", "confirm": True, "prefix": "", "holds": holds,
            "moves": {t: t for t in texts if t not in ACTIONS}}


def _points(size: int) -> list[str]:
    return [point_name(x, y) for y in range(size) for x in range(size)]


def _legal(view: BoardView, seat: int, text: str) -> bool:
    return explain(view, seat, text) is None


def explain(view: BoardView, seat: int, text: str) -> str | None:
    """Why ``seat`` cannot play ``text`` in the shown position (the game's own
    sentence), or None when it could."""
    game, state = view.game, view.state
    if view.board.status != "active" or view.outcome is not None:
        return gettext("This game is over; no more moves can be played.")
    if seat not in game.actors(state):
        turn = game.to_move(state)
        return gettext("It is not your turn: it is %(name)s's turn (%(side)s).", name=view.name(turn),
                       side=side_name(game, turn))
    if (refusal := movetext.overlong(text)) is not None:
        return str(refusal)
    try:
        movetext.applied(game, state, seat, text)
    except MoveError as error:
        return game_sentence(error)
    return None


@dataclass(frozen=True)
class Button:
    action: str  # the move it sends, and its data-action hook
    label: str


def buttons(view: BoardView, seat: int | None, answerer: int | None = None) -> list[Button]:
    """The moves that are not points that ``seat`` may make now: pass, done and
    resume as the position allows, the requests (``request_buttons``; answered by
    ``answerer``, default ``seat``), resign on an active board, newround once the
    game is over (until this seat asked, the new round began, or a player signed off)."""
    if seat is None or not view.is_latest:
        return []
    board = view.board
    if board.status != "active":
        asked = board.newround_votes & (1 << seat)
        return [Button("newround", gettext("New round"))] if view.new_round_open and not asked else []
    found = []
    if acting(view, seat):
        texts = {view.game.format_move(m) for m in view.game.legal_moves(view.state)}
        found = [Button(action, gettext(label)) for action, label in ACTIONS.items()  # done: not confirmed twice
                 if action in texts and _legal(view, seat, action)]
    return found + request_buttons(view, seat, seat if answerer is None else answerer) + [
        Button("resign", gettext("Resign"))]


def request_buttons(view: BoardView, seat: int, answerer: int) -> list[Button]:
    """Answers to the open request, when ``answerer`` is the seat it is addressed to
    (on a same-device screen that is the other seat than ``seat``, the one the page
    acts for, and the buttons name it); else, against a person, a draw offer and
    (once ``seat`` has a move standing) a request to take it back. Against the
    computer (``requests``): in a game started in the browser only the take-back,
    which it grants at once; in a rated game nothing."""
    board = view.board
    if board.request_kind is not None:
        if board.request_seat == answerer:
            return []
        if answerer == seat:
            return [Button("accept", gettext("Accept")), Button("reject", gettext("Reject"))]
        name = view.name(answerer)
        return [Button("accept", gettext("Accept as %(name)s", name=name)),
                Button("reject", gettext("Reject as %(name)s", name=name))]
    own = any(entry.kind in OWN_MOVES and entry.seat == seat for _, entry in in_force(log_entries(view.records)))
    if view.players[1 - seat].userid == COMPUTER:
        return [Button("undo", gettext("Take back my move"))] if own and board.room_id is not None else []
    return ([Button("undo", gettext("Ask to take back my move"))] if own else []) + [
        Button("propose", gettext("Offer a draw"))]


PAGE_MOVES = 50  # moves a board page lists unless asked for all (a long game's page stays quick)


def listed_moves(view: BoardView, everything: bool = False) -> list:
    """The log entries a page lists: the last PAGE_MOVES of the position shown, or all."""
    return list(view.records) if everything else list(view.records[-PAGE_MOVES:])


@dataclass(frozen=True)
class History:
    """Links to the first, previous, next and last positions (None where there is none)."""

    at: int
    last: int
    first_href: str | None
    previous_href: str | None
    next_href: str | None
    last_href: str | None


def history(view: BoardView, path: str) -> History:
    """The steps through the board's positions, as links on the page at ``path``
    (the latest position is the page itself, without ``?move=``)."""
    at, last = view.at_move, view.board.move_count

    def href(k: int) -> str:
        return path if k == last else f"?move={k}"

    return History(at, last, href(0) if at > 0 else None, href(at - 1) if at > 0 else None,
                   href(at + 1) if at < last else None, href(last) if at < last else None)


def watched_by(session, board: Board) -> int:
    """How many players watch the board (``subscribe``): the page shows the number only."""
    return len(watchers(session, board))


def away_on(session, boards) -> dict[int, str]:
    """For each running board of ``boards`` that waits for a vacation, the name of the
    player away (the first seat's when both are): its deadline does not hold, and moves
    on when they are back, so the pages say so instead of naming it."""
    running = [b for b in boards if b.status == "active"]
    seated = {b.seat0_id for b in running} | {b.seat1_id for b in running}
    if not seated:
        return {}
    away = {player.id: player_name(player) for player in session.exec(
        select(Player).join(Vacation, Vacation.player_id == Player.id).where(
            Player.id.in_(seated), Vacation.ended_at.is_(None), Vacation.until > utcnow()))}
    return {b.id: away.get(b.seat0_id) or away[b.seat1_id] for b in running
            if b.seat0_id in away or b.seat1_id in away}


def away_and_chats(session, board: Board, seat: int | None) -> dict:
    """Which of the players of a running board is on vacation (and until when), and
    the board's chats: their words on a player's page, only how many on the public
    page (as ``history`` does). (A vacation changes the running boards only: their
    deadlines wait, and their pages are told.)"""
    away = session.exec(select(Player, Vacation.until).join(Vacation, Vacation.player_id == Player.id).where(
        Player.id.in_((board.seat0_id, board.seat1_id)), Vacation.ended_at.is_(None), Vacation.until > utcnow())
    ).all() if board.status == "active" else []
    chats = session.exec(select(Chat, Player).join(Player, Player.id == Chat.player_id)
                         .where(Chat.board_id == board.id).order_by(Chat.id)).all()
    return {"away": [(player_name(player), until) for player, until in away],
            "chats": [(player_name(player), chat.after_move, chat.text) for chat, player in chats]
            if seat is not None else [],
            "chat_count": len(chats)}

