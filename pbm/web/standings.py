"""``GET /standings/<game>``: a game's rating table (read-only, server-rendered)."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, redirect, render_template, url_for

from ..db import reading
from ..games import REGISTRY, as_typed, get_game
from ..i18n import gettext as _
from ..service import ratings

bp = Blueprint("standings", __name__)


@bp.app_template_global()
def game_title(name: str) -> str:
    """A game's title by its name (the status page's links to the standings)."""
    return get_game(name).title


@bp.get("/standings/<name>")
def standings(name: str):
    if name != name.lower() and name.lower() in REGISTRY:  # game names are read without regard to case, as in mail
        return redirect(url_for("standings.standings", name=name.lower()), 308)
    if name not in REGISTRY:
        abort(404, _("There is no game called \"%(name)s\"; the games are %(games)s.", name=as_typed(name[:40]),
                     games=", ".join(sorted(REGISTRY))))
    with reading(current_app.extensions["pbm"].engine) as session:
        rows, total = ratings.standings(session, name)
    return render_template("standings.html", game=get_game(name), rows=rows, total=total,
                           provisional_games=ratings.PROVISIONAL_GAMES)
