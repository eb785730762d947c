"""The Flask application factory."""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from flask import Flask, Response, abort, current_app, g, jsonify, render_template, request, url_for
from flask_babel import Babel, get_locale
from markupsafe import Markup
from werkzeug.exceptions import BadHost, HTTPException

from .. import i18n
from ..gamewords import game_sentence, speaks_current_language
from ..config import load_settings, secret_key
from .proxied import FromTrustedProxy
from ..i18n import N_
from ..i18n import gettext as _
from ..service import Service

LANGUAGE_NAMES = {"en": "English", "de": "Deutsch"}


# Scripts and styles only from this server: no inline script, no inline style
# attribute (the board pictures use presentation attributes, which CSP allows).
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                           "frame-ancestors 'none'")


HSTS_SECONDS = 365 * 24 * 3600


def security_headers(response):
    """Headers every answer carries; private pages (``/play/...``: the link is the
    credential) are never stored by a cache nor indexed; a page says which headers
    chose its language, so a shared cache keeps one copy per language."""
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"  # a play link never leaks to another site
    response.headers["X-Frame-Options"] = "DENY"
    if request.is_secure:  # a browser that came by https keeps coming by https (never over plain http: RFC 6797)
        response.headers["Strict-Transport-Security"] = f"max-age={HSTS_SECONDS}"
    if request.path.startswith(("/play/", "/unsubscribe/")):
        response.headers["Cache-Control"] = "private, no-store"
    if request.path.startswith(("/play/", "/join/", "/unsubscribe/")):  # the link is the credential: never indexed
        response.headers["X-Robots-Tag"] = "noindex, nofollow"
    if response.mimetype == "text/html":  # a page speaks the reader's language (Accept-Language, or the cookie)
        response.vary.update(("Accept-Language", "Cookie"))
        response.headers.setdefault("Content-Language", str(get_locale()))
    return response


def static_url(filename: str) -> str:
    """The URL of a file in ``static/`` with its content hash, so browsers may keep it
    until it changes."""
    versions = current_app.extensions.setdefault("pbm_static_versions", {})
    if filename not in versions:
        path = Path(current_app.static_folder) / filename
        versions[filename] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return url_for("static", filename=filename, v=versions[filename])


MAX_PAGE_REQUEST = 256 * 1024  # bytes a page's form may send: a move and its comment are far smaller


def limit_page_requests():
    """Only the webhook takes whole mails (up to the message limit); a page's request
    is refused over MAX_PAGE_REQUEST before its form is read (10 MB of form cost
    seconds of CPU before a route could refuse it)."""
    if request.blueprint != "inbound":
        request.max_content_length = MAX_PAGE_REQUEST


def query_is_text() -> bool:
    """Whether the query string's bytes are UTF-8: a WSGI server may pass any bytes on,
    and werkzeug decodes them strictly (``request.args``, ``request.full_path``)."""
    try:
        request.query_string.decode()
    except UnicodeDecodeError:
        return False
    return True


def refuse_undecodable_queries():
    """A query string that is no UTF-8 is refused before anything reads it."""
    if not query_is_text():
        abort(400, _("The part of the address after the ? is not UTF-8 text; check the link and try again."))


def this_page() -> str:
    """Where the language switch comes back to: this page, with its query on a GET
    (not one that is no UTF-8: the page refused it)."""
    if request.method == "GET" and query_is_text():
        return request.full_path.rstrip("?")
    return request.path


def refuse_nul_characters():
    """No address, query or form field of a page holds a NUL character (PostgreSQL's
    text cannot; the webhook takes whole mails, hostile bytes and all)."""
    if request.blueprint == "inbound":
        return
    fields = [request.path, *request.args.keys(), *request.args.values()]
    if request.method == "POST":
        fields += [*request.form.keys(), *request.form.values()]
    if any("\x00" in field for field in fields):
        abort(400, _("The request holds a NUL character, which no address or form field may hold."))


def speak_page_language():
    """Python code answering this request (sentences, errors) speaks the page's language."""
    g.pbm_language = i18n.use(str(get_locale()))


