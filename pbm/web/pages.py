"""Web pages: status list, board pages (HTML, text, JSON), private play page, health."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from flask import Blueprint, Response, abort, current_app, jsonify, redirect, render_template, request, url_for
from sqlalchemy import or_, text
from sqlmodel import select

from ..boardview import BoardView, game_record, load_players, load_records
from ..db import reading
from ..games import game_names, get_game
from ..models import Board, Player

bp = Blueprint("pages", __name__)


def _server():
    return current_app.extensions["pbm"]


def _view(session, board: Board) -> BoardView:
    players, records = load_players(session, board), load_records(session, board)
    move = request.args.get("move")
    if move is None:
        return BoardView.current(board, players, records)
    try:
        number = int(move)
    except ValueError:
        abort(400, f"?move= needs a move number from 0 to {board.move_count}.")
    if not 0 <= number <= board.move_count:
        abort(400, f"Board {board.id} has moves 0 to {board.move_count}.")
    return BoardView.at(board, players, records, number)


def _board_or_404(session, board_id: int) -> Board:
    board = session.get(Board, board_id)
    if board is None:
        abort(404, f"There is no board {board_id}.")
    return board


@bp.get("/")
def status():
    game = request.args.get("game", "").strip().lower()
    player = request.args.get("player", "").strip().lower()
    with reading(_server().engine) as session:
        query = select(Board).order_by(Board.status, Board.last_move_at.desc())
        if game:
            query = query.where(Board.game == game)
        if player:
            ids = select(Player.id).where(Player.userid == player)
            query = query.where(or_(Board.seat0_id.in_(ids), Board.seat1_id.in_(ids)))
        boards = session.exec(query.limit(500)).all()
        player_ids = {b.seat0_id for b in boards} | {b.seat1_id for b in boards}
        names = {p.id: p.userid for p in session.exec(select(Player).where(Player.id.in_(player_ids)))}
    rows = [{
        "board": b,
        "title": get_game(b.game).title,
        "players": (names[b.seat0_id], names[b.seat1_id]),
        "to_move": names[b.player_id(b.to_move)] if b.to_move is not None else None,
    } for b in boards]
    return render_template("status.html", rows=rows, games=game_names(), game=game, player=player)


@bp.get("/games/<int:board_id>")
def board_page(board_id: int):
    with reading(_server().engine) as session:
        view = _view(session, _board_or_404(session, board_id))
    return render_template("board.html", view=view, play_token=None, error=None)


@bp.get("/games/<int:board_id>.txt")
def board_text(board_id: int):
    with reading(_server().engine) as session:
        view = _view(session, _board_or_404(session, board_id))
    return Response(view.text(recent=None), mimetype="text/plain")


@bp.get("/games/<int:board_id>.json")
def board_json(board_id: int):
    with reading(_server().engine) as session:
        view = _view(session, _board_or_404(session, board_id))
    return jsonify(view.to_json())


@bp.get("/games/<int:board_id>.sgf")
def board_record(board_id: int):
    with reading(_server().engine) as session:
        board = _board_or_404(session, board_id)
        game = get_game(board.game)
        if game.info.record_format != "sgf":
            abort(404, f"Board {board_id} is {game.title}, which has no SGF record.")
        _, mime, data = game_record(game, board, load_players(session, board), load_records(session, board))
    return Response(data, mimetype=mime,
                    headers={"Content-Disposition": f'attachment; filename="board-{board_id}.sgf"'})


def _csrf_token(play_token: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, f"play:{play_token}".encode(), hashlib.sha256).hexdigest()


def _same_origin() -> bool:
    """Browsers send Origin (or Referer) on a form POST; another site's must not pass."""
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if origin is None:  # not sent by a browser; the form's token still has to match
        return True
    return urlsplit(origin).netloc == request.host


def _play_view(token: str):
    with reading(_server().engine) as session:
        board = session.exec(select(Board).where(or_(Board.token0 == token, Board.token1 == token))).first()
        if board is None:
            abort(404, "This private link is not valid.")
        return _view(session, board), (0 if board.token0 == token else 1)


@bp.route("/play/<token>", methods=["GET", "POST"])
def play(token: str):
    error = None
    status = 200
    if request.method == "POST":
        if not _same_origin() or not hmac.compare_digest(request.form.get("csrf", ""), _csrf_token(token)):
            abort(403, "This form was not sent from your private page; reload the page and try again.")
        move = request.form.get("move", "").strip()
        number = request.form.get("number", "")
        if not move:
            error, status = "Write a move in the box first.", 400
        else:
            result = _server().play_by_token(token, move, request.form.get("comment", "").strip(),
                                             int(number) if number.isdigit() else None)
            if result.status == "applied":
                return redirect(url_for("pages.play", token=token), code=303)
            if result.board is None:
                abort(404, result.error)
            error, status = result.error, 422
    view, seat = _play_view(token)
    return render_template("board.html", view=view, play_token=token, seat=seat, error=error,
                           csrf=_csrf_token(token)), status


@bp.get("/healthz")
def healthz():
    try:
        with reading(_server().engine) as session:
            session.exec(text("SELECT 1")).one()
    except Exception as error:  # any database failure means "not healthy"
        return jsonify(status="error", database=str(error.__class__.__name__)), 503
    return jsonify(status="ok", database="ok")
