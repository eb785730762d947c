"""Server-sent events for open pages: ``GET /games/<n>/events`` and
``GET /play/<token>/events``.

A stream first compares the board version the page knows (``?known=``, or
the ``Last-Event-ID`` of a reconnecting EventSource) with the database, so a
page that was offline catches up at once; then it waits for the unit of
work's events (``pbm.service.events``) and sends ``change`` with the board's
new version (the page then fetches its new board part). The version rises
with every change a page shows, not only with moves: a request between the
players and its answer, a queued or submitted move, a chat, a vacation. It ends after STREAM_SECONDS, so
a thread is never held long; the page reconnects.

A play page registers its tab (``?tab=``; ``claim=1`` on its first
connection): opening the same seat in another tab takes the seat over, and
the older tab's stream gets ``replaced`` (seed 003).

A play page also follows its list of the player's boards ("Your boards"): it
sends the digest of the list it shows (``?boards=``, ``play.boards_mark``); the
stream compares it with the database as it opens, and again whenever one of
the player's boards changes or a new one begins (``events.player_mark``), and
sends ``boards`` with the new digest when the list differs (the page then
fetches its new list). Changes of other players' boards wake no such stream.

Each stream holds a server thread while it is open, so a process serves at
most MAX_STREAMS at once (``pbm serve`` runs enough threads for them and
eight more for pages); one more is told 503 and its page tries again later.
One client address holds at most a quarter of them (``Streams``).
"""

from __future__ import annotations

import ipaddress
import json
import re
import threading
import time

from flask import Blueprint, Response, current_app, request
from sqlalchemy.exc import DBAPIError

from ..db import reading
from ..service import events
from .pages import board_or_404, service
from .play import boards_mark, seat_or_404

bp = Blueprint("live", __name__)

MAX_STREAMS = 56
STREAM_SECONDS = 25.0
HEARTBEAT_SECONDS = 8.0  # a comment line this often finds a closed connection
LISTENER_READY_SECONDS = 5.0

class Streams:
    """How many streams one application serves now, against its cap; and per client
    address, against a quarter of it, so that one client cannot take every stream
    (loopback is not counted apart: behind a reverse proxy every client comes from it)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.open = 0
        self.by_client: dict[str, int] = {}

    def reserve(self, cap: int, client: str | None) -> bool:
        with self.lock:
            mine = self.by_client.get(client, 0) if client else 0
            if self.open >= cap or mine >= max(2, cap // 4):
                return False
            self.open += 1
            if client:
                self.by_client[client] = mine + 1
            return True

    def release(self, client: str | None) -> None:
        with self.lock:
            self.open -= 1
            if client:
                left = self.by_client.pop(client) - 1
                if left:
                    self.by_client[client] = left


def _client() -> str | None:
    """The address a stream is counted against (None: loopback, a proxy or this machine)."""
    try:
        return None if ipaddress.ip_address(request.remote_addr or "127.0.0.1").is_loopback else request.remote_addr
    except ValueError:
        return request.remote_addr


def streams() -> Streams:
    return current_app.extensions.setdefault("pbm_streams", Streams())


def _listen() -> None:
    """Start this process's listener for the commits of other processes the first time
    a page streams: LISTEN on PostgreSQL, a datagram socket on a SQLite file (an
    in-memory database has one process)."""
    engine = service().engine
    if engine.dialect.name == "postgresql":
        listener = events.start_listener(service().settings.database_url)
    elif (directory := events.live_directory(engine)) is not None:
        listener = events.start_sqlite_listener(directory)
    else:
        return
    listener.listening.wait(LISTENER_READY_SECONDS)


def _known() -> int:
    value = request.headers.get("Last-Event-ID") or request.args.get("known", "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else -1


def _event(name: str, data: dict, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data)}\n\n"


MARK = re.compile(r"[0-9a-f]{1,64}")


def _stream(board_id: int, seat: str | None = None, tab: str | None = None, player: int | None = None) -> Response:
    """The stream of one page; ``player``: a play page's player, whose list of boards
    it follows when the page sends ``?boards=``."""
    slots, client = streams(), _client()
    if not slots.reserve(current_app.config.get("PBM_MAX_STREAMS", MAX_STREAMS), client):
        return Response("Too many pages are open on this server; this page tries again shortly.\n",
                        503, {"Retry-After": "10", "Cache-Control": "no-store"}, mimetype="text/plain")
    shown = request.args.get("boards") if player is not None else None
    if shown is not None and not MARK.fullmatch(shown):
        shown = ""  # a list the page cannot have: it is sent the current one
    engine = service().engine
    try:
        _listen()
        mark = events.player_mark(player) if shown is not None else 0  # before the read: nothing falls between
        with reading(engine) as session:
            version = board_or_404(session, board_id).version
            listed = boards_mark(session, player) if shown is not None else None
    except BaseException:
        slots.release(client)
        raise
    known = _known()
    seconds = current_app.config.get("PBM_STREAM_SECONDS", STREAM_SECONDS)

    def list_now() -> str | None:
        """The digest of the player's list now; None when the database cannot be read."""
        try:
            with reading(engine) as session:
                return boards_mark(session, player)
        except DBAPIError:
            return None

    def generate():
        nonlocal known, mark, shown
        yield "retry: 1000\n\n"
        if version != known:
            known = version
            yield _event("change", {"version": version}, version)
        if listed != shown:
            shown = listed
            yield _event("boards", {"mark": shown})
        deadline = time.monotonic() + seconds
        following = player if shown is not None else None
        while (left := deadline - time.monotonic()) > 0:
            change = events.wait(board_id, known, min(left, HEARTBEAT_SECONDS), seat, tab, following, mark)
            if change is None:
                yield ": still here\n\n"
            elif change.kind == "change":
                known = change.version
                yield _event("change", {"version": known}, known)
            elif change.kind == "boards":
                mark = change.version
                now = list_now()
                if now is None:  # the page reconnects and compares again
                    yield _event("again", {})
                    return
                if now != shown:
                    shown = now
                    yield _event("boards", {"mark": shown})
            else:  # replaced by another tab, or told to check the database again
                yield _event(change.kind, {})
                return
        yield _event("again", {})

    response = Response(generate(), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    response.call_on_close(lambda: slots.release(client))  # every WSGI server closes the response
    return response


@bp.get("/games/<int:board_id>/events")
def board_events(board_id: int):
    return _stream(board_id)


TAB = re.compile(r"[A-Za-z0-9_-]{8,64}")


@bp.get("/play/<token>/events")
def play_events(token: str):
    with reading(service().engine) as session:
        board, seat_index = seat_or_404(session, token)
    player = board.player_id(seat_index)
    tab = request.args.get("tab", "")
    if not TAB.fullmatch(tab):
        return _stream(board.id, player=player)
    seat = f"{board.id}:{seat_index}"
    if request.args.get("claim") == "1":
        events.announce_seat(service().engine, seat, tab)
    elif events.holder(seat) is None:  # this process restarted: the tab keeps its seat
        events.take_seat(seat, tab)
    return _stream(board.id, seat, tab, player)
