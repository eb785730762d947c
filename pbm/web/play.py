"""The private play page (the token in the link is the credential): the board,
the move form, the buttons for moves that are not points, the player's other
boards; and the small routes its script uses (the live fragment, the list of the
player's boards, why a move is illegal, a Dragons cell's orientations)."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timezone

from flask import Blueprint, abort, current_app, jsonify, redirect, render_template, request, url_for
from sqlalchemy import or_
from sqlmodel import select

from ..boardview import player_name
from ..gamewords import game_sentence
from ..linetext import split_move_number, without_invisible
from ..db import reading
from ..games import MoveError, as_typed, get_game
from ..i18n import gettext as _
from ..models import Board, MoveRecord, Player
from ..render import dragons_orientation_choices
from ..service import boards as service_boards, movetext
from ..service.errors import PlayerError
from ..service.rooms import answering_seat, latest_board, link_seats
from . import boardpage
from .forgery import same_origin, secrets_match
from .pages import board_context, latest_view, service, view_of

bp = Blueprint("play", __name__)

FINISHED_SHOWN = 5  # finished boards listed under "Your boards", the latest first


def csrf_token(play_token: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, f"play:{play_token}".encode(), hashlib.sha256).hexdigest()


def seat_or_404(session, token: str) -> tuple[Board, int]:
    board, seat, _players = service_boards.by_token(session, token, lock=False)
    if board is None:
        abort(404, _("This private link is not valid."))
    return board, seat


def _spelled_out(token: str, move: str) -> str:
    """``move`` as the board of ``token`` reads it (``newr`` is ``newround``,
    ``boards.spelled_out_on``); as typed when the board refuses it (the move's
    answer then says why)."""
    with reading(service().engine) as session:
        board, _seat = seat_or_404(session, token)
        try:
            return service_boards.spelled_out_on(board, move)
        except PlayerError:
            return move


def _already_played(token: str, number: int | None, move: str) -> str | None:
    """When move #``number`` is on the board, by this seat, as ``move`` (spelled out:
    ``_spelled_out``; an ``accept`` as the ``undo N`` or ``draw`` it logged): a sentence
    saying so (a form sent twice), else None."""
    if number is None:
        return None
    with reading(service().engine) as session:
        board, _seat = seat_or_404(session, token)
        seats = link_seats(session, board, token)
        record = session.exec(select(MoveRecord).where(MoveRecord.board_id == board.id,
                                                       MoveRecord.number == number)).first()
    if record is None or record.seat not in seats:
        return None
    if movetext.same_move(record.text, move):
        shown = record.text
    elif move == "accept" and record.kind in ("undo", "draw"):  # an accepted request is logged as its effect
        shown = move
    else:
        return None
    return _("Your move %(move)s was already played (move %(number)s); it was not sent twice.", move=shown,
             number=record.number)


def _latest_token(token: str) -> str:
    """The same seat's link to the new round, when the move just made (``newround``)
    began one; otherwise ``token``."""
    with reading(service().engine) as session:
        board, _seat = seat_or_404(session, token)
        successor = board.next_board_id and session.get(Board, board.next_board_id)
        return successor.token(board.seat_of_token(token)) if successor else token


def _listed(session, me: int) -> tuple[list[Board], list[Board], dict[int, str]]:
    """The boards "Your boards" lists for player ``me``: the running ones, those waiting
    for them first, then the others, each group by deadline; a few finished ones, the
    latest first; and the opponents' names."""
    query = select(Board).where(or_(Board.seat0_id == me, Board.seat1_id == me))
    active = session.exec(query.where(Board.status == "active")).all()
    finished = session.exec(query.where(Board.status != "active").order_by(Board.last_move_at.desc())
                            .limit(FINISHED_SHOWN)).all()
    others = {b.player_id(1 - b.seat_of(me)) for b in [*active, *finished]}
    names = {p.id: player_name(p)
             for p in session.exec(select(Player).where(Player.id.in_(others)))} if others else {}
    far = datetime.max.replace(tzinfo=timezone.utc)
    active = sorted(active, key=lambda b: (b.to_move not in (None, b.seat_of(me)), b.expire_due_at or far))
    return active, list(finished), names


