"""Games started in the browser, no account needed (seed 003): ``/new`` (the game,
its options and the way to play), ``/join/<invite>`` (a friend's invitation), and
the room panel on a room's play page (``room_panel``, used by ``_room.html``).

A browser that holds a seat of a friend room keeps its key in the cookie
``pbm_seat``, scoped to that room's invitation path; opening the invitation
again with it gives the seat back. ``/join`` answers 409 with the "room is
full" page to any other browser, 410 when the room closed before anyone joined,
404 for an unknown invitation. Link previewers (chat apps fetching a shared
link to show a card) and ``HEAD`` requests see the invitation without taking
the seat. Same-device, computer and friend games are remembered by the browser
itself (``static/rooms.js``, localStorage), and ``/new`` lists them to resume.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from flask import Blueprint, Response, abort, current_app, make_response, redirect, render_template, request, url_for

from limits import RateLimitItemPerHour
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from ..db import reading
from ..games import REGISTRY, as_typed, get_game
from ..i18n import N_, current, ngettext, number
from ..i18n import gettext as _
from ..service import rooms
from ..service.errors import PlayerError
from .pages import service
from .forgery import form_key, form_key_valid, same_origin

bp = Blueprint("rooms", __name__)

COOKIE = "pbm_seat"
COOKIE_DAYS = 180  # a browser keeps its seat's key this long
INVITATION_MAILS_PER_CLIENT = 5  # invitations one client address may have mailed an hour (to any addresses)
FIELDS = ("game", "mode", "side", "name", "guest_name", "email", "form_key")  # every other field is a game option
# User agents that fetch a shared link to show a preview card: they must not take the seat.
# "bot" as a word or before "/" (Googlebot/2.1), never inside a name (a CUBOT phone is a person's)
PREVIEWERS = re.compile(r"\bbot\b|bot/|crawler|spider|preview|facebookexternalhit|whatsapp|slack|discord|"
                        r"telegram|skype|embedly|linkedin|mastodon|vkshare|pagerenderer|viber|iframely|"
                        r"microsoft office|google-safety", re.IGNORECASE)


# The options' short names, as a room's title lists the chosen ones ("Go (size 13)")
# and the /new page names the fixed ones.
OPTION_WORDS = {"size": N_("size"), "komi": N_("Komi"), "margin": N_("margin"), "dragons": N_("dragons"),
                "num_tiles": N_("tiles"), "tantrix": N_("Tantrix scoring")}


def _games() -> list:
    """The games, Go first (the seed's game), then as registered."""
    return sorted(REGISTRY.values(), key=lambda g: g.name != "go")


def _form_page(game_name: str, typed: dict, error: str | None = None, status: int = 200):
    game = get_game(game_name)
    settings = service().settings
    options = [{"spec": spec, "value": typed.get(spec.name, "" if spec.default is None else str(spec.default)),
                "label": rooms.option_label(spec)} for spec in rooms.options_offered(game.name)]
    return render_template("new.html", games=_games(), game=game, options=options, typed=typed, error=error,
                           side_names=[_(side) for side in game.sides], option_words=OPTION_WORDS,
                           refusal=rooms.computer_refusal(game.name, settings),
                           fixed={name: number(value) for name, value in rooms.FIXED_OPTIONS.get(game.name, {}).items()},
                           expire_days=int(rooms.EXPIRE_DAYS), form_key=form_key()), status


@bp.get("/new")
def new_form():
    name = request.args.get("game", "go").strip().lower()
    if name not in REGISTRY:
        titles = ", ".join(g.title for g in _games())
        abort(404, _("There is no game called \"%(name)s\" here; choose one of %(games)s.", name=as_typed(name[:40]),
                     games=titles))
    return _form_page(name, {})


@bp.post("/new")
def new_game():
    if not same_origin() or request.headers.get("Origin") == "null" and not form_key_valid():
        abort(403, _("This form was not sent from this site's new game page; open /new and try again."))
    with new_game_quota() as count:
        return _start_from_form(count)


def _start_from_form(count: Callable[[], None]) -> Response:
    """Start the game the form asks for and answer with its play page (``count``
    once it exists), or the form again with the reason it was refused."""
    form = request.form
    typed = {key: value[:200] for key, value in form.items()}
    name = form.get("game", "").strip().lower()
    options = {key: value for key, value in form.items() if key not in FIELDS}
    shown = name if name in REGISTRY else "go"
    mailing = form.get("mode") == rooms.FRIEND and bool((form.get("email") or "").strip())
    invitations, invitation_limit = _invitation_window()
    address = request.remote_addr or "?"
    if mailing and not invitations.test(invitation_limit, "invite", address):
        abort(429, ngettext("This address has had %(num)s invitation mailed in the last hour, the most allowed; "
                            "leave your friend's address empty and send the link yourself.", "This address has "
                            "had %(num)s invitations mailed in the last hour, the most allowed; leave your "
                            "friend's address empty and send the link yourself.", invitation_limit.amount,
                            num=invitation_limit.amount))
    try:
        started = rooms.start(service().engine, service().settings, game=name, mode=form.get("mode", ""),
                              options=options, side=form.get("side"), name=form.get("name"),
                              guest_name=form.get("guest_name"), address=form.get("email"),
                              language=current())  # the page's: the invitation mail speaks it
    except PlayerError as error:
        return _form_page(shown, typed, str(error), 400)
    count()
    if mailing:
        invitations.hit(invitation_limit, "invite", address)
    response = redirect(url_for("play.play", token=started.token), code=303)
    if started.host_key:
        _keep(response, started.invite, started.host_key)
    return response


def _new_games_window() -> tuple[MovingWindowRateLimiter, RateLimitItemPerHour]:
    """One client address starts at most ``new_games_per_hour`` games an hour (each
    makes a room, a board and two seats); a refused form counts for nothing. Counted
    per process, in memory: behind a proxy, the proxy must pass the client's address
    (see README)."""
    window = current_app.extensions.setdefault("pbm_new_games", MovingWindowRateLimiter(MemoryStorage()))
    return window, RateLimitItemPerHour(service().settings.new_games_per_hour)


def _invitation_window() -> tuple[MovingWindowRateLimiter, RateLimitItemPerHour]:
    """One client address has at most INVITATION_MAILS_PER_CLIENT invitations mailed an
    hour, whatever addresses it types (each address gets at most 3 an hour, but a new
    address in each game would let one client mail strangers by the hundred). Counted as
    the games are, per process and in memory, under the same lock."""
    window = current_app.extensions.setdefault("pbm_invitation_mails", MovingWindowRateLimiter(MemoryStorage()))
    return window, RateLimitItemPerHour(INVITATION_MAILS_PER_CLIENT)


@contextmanager
def new_game_quota() -> Iterator[Callable[[], None]]:
    """The /new quota around starting a game (on /new, or by a new round from a play
    page, which makes a board as /new does): 429 once this client address has started
    its games for the hour; the caller calls what this yields once its board is made.
    Checking, starting and counting are one step in this process (a lock), so a burst
    of simultaneous forms cannot all pass a quota checked before any of them counted."""
    window, limit = _new_games_window()
    address = request.remote_addr or "?"
    with _STARTING:
        if not window.test(limit, "new", address):
            abort(429, ngettext("This address has started %(num)s game in the last hour, the most allowed; finish "
                                "or resume it, or try again later.", "This address has started %(num)s games in the "
                                "last hour, the most allowed; finish or resume one of them, or try again later.",
                                limit.amount, num=limit.amount))
        yield lambda: window.hit(limit, "new", address)


_STARTING = threading.Lock()


def _keep(response, invite: str, key: str) -> None:
    """This browser keeps its seat's key for the room's invitation path only."""
    response.set_cookie(COOKIE, key, max_age=COOKIE_DAYS * 24 * 3600, path=url_for("rooms.join", invite=invite),
                        secure=request.is_secure, httponly=True, samesite="Lax")


@bp.get("/join/<invite>")
def join(invite: str):
    previewer = request.method == "HEAD" or bool(PREVIEWERS.search(request.headers.get("User-Agent", "")))
    joined = rooms.join(service().engine, service().settings, invite, request.cookies.get(COOKIE),
                        claim=not previewer)
    if joined.outcome == "unknown":
        abort(404, _("This invitation is not valid; ask your friend for the link again."))
    if joined.outcome == "seat":
        response = redirect(url_for("play.play", token=joined.token), code=303)
        if joined.key:
            _keep(response, invite, joined.key)
    elif joined.outcome == "full":
        response = make_response(render_template("room_full.html", title=joined.title), 409)
    else:  # "open" (shown to a previewer) or "closed"
        closed = joined.outcome == "closed"
        response = make_response(render_template("join.html", title=joined.title, closed=closed,
                                                 expire_days=int(rooms.EXPIRE_DAYS)), 410 if closed else 200)
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.app_template_global()
def room_panel(board, seat: int | None) -> dict | None:
    """What a room's play page shows about its room (None for a board started by
    mail): its mode, for the host of a friend room the invitation link and whether
    someone joined, and what the browser remembers of it."""
    if board.room_id is None or seat is None:
        return None
    with reading(service().engine) as session:
        room = rooms.room_of(session, board)
    if room is None:
        return None
    return {
        "room": room,
        "invite_url": rooms.invite_url(service().settings, room.invite) if room.mode == rooms.FRIEND and seat == 0
        else None,
        "joined": room.guest_key is not None,
        "closed": rooms.never_joined(room, board),
        "title": room_title(board),
        "expire_days": int(rooms.EXPIRE_DAYS),
    }


def room_title(board) -> str:
    """A room's game as the browser's list of games names it, with the options
    chosen, in the page's language ("Go (Board size 13)")."""
    game = get_game(board.game)
    chosen = ", ".join(f"{_(OPTION_WORDS[spec.name])} {_option_value(board.options.get(spec.name))}"
                       for spec in rooms.options_offered(board.game) if spec.name in board.options)
    return f"{game.title} ({chosen})" if chosen else game.title


def _option_value(value) -> str:
    return _("yes") if value is True else _("no") if value is False else format(value, "g") \
        if isinstance(value, float) else str(value)