def stop_speaking_page_language(error=None):
    if "pbm_language" in g:
        i18n.stop_using(g.pop("pbm_language"))


# A game's sentences that name mail commands, as a page with buttons says them.
PAGE_WORDING = {
    "Scoring: mark dead groups (mark D4), then done; resume to play on.":
        N_("Scoring: tap a dead group to mark it (or write mark D4), then Done; Resume play plays on."),
}


def game_said(text: str) -> str:
    """What a game module wrote (``GameText``), in the page's language and words
    (``PAGE_WORDING``); a sentence the catalogue lacks stays English and is marked so
    on a page in another language."""
    if speaks_current_language(text):
        return game_sentence(text, PAGE_WORDING)
    return Markup('<span lang="en">%s</span>') % text


# What a page says for a refusal Werkzeug makes itself (its own sentences are
# English): an unknown address, a method a route does not take, a body too large ...
HTTP_SENTENCES = {
    400: N_("The request could not be read; go back and try again."),
    401: N_("This address needs credentials."),
    403: N_("This is not allowed here."),
    404: N_("There is no page at this address; check it, or start from the list of all boards."),
    405: N_("This address does not answer %(method)s requests."),
    406: N_("This address cannot answer in a form the request accepts."),
    408: N_("The request took too long; try again."),
    409: N_("The request conflicts with what is here now; reload the page and try again."),
    410: N_("What was at this address is gone."),
    411: N_("The request must say how long it is."),
    413: N_("The request is too large."),
    414: N_("The address is too long."),
    415: N_("This address does not take that kind of content."),
    429: N_("Too many requests; wait a while and try again."),
    431: N_("The request's headers are too large."),
}


def http_sentence(code: int) -> str:
    """The sentence for HTTP status ``code``, in the current language."""
    if code in HTTP_SENTENCES:
        return _(HTTP_SENTENCES[code], method=request.method) if code == 405 else _(HTTP_SENTENCES[code])
    if code >= 500:
        return _("The server failed; try again later.")
    return _("This request cannot be answered (HTTP %(code)s).", code=code)


def script_texts() -> dict:
    """The sentences ``play.js`` and ``rooms.js`` show, in the page's language; the
    layout carries them as JSON in the body's ``data-texts`` (no inline script under
    the CSP)."""
    return {
        "play": _("Play"),
        "play_move": _("Play %(move)s"),
        "selected": _("%(point)s selected: tap it again or press Play."),
        "chain_move": _("%(chain)s: play it, or go on leaping."),
        "chain_on": _("%(chain)s: now choose where it goes."),
        "no_answer": _("The server did not answer; try again."),
        "not_playable": _("%(point)s, not playable now"),
        "really_resign": _("Really resign? Click again"),
        "move_of": _("%(at)s of %(last)s"),
        "list_same_device": _("On this device"),
        "list_computer": _("Against the computer"),
        "list_friend": _("With a friend"),
        "copied": _("Copied."),
        "copy_by_hand": _("Press Ctrl+C (or Cmd+C) to copy the selected link."),
        "saved_board": _("%(title)s, board %(board)s"),
        "forget": _("Forget"),
        "forget_board": _("Forget board %(board)s"),
    }


PRIVATE_LINK = re.compile(r"(/(?:play|join|unsubscribe)/)[^/?\s]+")  # as deploy/gunicorn.conf.py hides them


def logged_path(path: str) -> str:
    """``path`` as a log may show it: a private link's secret (``/play/<token>``, which is
    also its seat's reply tag; ``/join/<invite>``, ``/unsubscribe/<token>``) left out."""
    return PRIVATE_LINK.sub(r"\1...", path)


