"""Board pictures as inline SVG, drawn on the server from a game's state.

The same picture goes on the board page and the play page. Every picture of
a point game (Go, Great Kingdom, 2 Dragons, Two Tigers) names its points with
an invisible ``[data-point]`` disc each (``shared/interface.md``, "Web play":
a click plays only on a play page, whose script knows the legal moves);
``interactive`` adds ``[data-cell]`` on each Dragons cell the player to move
may fill. Cells are outlined on every picture; only the hooks differ. The
picture's words (its accessible title and its captions) are in the current
language (``pbm.i18n``: a page's).
"""

from __future__ import annotations

from . import dragons, go, greatkingdom, twodragons, twotigers

RENDERERS = {
    "go": go.render,
    "greatkingdom": greatkingdom.render,
    "twodragons": twodragons.render,
    "twotigers": twotigers.render,
    "dragons": dragons.render,
}


def board_svg(game_name: str, state, *, move_number: int, last_move: str | None = None,
              interactive: bool = False) -> str:
    """An inline ``<svg class="board" data-move-number="...">`` of the position.

    ``state`` is the game's own state; ``last_move`` the canonical text of the
    move that led to it (as ``format_move`` writes it, or ``pass`` ...): a
    point, path or tile it names is marked, and it is named in the picture's
    accessible title. Raises ValueError for a game that has no renderer.
    """
    render = RENDERERS.get(game_name.lower())
    if render is None:
        raise ValueError(f"There is no board picture for the game {game_name!r}.")
    return render(state, move_number, last_move, interactive)


def dragons_orientation_choices(state, cell: str) -> list[tuple[str, str]]:
    """For a Dragons cell the player to move may fill (any name of it, e.g. ``7ne``):
    each fitting orientation's canonical name (``B3``, as in the move ``7ne:B3``)
    with a small ``<svg class="orientation" data-orientation="B3">`` preview of the
    tile in place among its neighbours, in the order F0..F5, B0..B5. Empty when
    no orientation may be played there now (a taken cell, nothing fits, or
    another gap must be filled first). A name that is no cell raises the game's
    InvalidMoveError, whose text is a sentence for the player."""
    return dragons.orientation_choices(state, cell)
