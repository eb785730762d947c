"""``/unsubscribe/<token>``: the one-click link of a watcher's board mail
(``service.unsubscribe``). GET asks (a mail program's link checker may open a
link, and must not unsubscribe anyone); POST stops the mails, from the page's
button or from a mail program's one-click request (RFC 8058: no cookie, no form
key; the signed link is the permission)."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template

from ..games import get_game
from ..i18n import gettext as _

bp = Blueprint("unsubscribe", __name__)


def _named(token: str) -> tuple[int, str, bool]:
    named = current_app.extensions["pbm"].watched_by_link(token)
    if named is None:
        abort(404, _("This link stops no mails: it is not one of this server's, or its board is gone."))
    return named


@bp.get("/unsubscribe/<token>")
def ask(token: str):
    board, game, watching = _named(token)
    return render_template("unsubscribe.html", board=board, game=get_game(game), watching=watching, token=token)


@bp.post("/unsubscribe/<token>")
def stop(token: str):
    board, game, _watching = _named(token)
    current_app.extensions["pbm"].stop_watching_by_link(token)
    return render_template("unsubscribe.html", board=board, game=get_game(game), watching=False, token=token)