class PrivateLinksHidden(logging.Filter):
    """A log record of the WSGI server (waitress names the path of a client that left
    while served: every live play page closed) without a private link's secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = logged_path(record.getMessage()), None
        return True


class App(Flask):
    def log_exception(self, exc_info) -> None:
        """Flask's record of a failure, without a private link's secret in the path."""
        self.logger.error("Exception on %s [%s]", logged_path(request.path), request.method, exc_info=exc_info)


def create_app(overrides: dict | None = None) -> Flask:
    """Build the application; settings in ``overrides`` win over the environment."""
    settings = load_settings(overrides)
    app = App(__name__)
    # the client's address, scheme and host as the trusted proxy forwards them; nobody else's X-Forwarded-*
    app.wsgi_app = FromTrustedProxy(app.wsgi_app, settings.trusted_proxy)
    app.config.update(
        SECRET_KEY=secret_key(settings),
        # The whole request may hold a 10 MB mail plus its form encoding.
        MAX_CONTENT_LENGTH=settings.max_message_bytes + 256 * 1024,
        PBM_SETTINGS=settings,
        SEND_FILE_MAX_AGE_DEFAULT=365 * 24 * 3600,  # static URLs carry their content hash
    )
    app.extensions["pbm"] = Service(settings)
    from .pages import page_language

    Babel(app, locale_selector=page_language, default_translation_directories=str(i18n.TRANSLATIONS))
    i18n.translations("de")  # a missing compiled catalogue fails here, not on a German page

    from .inbound import bp as inbound_bp
    from .live import bp as live_bp
    from .pages import bp as pages_bp
    from .play import bp as play_bp
    from .rooms import bp as rooms_bp
    from .standings import bp as standings_bp
    from .unsubscribe import bp as unsubscribe_bp

    for blueprint in (inbound_bp, pages_bp, play_bp, live_bp, rooms_bp, standings_bp, unsubscribe_bp):
        app.register_blueprint(blueprint)
    app.before_request(speak_page_language)
    app.before_request(limit_page_requests)
    app.before_request(refuse_undecodable_queries)
    app.before_request(refuse_nul_characters)
    app.teardown_request(stop_speaking_page_language)
    app.after_request(security_headers)
    app.jinja_env.policies["ext.i18n.trimmed"] = True  # as babel.cfg extracts the {% trans %} blocks
    app.jinja_env.globals["static_url"] = static_url
    app.jinja_env.globals["this_page"] = this_page
    app.jinja_env.globals["language_names"] = LANGUAGE_NAMES
    app.jinja_env.globals["script_texts"] = script_texts
    app.jinja_env.globals["game_said"] = game_said
    app.jinja_env.globals["page_language"] = lambda: str(get_locale())

    def wants_json() -> bool:
        return request.path.startswith("/inbound") or request.path.endswith(".json")

    def wants_text() -> bool:
        """A board's text or record (``.txt``, ``.sgf``): its error is a plain sentence
        too; and any answer to a request whose Host routing could not read (no URL can be
        built for a page then, so no error page either)."""
        return request.path.endswith((".txt", ".sgf")) or isinstance(request.routing_exception, BadHost)

    @app.errorhandler(HTTPException)
    def client_error(error):
        """Any refusal (4xx), with the route's own sentence or, for Werkzeug's own
        (an unknown address, a method a route does not take ...), ours: as JSON on
        the webhook and ``.json``, as plain text on ``.txt`` and ``.sgf`` and when the
        Host could not be read (``wants_text``), else as a page in the request's language."""
        if error.code is None or error.code < 400:  # a redirect Werkzeug's routing asks for
            return error
        headers = [(name, value) for name, value in error.get_headers() if name.lower() != "content-type"]
        if error.description != type(error).description:  # the route's own sentence
            message = error.description
        elif request.path.startswith("/inbound"):
            with i18n.language(i18n.DEFAULT):  # the webhook answers mail systems in English
                message = http_sentence(error.code)
        else:
            message = http_sentence(error.code)
        if wants_json():
            return jsonify(status="error", error=message), error.code, headers
        if wants_text():
            return Response(f"{message}\n", status=error.code, mimetype="text/plain", headers=headers)
        return render_template("error.html", code=error.code, message=message), error.code, headers

    @app.errorhandler(500)
    def server_error(error):
        app.logger.error("internal error on %s", logged_path(request.path))
        if wants_json():
            return jsonify(status="error", error="The server failed; try again later."), 503
        message = _("The server failed; try again later.")
        if wants_text():
            return Response(f"{message}\n", status=503, mimetype="text/plain")
        return render_template("error.html", code=503, message=message), 503

    return app