def boards_mark(session, me: int, listed=None) -> str:
    """A digest of what "Your boards" shows player ``me`` (boards, opponents, whose
    turn, deadlines; ``listed``: ``_listed``'s answer, when read already): a live page
    compares it to know when its list is out of date."""
    active, finished, names = listed or _listed(session, me)
    away = boardpage.away_on(session, active)
    shown = [(b.id, b.status, b.to_move, b.seat_of(me), names[b.player_id(1 - b.seat_of(me))],
              b.expire_due_at.isoformat() if b.expire_due_at and b.status == "active" else None, away.get(b.id))
             for b in [*active, *finished]]
    return hashlib.sha256(repr(shown).encode()).hexdigest()[:20]


def my_boards(session, board: Board, seat: int, listed=None) -> list[dict]:
    """This seat's player's boards, each with its play link (``_listed``'s, in its order)."""
    me = board.player_id(seat)
    active, finished, names = listed or _listed(session, me)
    away = boardpage.away_on(session, active)
    rows = []
    for b in active:
        mine = b.seat_of(me)
        rows.append({"board": b, "title": get_game(b.game).title, "opponent": names[b.player_id(1 - mine)],
                     "token": b.token(mine), "current": b.id == board.id, "away": away.get(b.id),
                     "turn": _("your turn") if b.to_move == mine else _("either player may act")
                     if b.to_move is None else _("%(name)s's turn", name=names[b.player_id(b.to_move)])})
    for b in finished:
        mine = b.seat_of(me)
        rows.append({"board": b, "title": get_game(b.game).title, "opponent": names[b.player_id(1 - mine)],
                     "token": b.token(mine), "current": b.id == board.id, "turn": _("finished")})
    return rows


def _page(token: str, template: str, *, error=None, notice=None, typed=None, status=200, confirm_resign=False):
    with reading(service().engine) as session:
        board, seat = seat_or_404(session, token)
        view = view_of(session, board)
        rows, mark = [], None
        if template == "board.html":
            listed = _listed(session, board.player_id(seat))
            rows, mark = my_boards(session, board, seat, listed), boards_mark(session, board.player_id(seat), listed)
        successor = board.next_board_id and session.get(Board, board.next_board_id)
        notes = boardpage.away_and_chats(session, board, seat)
        watching = boardpage.watched_by(session, board)  # they read the comments too
        answerer = answering_seat(session, board, seat)
    cell = request.args.get("cell", "").strip()[:12]
    choices = _orientations(view, seat, cell)
    if cell and not choices and error is None and view.game.name == "dragons":  # a cell link, or one typed
        error = _no_orientation(view, seat, cell)
    page = board_context(view, seat, answerer, token=token, csrf=csrf_token(token), error=error, notice=notice,
                         confirm_resign=confirm_resign and view.board.status == "active",
                         typed=typed or {}, my_boards=rows, cell=cell, choices=choices,
                         next_token=successor.token(seat) if successor else None, watcher_count=watching,
                         boards_mark=mark, **notes)
    return render_template(template, **page), status


@bp.route("/play/<token>", methods=["GET", "POST"])
def play(token: str):
    if request.method != "POST":  # GET, and HEAD (its headers)
        return _page(token, "board.html")
    if not same_origin() or not secrets_match(request.form.get("csrf", ""), csrf_token(token)):
        with reading(service().engine) as session:
            seat_or_404(session, token)  # a link that is not valid says so first
        abort(403, _("This form was not sent from your private page; reload the page and try again."))
    move, asserted = split_move_number(without_invisible(request.form.get("move", "")).strip())  # "D4#12", as in a mail
    comment = request.form.get("comment", "").strip()
    typed = {"move": move, "comment": comment}
    number = request.form.get("number", "").strip()
    if number and not (number.isascii() and number.isdigit() and len(number) < 10):
        return _page(token, "board.html", typed=typed, status=400,
                     error=_("The form's move number \"%(number)s\" is not a number; reload the page and try "
                             "again.", number=as_typed(number[:20])))
    number = asserted if asserted is not None else int(number) if number else None
    if not move and request.form.get("ask") == "resign":  # the Resign button without the script: asked once more
        return _page(token, "board.html", confirm_resign=True)
    if not move:
        return _page(token, "board.html", error=_("Write a move in the box first."), typed=typed, status=400)
    word = _spelled_out(token, move)  # "newr" asks for a new round as "newround" does
    if word == "newround":
        from .rooms import new_game_quota  # rooms builds on this module

        with new_game_quota() as count:  # a new round makes a board, as /new does: the same quota
            result = service().play_by_token(token, move, comment, number)
            if result.status == "applied" and _latest_token(token) != token:
                count()
    else:
        result = service().play_by_token(token, move, comment, number)
    if result.status == "applied":
        return redirect(url_for("play.play", token=_latest_token(token)), code=303)
    if result.board is None:
        abort(404, result.error)
    notice = _already_played(token, number, word)
    if notice:
        return _page(token, "board.html", notice=notice)
    return _page(token, "board.html", error=result.error, typed=typed, status=422)


