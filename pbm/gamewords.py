"""The games' words in the reader's language: what a game said (its errors and
texts, with the sides and sentences they quote), how a game ended and its count,
the side names. Mails and pages both show a game's sentences through here."""

from __future__ import annotations

import re
from functools import partial

from .games import Game, GameError, GameText, Outcome
from .i18n import N_, LazyText, gettext, knows, number
from .movelog import DECLINED, OUT_OF_TIME, RESIGNED

# The words the games declare in English (side names, option descriptions), marked
# for the catalogues; pages and mails show them through ``gettext``.
GAME_WORDS = (
    N_("Black"), N_("White"), N_("Blue"), N_("Orange"), N_("Goats"), N_("Tigers"), N_("O"), N_("X"),
    N_("board size"), N_("points White receives"), N_("board size, odd"),
    N_("territory Blue needs beyond Orange's"), N_("how many of each side's biggest dragons count"),
    N_("tiles in the pool (default 50; 40 with Tantrix scoring)"), N_("score the best dragon as in Tantrix"),
    # the games' outcome reasons that are whole sentences (those with numbers stay English)
    N_("area scoring"), N_("area scoring: equal"), N_("both tigers are trapped"), N_("the goats cannot move"),
    N_("the same position occurred a third time"), N_("Tantrix scoring, equal best dragons"),
    N_("Tantrix scoring, the best dragon"),
)


# The log entries that end a game, as a move list names them (in English, the entry's kind).
LOG_WORDS = {"resign": N_("resign"), "forfeit": N_("forfeit"), "decline": N_("decline"), "cancel": N_("cancel"),
             "expire": N_("expire")}


def game_sentence(said, wording: dict[str, str] | None = None) -> str:
    """What a game said, in the current language: a game's error (``GameError``) or
    text (``GameText``) through the catalogue, with the sentences it quotes and the
    sides it names (GAME_WORDS) translated too; anything else as it says itself.
    ``wording``: sentences said otherwise where this is shown (a page's buttons for a
    mail's commands), by their English message."""
    if not isinstance(said, (GameError, GameText)) or not said.message:
        return str(said)
    params = {name: game_sentence(value, wording) if isinstance(value, (GameError, GameText))
              else gettext(value) if isinstance(value, str) and value in GAME_WORDS
              else str(number(value)) if isinstance(value, float) else value  # komi 7,5 in German
              for name, value in said.params.items()}
    return gettext((wording or {}).get(said.message, said.message), **params)


def speaks_current_language(said) -> bool:
    """Whether ``game_sentence(said)`` has every part of ``said`` in the current
    language's catalogue (a game module added without its translations has not)."""
    if not isinstance(said, (GameError, GameText)) or not said.message:
        return True
    return ((getattr(said, "joined", False) or knows(said.message))
            and all(speaks_current_language(value) for value in said.params.values()))


def lazy_sentence(error: Exception) -> LazyText:
    """``game_sentence(error)`` when it becomes text: for a PlayerError that passes a
    game's sentence on before anyone knows who reads it."""
    return LazyText(partial(game_sentence, error))


def side_name(game: Game, seat: int) -> str:
    """The name of the game's side ``seat`` (Black, White, ...) in the current language."""
    return gettext(game.sides[seat])


def reason_text(game: Game, outcome: Outcome) -> str:
    """The outcome's reason in the current language: the server's own reasons (above)
    translated; a game's own reason as the catalogue has it, else as the game wrote it."""
    if isinstance(outcome.reason, GameText):  # a game's reason with its figures (boards ended since it kept them)
        return game_sentence(outcome.reason)
    for seat, side in enumerate(game.sides):
        for reason in (RESIGNED, OUT_OF_TIME, DECLINED):
            if outcome.reason == reason % {"side": side}:
                return gettext(reason, side=side_name(game, seat))
    return gettext(outcome.reason)


def score_text(game: Game, score: str) -> str:
    """An outcome's count (``W+7.5 (Black 0, White 7.5)``, ``Blue 9, Orange 4``), stored
    in English with the board, in the current language: the sides it names and the
    word ``draw`` translated, the figures and SGF's ``W+`` kept."""
    words = {side: side_name(game, seat) for seat, side in enumerate(game.sides)}
    words["draw"] = gettext("draw")
    said = _SCORE_WORDS.sub(lambda m: words.get(m[0], m[0]), score)
    return _SCORE_FIGURES.sub(lambda m: str(number(float(m[0]))), said)


_SCORE_WORDS = re.compile(r"\b[A-Za-z]+\b")
_SCORE_FIGURES = re.compile(r"(?<![+\d.])\d+\.\d+")  # the counts, not SGF's result (W+7.5)
