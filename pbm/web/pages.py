"""Public pages: the status list, a board (HTML page, live fragment, text, JSON,
SGF) and the health check. The private play page is in ``play.py``."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlsplit

from flask import Blueprint, Response, abort, current_app, jsonify, redirect, render_template, request, url_for
from sqlalchemy import func, or_, text
from sqlalchemy.exc import DBAPIError
from sqlmodel import select

from .. import i18n
from ..boardview import BoardView, entry_times, game_record, load_players, load_records, player_name
from ..config import folder_problem
from ..db import probe_write, reading
from ..migrate import schema_problem
from ..games import as_typed, game_names, get_game
from ..i18n import N_
from ..i18n import gettext as _
from ..models import Board, Player
from . import boardpage

log = logging.getLogger(__name__)
bp = Blueprint("pages", __name__)


def service():
    return current_app.extensions["pbm"]


def latest_view(session, board: Board) -> BoardView:
    return BoardView.current(board, load_players(session, board), load_records(session, board))


def view_of(session, board: Board) -> BoardView:
    """The board at ``?move=k`` (default: the latest position); 400 for a bad k."""
    move = request.args.get("move")
    if move is None or move == "":
        return latest_view(session, board)
    players, records = load_players(session, board), load_records(session, board)
    if not (move.isascii() and move.isdigit()) or len(move) > 9:
        abort(400, _("?move= needs a move number from 0 to %(last)s.", last=board.move_count))
    number = int(move)
    if number > board.move_count:
        abort(400, _("Board %(board)s has moves 0 to %(last)s.", board=board.id, last=board.move_count))
    return BoardView.at(board, players, records, number)


def board_or_404(session, board_id: int) -> Board:
    board = session.get(Board, board_id) if board_id < 2**31 else None
    if board is None:
        abort(404, _("There is no board %(board)s.", board=board_id))
    return board


def board_context(view: BoardView, seat: int | None = None, answerer: int | None = None, **page) -> dict:
    """What the board templates need: the view, what ``seat`` may do (a play page;
    ``answerer`` is the seat whose answer to a request the page sends, default
    ``seat``), and the page's own values in ``page`` (which win)."""
    acting = boardpage.acting(view, seat)
    picture = boardpage.picture(view, interactive=acting)
    return {
        "token": None, "csrf": None, "error": None, "notice": None, "confirm_resign": False, "typed": {},
        "my_boards": [], "watchers": 0,
        "away": [], "chats": [], "chat_count": 0,
        "choices": [], "cell": "", "next_token": None,
        "view": view,
        "seat": seat,
        "acting": acting,
        "picture": picture,
        "frame_size": boardpage.frame_size(picture),
        "targets": boardpage.targets(view, seat) if acting else None,
        "buttons": boardpage.buttons(view, seat, answerer),
        "history": boardpage.history(view, url_for("play.play", token=page["token"]) if page.get("token")
                                     else url_for("pages.board_page", board_id=view.board.id)),
        "listed": boardpage.listed_moves(view, everything=request.args.get("moves") == "all"),
        "hint": _(boardpage.EXAMPLES.get(view.game.name, N_("a move"))),
        "playable": view.game.playable(view.state) if hasattr(view.game, "playable") and view.is_latest
        and view.outcome is None else [],
        **page,
    }


STATUS_PAGE_SIZE = 500  # boards one status page lists; ?page=2 lists the next ones


