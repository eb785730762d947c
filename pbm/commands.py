"""The mail command language (pbmserv style): one line of text -> a Command.

Words are separated by blanks and matched case-insensitively. Command words,
game names and challenge option names may be abbreviated as in pbmserv: a
prefix stands for the one word it begins; a prefix that begins several words
is refused with the candidates named ("'re' could be reject or resign: write
more of it"), and the words that cannot be taken back (FULL_WORDS) are never
abbreviated. ``match_word`` is that rule, for every place a word is chosen
(the service uses it for word moves and reply words too). Passwords,
addresses and moves keep their case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

from babel.lists import format_list

from . import i18n
from .games import as_typed, get_game, game_names, plain_number
from .i18n import LazyText, lazy_gettext
from .linetext import split_move_number, without_enclosing_quotes
from .usage import USAGE, Usage

GLOBAL_VERBS = ("help", "signup", "change", "games", "list", "multiple",
                "move", "resign", "show", "history", "language",
                "message", "vacation", "add", "signoff", "all")  # social
GAME_VERBS = ("help", "challenge", "move", "resign", "show", "games", "list", "history", "preview",
              "subscribe", "unsubscribe", "chat",  # social
              *("standings", "ratings", "accept", "reject", "limit"))  # ratings and challenge control
MOVE_LATER_VERBS = ("queue", "submit", "confirm")  # a move kept for later (service.requests)
GAME_VERBS += MOVE_LATER_VERBS

class CommandError(ValueError):
    """A command that cannot be understood; ``usage`` says what to send instead. For a
    word refused by ``match_word``, ``word`` is that word and ``readings`` the words
    it could have meant."""

    def __init__(self, sentence: str, usage: str | None = None, word: str | None = None,
                 readings: tuple[str, ...] = ()):
        super().__init__(sentence)
        self.usage, self.word, self.readings = usage, word, readings


@dataclass(frozen=True)
class Command:
    verb: str  # help signup change_password change_address challenge move show games (all: all show) history preview
    # (resign is a move), subscribe unsubscribe chat message vacation add signoff standings accept
    # reject limit language, and the MOVE_LATER_VERBS
    game: str | None = None
    board: int | None = None  # (subscribe/unsubscribe: None for every new board of the game)
    userid: str | None = None
    password: str | None = None
    move: str | None = None  # move text, as typed
    number: int | None = None  # "#n": the move number asserted or shown
    args: tuple[str, ...] = ()  # verb-specific words (new password, email, challenge users)
    options: dict = field(default_factory=dict)  # challenge -opt=value
    timing: dict = field(default_factory=dict)  # challenge --nagtime / --expiretime


FULL_WORDS = ("signoff", "resign", "decline")  # cannot be taken back: never abbreviated


def match_word(word: str, choices, usage: Usage | None = None) -> str | None:
    """The choice ``word`` names: itself, or the one choice it is the beginning of
    (pbmserv's abbreviations); None when it begins none. CommandError, naming the
    candidates, when it begins several; and when it abbreviates one of FULL_WORDS. Its
    "send instead" is ``usage``, given where the choices are no commands (a filter, an
    option, a move); otherwise the forms of the commands the word could be."""
    word = word.lower()
    if word in choices:
        return word
    found = sorted({c for c in choices if c.startswith(word)})
    if usage is None:  # a game's form: its help, which shows how to play it
        forms = [form for c in found for form in (USAGE[c].forms if c in USAGE else (f"{c} help",)
                                                  if c in game_names() else ())]
        usage = Usage(*forms) if forms else None
    if len(found) > 1:
        raise CommandError(LazyText(lambda: i18n.gettext(
            "\"%(word)s\" could be %(choices)s: write more of it.", word=as_typed(word),
            choices=format_list(found, style="or", locale=i18n.current()))), usage, word, tuple(found))
    if found and found[0] in FULL_WORDS:
        raise CommandError(lazy_gettext("\"%(word)s\" would be %(full)s, which is written in full: it cannot be "
                                        "taken back.", word=as_typed(word), full=found[0]), usage, word, tuple(found))
    return found[0] if found else None


def _board(word: str, verb: str) -> tuple[int, int | None]:
    match = re.fullmatch(r"#?([0-9]{1,9})(?:#([0-9]{1,9}))?", word)  # ids stay within 32 bits
    if not match:
        board, _, number = word.lstrip("#").partition("#")
        if re.fullmatch(r"[0-9]{1,9}", board) and number:  # the board is fine, the move number is not
            raise CommandError(lazy_gettext("\"%(number)s\" is not a move number (write the number of a move after "
                                            "#, like %(board)s#12).", number=as_typed("#" + number[:30]), board=board),
                               USAGE[verb])
        raise CommandError(lazy_gettext("\"%(word)s\" is not a board number (boards are numbered like 101).",
                                        word=as_typed(word)), USAGE[verb])
    return int(match.group(1)), int(match.group(2)) if match.group(2) else None


def _need(words: list[str], count: int, verb: str, most: int | None = None) -> None:
    """At least ``count`` words, and at most ``most`` when given: a word too many may
    be a mistake (``resign 101 bob pw 102``), so it is refused rather than dropped."""
    if len(words) < count:
        raise CommandError(lazy_gettext("The %(verb)s command needs more words than that.", verb=verb),
                           USAGE[verb])
    if most is not None and len(words) > most:
        raise CommandError(lazy_gettext("The %(verb)s command takes no more words than that.", verb=verb),
                           USAGE[verb])


def parse_command(line: str) -> Command:
    """Parse one command line; raise CommandError with a sentence and the usage."""
    words = without_enclosing_quotes(line).split()
    if not words:
        raise CommandError(lazy_gettext("The message holds no command."), "help")
    first = match_word(words[0], (*game_names(), *GLOBAL_VERBS))  # one word names a game or a command
    if first is None and (verb := _game_verb(words[0])) is not None:
        raise CommandError(lazy_gettext("%(verb)s is a command of each game: write the game's name in front of it "
                                        "(games are %(games)s).", verb=verb, games=", ".join(game_names())),
                           USAGE[verb])
    if first is None:
        raise CommandError(lazy_gettext("\"%(word)s\" is neither a command nor a game; games are %(games)s.",
                                        word=as_typed(words[0]), games=", ".join(game_names())), "help")
    if first not in game_names():
        return _parse_verb(first, None, words[1:])
    if len(words) == 1:
        return Command("help", game=first)
    verb = match_word(words[1], GAME_VERBS)
    if verb is None:
        raise CommandError(lazy_gettext("\"%(word)s\" is not a %(game)s command.", word=as_typed(words[1]), game=first),
                           lazy_gettext("one of: %(verbs)s", verbs=", ".join(GAME_VERBS)))
    return _parse_verb(verb, first, words[2:])


def _game_verb(word: str) -> str | None:
    """The one command of GAME_VERBS that ``word`` names (written out or abbreviated), if any."""
    try:
        verb = match_word(word, GAME_VERBS)
    except CommandError:
        return None
    return "standings" if verb == "ratings" else verb


def is_multiple(line: str) -> bool:
    """Whether the line is the word ``multiple`` (or an abbreviation of it)."""
    words = without_enclosing_quotes(line).split()
    try:
        return bool(words) and match_word(words[0], (*game_names(), *GLOBAL_VERBS)) == "multiple"
    except CommandError:
        return False


NEVER_MOVES = ("signup", "change", "list", "move", "language", "message", "vacation", "add", "signoff", "all")


def begins_command(line: str) -> bool:
    """Whether ``line`` begins with a game's name or a command word (NEVER_MOVES) written
    out, which no move of any game begins with: in a reply to a board mail, a whole
    command (``greatkingdom move 101 bob pw D4``) rather than a move."""
    words = without_enclosing_quotes(line).split()
    return bool(words) and words[0].lower() in (*game_names(), *NEVER_MOVES)


def game_of_line(line: str | None) -> str | None:
    """The game a command line names first, if it names one (for an error mail's subject)."""
    words = without_enclosing_quotes(line or "").split()
    try:
        first = match_word(words[0], (*game_names(), *GLOBAL_VERBS)) if words else None
    except CommandError:
        return None
    return first if first in game_names() else None


def _parse_verb(verb: str, game: str | None, rest: list[str]) -> Command:
    if verb == "help":
        _need(rest, 0, verb, most=0 if game else 1)
        named = match_word(rest[0], game_names(), USAGE["help"]) if rest else None
        if rest and named is None:
            raise CommandError(lazy_gettext("\"%(word)s\" is neither a command nor a game; games are %(games)s.",
                                            word=as_typed(rest[0]), games=", ".join(game_names())), USAGE["help"])
        return Command("help", game=game or named)
    if verb == "signup":
        _need(rest, 2, verb, most=3)
        return Command("signup", userid=rest[0].lower(), password=rest[1], args=tuple(rest[2:3]))
    if verb == "change":
        _need(rest, 4, verb, most=4)
        what = match_word(rest[0], ("password", "address", "email"))
        if what is None:
            raise CommandError(lazy_gettext("Change what? \"%(word)s\" is neither password nor address.",
                                            word=as_typed(rest[0])), USAGE[verb])
        kind = "change_password" if what == "password" else "change_address"
        return Command(kind, userid=rest[1].lower(), password=rest[2], args=(rest[3],))
    if verb in ("games", "list"):
        return _parse_games(game, rest)
    if verb == "language":
        _need(rest, 3, verb, most=3)
        return Command("language", userid=rest[0].lower(), password=rest[1], args=(rest[2].lower(),))
    if verb == "multiple":
        return Command("multiple")
    if verb in SOCIAL_VERBS:
        return _parse_social(verb, game, rest)
    if verb == "challenge":
        return _parse_challenge(game, rest)
    if verb in ("standings", "ratings"):
        _need(rest, 0, verb, most=0)
        return Command("standings", game=game)
    if verb in ("accept", "reject", "limit"):
        return _parse_policy(verb, game, rest)
    if verb == "preview":
        _need(rest, 2, verb)
        board, number = _board(rest[0], verb)
        return Command("preview", game=game, board=board, number=number, args=tuple(rest[1:]))
    if verb in ("show", "history"):
        if verb == "show" and len(rest) > 1 and re.fullmatch(r"#\s*[0-9]{1,9}", " ".join(rest[1:])):
            rest = [rest[0] + "".join(rest[1:])]  # "show 101 #3", spaced as a move's "D4 #12" may be
        _need(rest, 1, verb, most=1)
        board, number = _board(rest[0], verb)
        return Command(verb, game=game, board=board, number=number)
    if verb in MOVE_LATER_VERBS:
        return _parse_move_later(verb, game, rest)
    if verb == "resign":
        _need(rest, 3, verb, most=3)
        board, _ = _board(rest[0], verb)
        return Command("move", game=game, board=board, userid=rest[1].lower(), password=rest[2],
                       move="resign")
    # move
    _need(rest, 4, verb)
    board, number = _board(rest[0], verb)
    text, asserted = split_move_number(" ".join(rest[3:]))
    number = asserted if asserted is not None else number
    if not text.strip():
        raise CommandError(lazy_gettext("The move is missing after the password."), USAGE[verb])
    return Command("move", game=game, board=board, userid=rest[1].lower(), password=rest[2],
                   move=text.strip(), number=number)


def _parse_move_later(verb: str, game: str | None, rest: list[str]) -> Command:
    """``queue``/``submit <board> <userid> <password> <move>``, ``confirm <board> <userid> <password>``."""
    if game is None:
        raise CommandError(lazy_gettext("Say which game: start the line with the game's name."), USAGE[verb])
    _need(rest, 3 if verb == "confirm" else 4, verb)
    board, number = _board(rest[0], verb)
    text, asserted = split_move_number(" ".join(rest[3:]))  # "D4#12" as with the move command
    move = text.strip() or None
    if verb == "confirm" and move:
        raise CommandError(lazy_gettext("confirm takes no move: it plays the move you submitted."), USAGE[verb])
    return Command(verb, game=game, board=board, userid=rest[1].lower(), password=rest[2], move=move,
                   number=asserted if asserted is not None else number)


GAMES_FILTERS = ("next", "active", "all")


def _parse_games(game: str | None, rest: list[str], verb: str = "games") -> Command:
    """``games [<userid>] [next|active|all]`` (``verb`` "all": ``all show <userid>
    [next|active]``): next = boards where that player is to move. The filter after a
    userid may be abbreviated; a word alone is a userid unless written out."""
    said = "all show" if verb == "all" else "games"
    if len(rest) > 2:  # a userid and a filter at most: the word too many, not a filter, is the mistake
        raise CommandError(lazy_gettext("The %(verb)s command takes no more words than that.", verb=said),
                           USAGE[verb])
    words = list(rest)
    which = "all"
    if words and words[-1].lower() in GAMES_FILTERS:
        which = words.pop().lower()
    elif len(words) == 2 and (named := match_word(words[-1], GAMES_FILTERS, USAGE[verb])):
        words.pop()
        which = named
    if len(words) > 1:
        raise CommandError(lazy_gettext("%(command)s takes one userid, then perhaps a filter (next, active or all); "
                                        "\"%(word)s\" is neither.", command=said, word=as_typed(words[1])), USAGE[verb])
    userid = words[0].lower() if words else None
    if which == "next" and userid is None:
        raise CommandError(lazy_gettext("'next' lists the boards where a player is to move: name the player."),
                           USAGE[verb])
    return Command(verb, game=game, userid=userid, args=(which,))


SERVER_OPTIONS = ("nagtime", "expiretime", "forfeittime")  # --forfeittime: pbmserv's name for --expiretime


def _once(given: bool, option: str) -> None:
    if given:  # which one was meant? (the last would win silently)
        raise CommandError(lazy_gettext("%(option)s is given twice; write it once.", option=option),
                           USAGE["challenge"])


def _parse_challenge(game: str | None, rest: list[str]) -> Command:
    if game is None:
        raise CommandError(lazy_gettext("Say which game to play: start the line with the game's name."),
                           USAGE["challenge"])
    for word in rest:
        if word.startswith("-") and not word.lstrip("-").partition("=")[0]:  # "-", "-=7", "--=3"
            raise CommandError(lazy_gettext("\"%(word)s\" names no option: write the option's name after the dash, "
                                            "like -size=9 or --nagtime=5.", word=as_typed(word)), USAGE["challenge"])
    users = [w for w in rest if not w.startswith("-")]
    spaced = next(((w, v) for w, v in zip(rest, rest[1:]) if w.startswith("-") and "=" not in w
                   and not v.startswith("-")), None)
    if len(users) > 2 and spaced:  # "-size 7": the value is no third player
        raise CommandError(lazy_gettext("Write an option's value after '=', with no space: %(option)s=%(value)s.",
                                        option=as_typed(spaced[0]), value=as_typed(spaced[1])), USAGE["challenge"])
    if len(users) != 2:
        raise CommandError(lazy_gettext("A challenge names exactly two players: the one who moves first, then "
                                        "the other."), USAGE["challenge"])
    options: dict[str, str] = {}
    timing: dict[str, float] = {}
    option_names = [option.name for option in get_game(game).info.options]
    for word in rest:
        if not word.startswith("-"):
            continue
        key, _, value = word.lstrip("-").partition("=")
        if not word.startswith("--"):  # the game's option, named in full or abbreviated; the game
            name = match_word(key, option_names, USAGE["challenge"]) or key.lower()  # refuses others
            _once(name in options, "-" + name)
            options[name] = value  # "" when bare
            continue
        key = written = match_word(key, SERVER_OPTIONS, USAGE["challenge"]) or key.lower()
        key = {"forfeittime": "expiretime"}.get(key, key)  # pbmserv's name for it; refusals name the one written
        if key not in SERVER_OPTIONS:
            raise CommandError(lazy_gettext("--%(key)s is not a server option; use --nagtime=D or --expiretime=D.",
                                            key=as_typed(key)), USAGE["challenge"])
        _once(key in timing, "--" + key)
        if not plain_number(value):
            raise CommandError(lazy_gettext("--%(key)s needs a number of days, like --%(key)s=5.", key=written),
                               USAGE["challenge"])
        days = float(value)
        if not 0 < days <= 365 or not timedelta(days=days):  # what the clock (microseconds) reads as 0 is none
            raise CommandError(lazy_gettext("--%(key)s must be more than 0 and at most 365 days.", key=written),
                               USAGE["challenge"])
        timing[key] = days
    return Command("challenge", game=game, args=(users[0], users[1]), options=options, timing=timing)


# social: watching boards, chat, messages, vacations, more addresses, signing off

SOCIAL_VERBS = ("subscribe", "unsubscribe", "chat", "message", "vacation", "add", "signoff", "all")


def _parse_social(verb: str, game: str | None, rest: list[str]) -> Command:
    if verb == "all":  # all show <userid> [next|active]: the boards of every game
        if not rest or match_word(rest[0], ("show", "games")) is None:
            raise CommandError(lazy_gettext("After 'all' comes 'show' and a userid."), USAGE["all"])
        return _parse_games(None, rest[1:], verb)
    if verb in ("subscribe", "unsubscribe"):
        if len(rest) == 3 and rest[2].lower() == "all":
            return Command(verb, game=game, userid=rest[0].lower(), password=rest[1])
        if len(rest) != 3:
            raise CommandError(lazy_gettext("%(verb)s needs a board, your userid and your password (or your userid, "
                                            "your password and 'all').", verb=verb), USAGE[verb])
        board, _ = _board(rest[0], verb)
        return Command(verb, game=game, board=board, userid=rest[1].lower(), password=rest[2])
    if verb == "chat":
        _need(rest, 3, verb, most=3)
        board, _ = _board(rest[0], verb)
        return Command(verb, game=game, board=board, userid=rest[1].lower(), password=rest[2])
    if verb == "message":
        _need(rest, 3, verb)
        return Command(verb, userid=rest[0].lower(), password=rest[1], args=tuple(w.lower() for w in rest[2:]))
    if verb == "vacation":
        _need(rest, 3, verb, most=3)
        days = rest[2].lower()
        if days != "off" and not re.fullmatch(r"[0-9]{1,3}", days):
            raise CommandError(lazy_gettext("\"%(word)s\" is neither a number of days nor 'off'.",
                                            word=as_typed(rest[2])), USAGE[verb])
        return Command(verb, userid=rest[0].lower(), password=rest[1], args=(days,))
    if verb == "add":
        _need(rest, 3, verb, most=3)
        return Command(verb, userid=rest[0].lower(), password=rest[1], args=(rest[2],))
    _need(rest, 2, verb, most=2)  # signoff
    return Command(verb, userid=rest[0].lower(), password=rest[1])


MAX_BOARD_LIMIT = 1000  # the largest n in "<game> limit <userid> <password> <n>"


def _parse_policy(verb: str, game: str, rest: list[str]) -> Command:
    """``<game> accept|reject <userid> <password>``, ``<game> limit <userid> <password> <n>``."""
    _need(rest, 3 if verb == "limit" else 2, verb, most=3 if verb == "limit" else 2)
    args: tuple[str, ...] = ()
    if verb == "limit":
        if not (rest[2].isascii() and rest[2].isdigit()) or int(rest[2]) > MAX_BOARD_LIMIT:
            raise CommandError(lazy_gettext("\"%(word)s\" is not a number of boards from 0 (no limit) to %(most)s.",
                                            word=as_typed(rest[2]), most=MAX_BOARD_LIMIT), USAGE[verb])
        args = (str(int(rest[2])),)
    return Command(verb, game=game, userid=rest[0].lower(), password=rest[1], args=args)
