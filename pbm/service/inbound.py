"""A mail -> the command lines it holds, and running them.

``read`` does the reading (reply tag, subject or body, ``multiple``) before
any transaction is open; ``answer`` runs the lines inside the unit of work,
each guarded: a player's mistake becomes one error mail and undoes only that
command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..command_passwords import credentials, redact
from ..commands import (GLOBAL_VERBS, Command, CommandError, begins_command, game_of_line,
                        is_multiple, match_word, parse_command)
from ..config import Settings
from ..db import NeedsLock, refusal_runs_again
from ..games import MoveError, OptionError, as_typed, game_names, get_game
from ..i18n import lazy_gettext, number
from ..linetext import split_move_number
from ..mail.inbound import MAX_COMMAND_LINE, MAX_REPLY_CHARS, InboundMail, find_reply_tag, misshapen_reply_tag
from ..mail.replies import split_command, visible_reply
from ..models import Board
from ..usage import USAGE
from . import account_addresses, accounts, boards, letters, movetext
from .errors import PlayerError
from .handlers import HANDLERS
from .unit import Unit

MAX_COMMANDS = 50  # lines one 'multiple' mail may hold
REPLY_COMMANDS = ("help", "show", "history", "games")  # words a reply may send instead of a move
BODY_VERBS = ("chat", "message")  # the body of the mail is their text
PASSWORD_REMOVED = "[password removed]"


@dataclass(frozen=True)
class Line:
    """One command line of a mail with its comment, parsed once as the mail is read:
    ``command`` is the Command, or the CommandError that refuses it; None for the
    line of a reply to a board mail (a move, read against the board)."""

    text: str
    comment: str = ""
    command: Command | CommandError | None = None

    @classmethod
    def of_command(cls, text: str, comment: str = "") -> "Line":
        """The line parsed. The command's password never reaches anyone through its
        comment (or chat): the command repeated in the body is left out, and the
        password anywhere else, set apart from letters and digits (``pw=alicepw!``),
        is replaced by PASSWORD_REMOVED; not inside a word (``go`` stays in "a good
        game": the mark there would garble the comment and show the password)."""
        try:
            command = parse_command(text)
        except CommandError as error:
            return cls(text, comment, error)
        if command.password and command.password in comment:
            said = " ".join(text.split()).lower()
            comment = "\n".join(line for line in comment.split("\n") if " ".join(line.split()).lower() != said)
            alone = re.compile(rf"(?<!\w){re.escape(command.password)}(?!\w)")
            comment = alone.sub(PASSWORD_REMOVED, comment).strip()
        return cls(text, comment, command)


@dataclass
class Request:
    """What one mail asks for: a reply to a board mail (``tag``) with its line, or
    command lines; ``refusal`` when the mail is refused as a whole."""

    tag: tuple[int, str] | None
    lines: list[Line] = field(default_factory=list)
    refusal: PlayerError | None = None
    errors: list[str] = field(default_factory=list)  # filled while answering
    refused: list[tuple] = field(default_factory=list)  # (line, error, board, game), answered at the end
    misshapen_tag: str | None = None  # a recipient that looks like a reply tag but is none

    @property
    def commands(self) -> list[Command]:
        """Its command lines' commands that parsed."""
        return [line.command for line in self.lines if isinstance(line.command, Command)]

    @property
    def credentials(self) -> list[tuple[str, str]]:
        """The (userid, password) pairs its commands ask to be checked, each once, in
        the order of the lines (guesses are counted in that order)."""
        return list(dict.fromkeys(pair for command in self.commands if (pair := credentials(command))))


def read(mail: InboundMail, settings: Settings) -> Request:
    """The command lines of ``mail`` (no database needed)."""
    if mail.too_large:
        return Request(None, refusal=PlayerError(mail.too_large, lazy_gettext("the command in a short plain mail")))
    subject = mail.subject.strip()
    if mail.sealed and (not subject or mail.is_reply_subject or is_multiple(subject)):  # the body was to be read
        return Request(None, refusal=PlayerError(
            lazy_gettext("Your mail is encrypted or signed as a whole (S/MIME or PGP), and the server cannot read such "
                         "a mail."),
            lazy_gettext("the same mail unencrypted (a signature attached beside the text is fine)")))
    body = visible_reply(mail.body, base_url=settings.base_url, server_address=settings.server_address)
    tag = find_reply_tag(mail.recipients, settings.server_local_part)
    if tag is not None:
        line, comment = split_command(body)
        if not line and not mail.is_reply_subject:
            line = subject
        if not begins_command(line):
            return Request(tag, [Line(line, comment)])
        # else a whole command, as a pbmserv player writes it to the server's address
    elif subject and not mail.is_reply_subject:
        line, comment = subject, body
    else:
        line, comment = split_command(body)
    if len(line) > MAX_COMMAND_LINE:
        return Request(None, refusal=PlayerError(
            lazy_gettext("The command line is %(length)s characters long; no command is longer than %(most)s.",
                         length=number(len(line)), most=number(MAX_COMMAND_LINE)),
            lazy_gettext("the command alone on its line")))
    if not is_multiple(line):
        misshapen = misshapen_reply_tag(mail.recipients, settings.server_local_part) if tag is None else None
        return Request(None, [Line.of_command(line, comment)], misshapen_tag=misshapen)
    lines = [ln.strip() for ln in comment.split("\n") if ln.strip()]
    if not lines:
        return Request(None, refusal=PlayerError(
            lazy_gettext("A 'multiple' mail needs one command per line in its body."), USAGE["help"]))
    if len(lines) > MAX_COMMANDS:
        return Request(None, refusal=PlayerError(
            lazy_gettext("A 'multiple' mail may hold at most %(most)s commands, and this one holds %(count)s; "
                         "nothing was done.", most=MAX_COMMANDS, count=len(lines)),
            lazy_gettext("the commands in several mails")))
    # the reply parser strips the lines it keeps: which were indented is read from the body as sent
    indented = {ln.strip() for ln in mail.body[:MAX_REPLY_CHARS].split("\n") if ln[:1].isspace()}
    return Request(None, [_in_multiple(Line.of_command(one), indented=i > 0 and one in indented)
                          for i, one in enumerate(lines)])


def _in_multiple(line: Line, indented: bool = False) -> Line:
    """A line of a 'multiple' mail; a chat or message, whose text is the body of its
    mail, is refused there (the body is the list of commands). An indented line that
    is no command is a comment under the line above, as pbmserv players write them:
    refused as that, not as a command word it does not begin."""
    if indented and isinstance(line.command, CommandError):
        return Line(line.text, "", CommandError(lazy_gettext(
            "The indented line \"%(line)s\" is not a command; in a 'multiple' mail every line is a command, and none "
            "takes a comment. Send a move with its comment in a mail of its own, the comment in its body.",
            line=_shortened(line.text)), USAGE["move"]))
    if isinstance(line.command, Command) and line.command.verb in BODY_VERBS:
        verb = line.command.verb
        return Line(line.text, "", CommandError(lazy_gettext(
            "%(verb)s takes its text from the body of the mail, so it cannot be a line of a 'multiple' mail; send "
            "it in a mail of its own.", verb=verb), USAGE[verb]))
    return line


def answer(unit: Unit, request: Request) -> None:
    """Run every line of the request, each on its own savepoint; then one error mail
    for all the lines refused (a forged mail causes at most one)."""
    request.errors.clear()
    request.refused.clear()  # a retried unit answers afresh
    if request.refusal is not None:
        _refuse(unit, request, request.refusal, None)
    else:
        _answer_lines(unit, request)
    if len(request.refused) == 1:
        _, error, board, game = request.refused[0]
        letters.error_mail(unit, error, getattr(error, "usage", None), board, game)
    elif request.refused:
        letters.errors_mail(unit, request.refused)


def _answer_lines(unit: Unit, request: Request) -> None:
    for line in request.lines:
        if request.tag is not None:
            _guarded(unit, request, line.text, lambda: _reply(unit, request.tag, line.text, line.comment))
        else:
            _guarded(unit, request, line.text, lambda: _command(unit, line, request.misshapen_tag))


def _command(unit: Unit, line: Line, misshapen_tag: str | None) -> None:
    if misshapen_tag and (not line.text or isinstance(line.command, CommandError)):  # a reply, to a damaged address
        raise PlayerError(lazy_gettext("You wrote to %(address)s, which is not the reply address of any board (it "
                                       "may have been cut or changed); reply to your latest board mail, or use the "
                                       "move command.", address=misshapen_tag), USAGE["move"])
    if not line.text and unit.mail.is_reply_subject:
        raise PlayerError(lazy_gettext("The message holds no command: a reply's subject (%(subject)s) is not read "
                                       "as one, and the body is empty; write the command on the body's first line.",
                                       subject=_shortened(unit.mail.subject.strip())), "help")
    if not line.text:
        raise PlayerError(lazy_gettext("The message holds no command: the subject is empty and so is the body."),
                          "help")
    if isinstance(line.command, CommandError):
        raise _lost_reply(unit, line) or _command_below(unit, line) or line.command
    HANDLERS[line.command.verb](unit, line.command, line.comment)


_BOARD_MAIL_SUBJECT = re.compile(r"\bBoard ([0-9]{1,9})\b")


def _lost_reply(unit: Unit, line: Line) -> PlayerError | None:
    """The refusal of a reply to a board mail that came without its reply tag (to the
    server's own address) and whose line is no command (a move such as ``D4``): it
    says which address plays, and the move command to send instead. None otherwise."""
    subject = unit.mail.subject if unit.mail is not None else ""
    found = _BOARD_MAIL_SUBJECT.search(subject) if unit.mail is not None and unit.mail.is_reply_subject else None
    if found is None or not _unknown_first_word(line.text):  # a command, wrongly written: its own refusal says how
        return None
    board = unit.session.get(Board, int(found.group(1)))
    if board is None:
        return None
    move = _shortened(line.text)
    return PlayerError(
        lazy_gettext("Your mail answers a mail of board %(board)s, but it came to %(address)s, not to the board's "
                     "reply address, so \"%(line)s\" was read as a command, and it is none.", board=board.id,
                     address=unit.settings.server_address, line=move),
        lazy_gettext("\"%(command)s\", or reply to your latest mail of board %(board)s (its reply address plays "
                     "without a password)", command=f"{board.game} move {board.id} <userid> <password> {move}",
                     board=board.id))


def _command_below(unit: Unit, line: Line) -> PlayerError | None:
    """The refusal of a subject that is no command at all (``My move``) above a body
    whose first line is one: the subject is what is read, as it says. None otherwise."""
    if unit.mail is None or line.text != unit.mail.subject.strip() or not _unknown_first_word(line.text):
        return None
    below, _ = split_command(line.comment)
    try:
        parse_command(below)
    except CommandError:
        return None
    return PlayerError(
        lazy_gettext("The subject (\"%(subject)s\") is read as the command, and it is none; the command in the body "
                     "(\"%(line)s\") is read only when the subject is empty or a reply's (\"Re: ...\").",
                     subject=_shortened(line.text), line=_shortened(redact(below))),  # told, stored: no password
        lazy_gettext("the command as the subject, or an empty subject and the command on the body's first line"))


def _unknown_first_word(text: str) -> bool:
    """Whether the first word of ``text`` is neither a game nor a command, nor the beginning of one."""
    try:
        return match_word(text.split()[0], (*game_names(), *GLOBAL_VERBS)) is None
    except CommandError:
        return False


def _reply(unit: Unit, tag: tuple[int, str], line: str, comment: str) -> None:
    """A reply to a board mail: the player's move, or one of REPLY_COMMANDS about the board."""
    board_id, token = tag
    if board_id == accounts.CONFIRM_BOARD:
        account_addresses.confirm(unit, token, line)
        return
    board, seat, players = boards.by_token(unit.session, token)
    if board is not None and board.id != board_id:  # a tag moved to another board's number by hand
        raise PlayerError(lazy_gettext("The address you replied to names board %(named)s, but its tag is board "
                                       "%(board)s's; reply to your latest mail of the board you mean, or use the "
                                       "move command.", named=board_id, board=board.id), USAGE["move"])
    if board is None:
        raise PlayerError(lazy_gettext("The address you replied to does not belong to board %(board)s or any "
                                       "other board; reply to your latest board mail, or use the move command.",
                                       board=board_id), USAGE["move"])
    unit.board = board
    player = players[seat]  # the players are held: the move that follows mails both
    if player.closed_at is not None:  # signed off: no address is theirs any more, so say why
        raise PlayerError(lazy_gettext("%(userid)s has signed off, so board %(board)s is finished and this reply "
                                       "address is not used any more.", userid=player.userid, board=board.id),
                          USAGE["signup"])
    if not accounts.is_address_of(unit.session, player, unit.mail.sender):
        raise PlayerError(lazy_gettext("This reply address belongs to %(userid)s on board %(board)s; only "
                                       "%(userid)s's registered address may use it, and yours is %(sender)s.",
                                       userid=player.userid, board=board.id, sender=unit.mail.sender),
                          USAGE["move"])
    if not line:
        raise PlayerError(lazy_gettext("Your reply holds no move: write the move on the first line."),
                          lazy_gettext("a move such as D4, pass or resign"))
    line, number = split_move_number(line)
    if not line.strip():
        raise PlayerError(lazy_gettext("Your reply holds only a move number (#%(number)s): write the move before it, "
                                       "as in D4#%(number)s.", number=number),
                          lazy_gettext("a move such as D4, pass or resign"))
    game = get_game(board.game)
    state = boards.current_state(game, board)
    verb = movetext.spelled_out(game, state, line, also=REPLY_COMMANDS)
    if verb in REPLY_COMMANDS:
        HANDLERS[verb](unit, Command(verb, game=board.game if verb == "help" else None, board=board.id,
                                     userid=player.userid if verb == "games" else None), "")
        return
    move, comment = read_move(game, state, line, comment)
    boards.play(unit, board, seat, move, comment, number)


def read_move(game, state, line: str, comment: str) -> tuple[str, str]:
    """The move a reply means, and its comment, read as a person writes: ``d5.``; a
    move then words (``D5 take that!``: the words join the comment); a word move
    alone or set off by a mark (``Resign.``, ``pass, your turn``); a greeting line
    before the move (``Hi Bob,`` then ``D5``). A line that begins with a word move
    and goes straight on (``Pass me the salt``, ``Resign is not an option``) is a
    sentence, refused with one of its own: such a move cannot be taken back.
    Otherwise the line as it is, so the game's own error explains it. Two possible
    readings are refused."""
    def is_move(text: str) -> bool:
        try:
            game.parse_move(text, state)
            return True
        except MoveError:
            return False

    words = line.split()
    word = words[0].rstrip(".!?,;:")
    if word.lower() in movetext.word_moves(game):
        if len(words) > 1 and word == words[0]:
            raise PlayerError(lazy_gettext(
                "The first line of your reply begins with the move %(move)s but goes on (\"%(line)s\"); to play "
                "%(move)s, write it alone on the first line (your words may follow on the next lines).",
                move=word.lower(), line=_shortened(line)), lazy_gettext("a move such as D4, pass or resign on the "
                                                                        "first line"))
        return word, f"{' '.join(words[1:])}\n{comment}".strip()
    if is_move(line):
        return line, comment
    def leading_move(text: str) -> tuple[str, str] | None:
        """The longest leading words of ``text`` that are a move (up to 3), and the rest."""
        said = text.split()
        for count in range(min(len(said), 3), 0, -1):
            move = " ".join(said[:count]).rstrip(".!?,;:")
            if move and is_move(move):
                return move, " ".join(said[count:])
        return None

    readings = []
    if (first := leading_move(line)) is not None:
        readings.append((first[0], f"{first[1]}\n{comment}".strip()))
    following, after = split_command(comment)
    if following and len(words) <= 4 and not readings or line.rstrip().endswith(","):
        if following and (second := leading_move(following)) is not None:  # a greeting line, then the move
            readings.append((second[0], "\n".join(part for part in (line, second[1], after) if part)))
    if len(readings) == 2 and readings[0][0] != readings[1][0]:
        raise PlayerError(lazy_gettext("Your reply could mean the move %(first)s (first line) or %(second)s (second "
                                       "line); write only the move on the first line.", first=readings[0][0],
                                       second=readings[1][0]),
                          lazy_gettext("a move such as D4, pass or resign on the first line"))
    return readings[0] if readings else (line, comment)


def _shortened(line: str, most: int = 60) -> str:
    """``line`` as an error sentence quotes it: at most ``most`` characters, as typed."""
    return as_typed(line if len(line) <= most else line[:most].rstrip() + "...")


def _guarded(unit: Unit, request: Request, line: str | None, action) -> None:
    """Run one line's ``action`` on a savepoint; a refusal rolls the line back and is
    kept for the error mail. (An optimistic unit takes no savepoint: a refusal there
    runs the whole mail again the usual way, see ``db.refusal_runs_again``.)"""
    unit.board = None
    if refusal_runs_again(unit.session):
        try:
            action()
        except (PlayerError, CommandError, MoveError, OptionError) as error:
            raise NeedsLock("a refusal") from error
        return
    outbox, changed = len(unit.outbox), dict(unit.changed)
    try:
        with unit.session.begin_nested():
            action()
    except (PlayerError, CommandError, MoveError, OptionError) as error:
        del unit.outbox[outbox:]  # rolled back with the savepoint
        unit.changed = changed
        _refuse(unit, request, error, line)


def _refuse(unit: Unit, request: Request, error: Exception, line: str | None) -> None:
    request.errors.append(str(error))
    named = game_of_line(line)
    game = get_game(unit.board.game) if unit.board is not None else get_game(named) if named else None
    request.refused.append((line, error, unit.board, game))
