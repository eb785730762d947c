"""A move's text, read and checked before anything is logged: abbreviated words
spelled out, over-long texts refused, a move sent again recognised, and what to
send instead of a refused move."""

from __future__ import annotations

from ..commands import CommandError, match_word
from ..games import Game, IllegalMoveError, MoveError
from ..i18n import LazyText, lazy_gettext
from ..usage import USAGE
from .errors import PlayerError

MAX_MOVE_TEXT = 100  # characters; longer than any move of the five games (a Two Tigers leap chain)
WORD_MOVES = ("resign", "decline", "newround")  # the server's own moves that are words (and requests.WORDS)


def applied(game: Game, state, seat: int, text: str) -> tuple[object, object]:
    """``seat``'s move ``text`` and the position after it; MoveError when the rules
    refuse it, or when it would change nothing (Go's ``done`` sent again: the rules
    take it, as either player may confirm, but it would be logged and mailed again)."""
    move = game.parse_move(text, state)
    after = game.apply(state, seat, move)
    if after == state:
        raise IllegalMoveError("%(move)s changes nothing: you have sent it already.", move=game.format_move(move))
    return move, after


def same_move(logged: str, sent: str) -> bool:
    """Whether a move sent again (by mail, or by a form sent twice) is the logged one:
    spaces and case aside (``d4`` is ``D4``)."""
    return "".join(logged.split()).lower() == "".join(sent.split()).lower()


def overlong(text: str) -> LazyText | None:
    """The refusal of a move text longer than any move, which quotes only its
    beginning (the games' sentences quote a move whole); None for any other text."""
    if len(text) <= MAX_MOVE_TEXT:
        return None
    return lazy_gettext("\"%(start)s...\" is too long to be a move (%(length)s characters).", start=text[:20],
                        length=len(text))


def notation(game: Game):
    """What to send instead of a move the game refuses (a PlayerError's usage)."""
    return lazy_gettext('a move in %(game)s notation (send "%(name)s help")', game=game.title, name=game.name)


def word_moves(game: Game) -> tuple[str, ...]:
    """Every move on a board of ``game`` that is written as one word: the server's
    (resign, decline, newround, the requests and their answers) and the game's."""
    from .requests import WORDS  # requests builds on boards, which builds on this module

    return (*WORD_MOVES, *WORDS, *game.info.word_moves)


def spelled_out(game: Game, state, text: str, also: tuple[str, ...] = ()) -> str:
    """``text`` written out when it is one word that is no move in the game's notation
    but abbreviates one of ``word_moves(game)`` or ``also`` (``acc`` -> ``accept``, by
    the rule of ``commands.match_word``); otherwise ``text`` itself. PlayerError when
    it could be several words, abbreviates one that is written in full (resign), or
    is (the beginning of) ``pass`` in a game without passing."""
    if len(text.split()) != 1:
        return text
    choices = (*word_moves(game), *also)
    if text.lower() in choices:
        return text.lower()
    try:
        game.parse_move(text, state)
        return text
    except MoveError:
        pass
    if not game.info.passing and "pass".startswith(text.lower()):  # "p" is no draw offer (propose) there
        raise PlayerError(lazy_gettext("%(game)s has no passing: every turn is a move (resign ends the game).",
                                       game=game.title), notation(game))
    try:
        return match_word(text, choices, USAGE["move"]) or text
    except CommandError as error:
        raise PlayerError(error.args[0], USAGE["move"]) from None