@bp.get("/play/<token>/live")
def play_fragment(token: str):
    """The changing part of the play page, for the script to swap in."""
    return _page(token, "_live.html")


@bp.get("/play/<token>/boards")
def boards_fragment(token: str):
    """The page's "Your boards" list, for the script to swap in when one of the
    player's boards changed (or a new one began)."""
    with reading(service().engine) as session:
        board, seat = seat_or_404(session, token)
        listed = my_boards(session, board, seat)
    return render_template("_my_boards.html", my_boards=listed)


@bp.get("/play/<token>/summary")
def summary(token: str):
    """What ``/new`` lists of a game this browser remembers, as it stands now and in
    the page's language (JSON): its latest round's board, title, players, status
    line and this seat's link to it."""
    from .rooms import room_title

    with reading(service().engine) as session:
        board, _seat = seat_or_404(session, token)
        own = board.seat_of_token(token)
        if board.room_id is not None:
            board = latest_board(session, board.room_id)
        view = view_of(session, board)
    return jsonify(board=board.id, title=room_title(board), status=view.status_line(),
                   players=_("%(first)s vs %(second)s", first=view.name(0), second=view.name(1)),
                   href=url_for("play.play", token=board.token(own)))


@bp.get("/play/<token>/explain")
def explain(token: str):
    """Why the move in ``?move=`` cannot be played now (JSON ``{"error": sentence}``;
    null when it could be)."""
    with reading(service().engine) as session:
        board, seat = seat_or_404(session, token)
        view = latest_view(session, board)
    move = request.args.get("move", "").strip()
    if not move:
        return jsonify(error=_("Choose a point on the board, or write a move in the box."))
    return jsonify(error=boardpage.explain(view, seat, move))


def _orientations(view, seat: int, cell: str) -> list[tuple[str, str]]:
    """The fitting orientations of ``cell`` (Dragons), or [] when nothing fits or the
    seat is not to move."""
    if not cell or not boardpage.acting(view, seat) or view.game.name != "dragons":
        return []
    try:
        return [(f"{view.game.format_move(view.game.parse_move(f'{cell}:{name}', view.state))}", svg)
                for name, svg in dragons_orientation_choices(view.state, cell)]
    except MoveError:
        return []


def _no_orientation(view, seat: int, cell: str) -> str:
    """Why the Dragons cell ``cell`` offers no orientation to choose, in a sentence
    about what the player asked: the turn, the cell's name, a taken or lone cell,
    or no orientation fitting."""
    if not boardpage.acting(view, seat):
        return boardpage.explain(view, seat, cell) or _("You cannot move on this board now.")
    if not cell:
        return _("Name a cell: a tile number and a direction, like 7ne.")
    try:
        view.game.parse_cell(cell, view.state)
        view.game.parse_move(f"{cell}:F0", view.state)  # a taken cell, or one next to no tile
    except MoveError as error:
        return game_sentence(error)
    return _("No orientation fits %(cell)s now.", cell=cell)


@bp.get("/play/<token>/orientations")
def orientations(token: str):
    """A Dragons cell's fitting orientations as a form of buttons (HTML fragment)."""
    cell = request.args.get("cell", "").strip()[:12]
    with reading(service().engine) as session:
        board, seat = seat_or_404(session, token)
        view = latest_view(session, board)
    if view.game.name != "dragons":
        abort(404, _("Only Dragons boards have orientations to choose."))
    choices = _orientations(view, seat, cell)
    if not choices:
        return render_template("_orientations.html", choices=[], cell=cell, csrf=csrf_token(token), token=token,
                               view=view, error=_no_orientation(view, seat, cell)), 422
    return render_template("_orientations.html", choices=choices, cell=cell, csrf=csrf_token(token),
                           token=token, view=view, error=None)