@bp.get("/")
def status():
    """The boards, running ones first, then by last activity, STATUS_PAGE_SIZE a page
    (``?page=n``, 400 for a page that is not there); filtered by ``?game=`` and
    ``?player=`` (a userid, or a name as the table shows it)."""
    game = request.args.get("game", "").strip().lower()
    typed = request.args.get("player", "").strip()[:100]
    player = typed.lower()
    if game and game not in game_names():
        abort(400, _("There is no game called \"%(name)s\" to filter by; the games are %(games)s.",
                     name=as_typed(game[:40]), games=", ".join(game_names())))
    asked = request.args.get("page", "").strip() or "1"
    with reading(service().engine) as session:
        matching = []
        if game:
            matching.append(Board.game == game)
        if player:
            # a userid, or a name as the table shows it (SQLite lowercases ASCII letters only)
            ids = select(Player.id).where(or_(Player.userid == player, Player.display_name == typed,
                                              func.lower(Player.display_name) == player))
            matching.append(or_(Board.seat0_id.in_(ids), Board.seat1_id.in_(ids)))
        count = session.exec(select(func.count()).select_from(Board).where(*matching)).one()
        pages = max(1, -(-count // STATUS_PAGE_SIZE))
        if not (asked.isascii() and asked.isdigit() and len(asked) < 10 and 1 <= int(asked) <= pages):
            abort(400, _("?page= needs a page number from 1 to %(last)s.", last=pages))
        page = int(asked)
        first = (page - 1) * STATUS_PAGE_SIZE
        # the id last: boards alike in the rest keep one order from page to page
        boards = session.exec(select(Board).where(*matching)
                              .order_by(Board.status, Board.last_move_at.desc(), Board.id.desc())
                              .offset(first).limit(STATUS_PAGE_SIZE)).all()
        player_ids = {b.seat0_id for b in boards} | {b.seat1_id for b in boards}
        names = {p.id: player_name(p) for p in session.exec(select(Player).where(Player.id.in_(player_ids)))}
        away = boardpage.away_on(session, boards)
    rows = [{
        "board": b,
        "title": get_game(b.game).title,
        "players": (names[b.seat0_id], names[b.seat1_id]),
        "to_move": names[b.player_id(b.to_move)] if b.to_move is not None else None,
        "away": away.get(b.id),
    } for b in boards]
    return render_template("status.html", rows=rows, games=game_names(), game=game, player=typed, page=page,
                           pages=pages, count=count, first=first + 1, last=first + len(rows))


@bp.get("/games/<int:board_id>")
def board_page(board_id: int):
    return _public_board("board.html", board_id)


@bp.get("/games/<int:board_id>/live")
def board_fragment(board_id: int):
    """The changing part of the board page, for the script to swap in after a move
    (the count of watchers too: watching raises the board's version)."""
    return _public_board("_live.html", board_id)


def _public_board(template: str, board_id: int):
    """``template`` (the board page, or its changing part) for anyone: no private link."""
    with reading(service().engine) as session:
        view = view_of(session, board_or_404(session, board_id))
        watched = boardpage.watched_by(session, view.board)
        notes = boardpage.away_and_chats(session, view.board, None)
    return render_template(template, **board_context(view, watchers=watched, **notes))


@bp.get("/games/<int:board_id>.txt")
def board_text(board_id: int):
    with reading(service().engine) as session:
        view = view_of(session, board_or_404(session, board_id))
    return Response(view.text(recent=None), mimetype="text/plain")


@bp.get("/games/<int:board_id>.json")
def board_json(board_id: int):
    with reading(service().engine) as session:
        view = view_of(session, board_or_404(session, board_id))
        times = entry_times(session, view.board)
    return jsonify(view.to_json(times))


@bp.get("/games/<int:board_id>.sgf")
def board_record(board_id: int):
    with reading(service().engine) as session:
        board = board_or_404(session, board_id)
        game = get_game(board.game)
        if game.info.record_format != "sgf":
            abort(404, _("Board %(board)s is %(game)s, which has no SGF record.", board=board_id, game=game.title))
        _filename, mime, data = game_record(game, board, load_players(session, board),
                                            load_records(session, board))
    return Response(data, mimetype=mime,
                    headers={"Content-Disposition": f'attachment; filename="board-{board_id}.sgf"'})


LANGUAGE_COOKIE = "lang"  # the language chosen with the switch on every page
LANGUAGE_COOKIE_DAYS = 365


def page_language() -> str:
    """A page's language: the one chosen with the switch (cookie ``lang``), else on a
    player's own page the language they chose for their mails (``language``, when not
    the default), else the best of Accept-Language, else English."""
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in i18n.LANGUAGES:
        return chosen
    token = (request.view_args or {}).get("token")
    if token and token.isascii() and token.isalnum() and request.blueprint in ("play", "live"):
        mine = _seat_language(token)
        if mine in i18n.LANGUAGES and mine != i18n.DEFAULT:
            return mine
    return request.accept_languages.best_match(i18n.LANGUAGES) or i18n.DEFAULT


def _seat_language(token: str) -> str | None:
    """The mail language of the player whose private token this is; None also when the
    database cannot say (its error page must not need the database)."""
    try:
        with reading(service().engine) as session:
            return session.exec(select(Player.language).join(Board, or_(
                (Board.token0 == token) & (Board.seat0_id == Player.id),
                (Board.token1 == token) & (Board.seat1_id == Player.id)))).first()
    except DBAPIError:
        return None


@bp.get("/language/<code>")
def switch_language(code: str):
    """The language switch (a plain link on every page): remember ``code`` in the
    ``lang`` cookie and go back to ``?next=`` (a path on this site)."""
    if code not in i18n.LANGUAGES:
        abort(404, _("There is no language \"%(code)s\" here; choose one of %(known)s.",
                     code=as_typed(code[:10]), known=", ".join(i18n.LANGUAGES)))
    response = redirect(local_path(request.args.get("next", "/")), code=303)
    response.set_cookie(LANGUAGE_COOKIE, code, max_age=LANGUAGE_COOKIE_DAYS * 24 * 3600, secure=request.is_secure,
                        httponly=True, samesite="Lax")
    return response


def local_path(target: str) -> str:
    """``target`` when it is a path on this site, otherwise ``/``. A browser drops
    tabs and line breaks from a URL and reads a backslash as a slash, so ``/``, a
    tab, ``/host`` would lead to another site: a target holding any of them, or whitespace, or
    any other control character, is refused, as is one naming a scheme or a host."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target \
            or any(character <= " " or character == "\x7f" for character in target):
        return "/"
    parts = urlsplit(target)
    return "/" if parts.scheme or parts.netloc else target


@bp.get("/robots.txt")
def robots():
    """Private links (a play page, an invitation) are credentials: no crawler may
    follow one it found in a public mail archive."""
    return Response("User-agent: *\nDisallow: /play/\nDisallow: /join/\n", mimetype="text/plain")


@bp.get("/favicon.ico")
def favicon():
    """No icon: the pages say so themselves (``<link rel="icon" href="data:,">``), but
    a browser showing a text, JSON or SGF answer asks for ``/favicon.ico``, and a 404
    there is an error in its console."""
    return Response(status=204, headers={"Cache-Control": "public, max-age=86400"})


@bp.get("/healthz")
def healthz():
    """200 when the database answers and takes writes; otherwise 503 and a sentence
    saying which (a read-only database would refuse every move and mail)."""
    engine = service().engine
    try:
        with reading(engine) as session:
            session.exec(text("SELECT 1")).one()
    except Exception as error:  # any database failure means "not healthy"
        return _unhealthy(error, "The database cannot be reached.")
    try:
        probe_write(engine)
    except Exception as error:
        if _without_schema(engine):  # a write fails on a missing table too
            return _unhealthy(error, "The database lacks this version's tables: run `pbm db upgrade`.")
        return _unhealthy(error, "The database refuses writes (is it read-only?): "
                                 "no move and no mail can be saved.")
    settings = service().settings
    if settings.mail_backend == "maildir" and (problem := _maildir_problem(Path(settings.maildir))):
        public, folder = problem
        log.error("/healthz: %s (the Maildir %s, at %s)", public, settings.maildir, folder)
        return jsonify(status="error", database="ok", error=public), 503
    return jsonify(status="ok", database="ok")


MAILDIR_PROBLEMS = {"a folder is not writable": "The Maildir cannot be written (a folder is not writable): no "
                                                "mail can be delivered.",
                    "a file stands where a folder must be": "The Maildir cannot be made (a file stands where a folder "
                                                            "must be): no mail can be delivered."}


def _maildir_problem(maildir: Path) -> tuple[str, Path] | None:
    """Why no mail can be written into ``maildir`` now (its folders are made at the first
    mail; the settings were checked at start, but a folder may have changed since) and
    the folder at fault, or None. The sentence names no path: /healthz is public."""
    for folder in (maildir / "new", maildir / "tmp"):
        if (problem := folder_problem(folder)) is not None:
            return MAILDIR_PROBLEMS[problem[0]], problem[1]
    return None


def _without_schema(engine) -> bool:
    """Whether the database lacks the newest schema (asked only once a write failed)."""
    try:
        return schema_problem(engine) is not None
    except Exception:  # it cannot say: the write's failure stands as it is
        return False


def _unhealthy(error: Exception, sentence: str):
    """503 with ``sentence``; what failed, which may name hosts and paths, goes to the
    log only (/healthz is public)."""
    log.error("/healthz: %s (%s: %s)", sentence, error.__class__.__name__, error)
    return jsonify(status="error", database="error", error=sentence), 503
