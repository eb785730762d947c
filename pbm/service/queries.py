"""Read-only commands: show, history, games. They change nothing but the outbox."""

from __future__ import annotations

from functools import partial
from urllib.parse import urlencode

from sqlalchemy import and_, func, or_
from sqlmodel import select

from ..boardview import BoardView, load_players, load_records, player_name
from ..gamewords import lazy_sentence
from ..commands import Command
from ..usage import USAGE
from ..games import MoveError, as_typed, game_names, get_game
from ..i18n import N_, LazyText, gettext, lazy_gettext
from ..models import Board, Chat, Player
from . import boards, forced, letters, requests
from .errors import PlayerError
from .unit import Unit


def _board(unit: Unit, board_id: int, game_name: str | None) -> Board:
    board = unit.session.get(Board, board_id)
    if board is None:
        raise PlayerError(lazy_gettext("There is no board %(board)s.", board=board_id), USAGE["games"])
    unit.board = board
    if game_name and game_name != board.game:
        raise boards.another_game(board, game_name)
    return board


def _no_such_move(board: Board, number: int, usage: str) -> PlayerError:
    return PlayerError(lazy_gettext("Board %(board)s has moves 0 to %(last)s; there is no move #%(number)s.",
                                    board=board.id, last=board.move_count, number=number), usage)


HISTORY_MOVES = 300  # moves a history mail lists (the last ones); the web record has them all
HISTORY_COMMENT = 500  # characters of each comment in a history mail
LISTED_BOARDS = 300  # boards a games mail lists (the newest); the status page has them all


def show(unit: Unit, command: Command, comment: str) -> None:
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    records = load_records(unit.session, board)
    if command.number is not None:
        if not 0 <= command.number <= board.move_count:
            raise _no_such_move(board, command.number, USAGE["show"])
        view = BoardView.at(board, players, records, command.number)
    else:
        view = BoardView.current(board, players, records)
    seat = letters.seat_of_sender(unit, board)
    letters.send(unit, unit.mail.sender, "show", board=board,
                 reply_to=letters.player_reply_to(unit, board, seat) if seat is not None else None,
                 view=view, tail=letters.subject_tail(view), seat=seat, **letters.footer(view, seat),
                 watchers=len(letters.watchers(unit.session, board)))


def preview(unit: Unit, command: Command, comment: str) -> None:
    """The position after hypothetical moves (one word each, by whoever is to move),
    from the current position or after move n; nothing is saved."""
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    records = load_records(unit.session, board)
    at = board.move_count if command.number is None else command.number
    if not 0 <= at <= board.move_count:
        raise _no_such_move(board, at, USAGE["preview"])
    view = BoardView.at(board, players, records, at)
    game, state = view.game, view.state
    played: list = []  # each move as the rules write it (d5 -> D5), and the forced replies
    for text in command.args:
        if view.outcome is not None:
            raise PlayerError(lazy_gettext("The preview cannot go on with %(move)s: the game is over there.",
                                           move=as_typed(text)), USAGE["preview"])
        if len(game.actors(state)) != 1:  # Go's scoring: marking and agreeing are the players' own
            raise PlayerError(lazy_gettext("The preview cannot go on with %(move)s: the game is being scored "
                                           "there, and a preview plays moves only.", move=as_typed(text)),
                              USAGE["preview"])
        try:
            move = game.parse_move(requests.board_move(game, state, text, N_("A preview plays moves on the board "
                                                                              "only, not %(word)s.")), state)
            state = game.apply(state, game.to_move(state), move)
        except MoveError as error:
            raise PlayerError(lazy_gettext("In the preview, %(move)s: %(error)s", move=as_typed(text),
                                           error=lazy_sentence(error)), USAGE["preview"]) from None
        played.append(game.format_move(move))
        state, replies = forced.with_forced_replies(game, state)
        played += [forced.marked_forced(reply) for reply in replies]
        view = BoardView(board, game, players, view.records, state, game.outcome(state), at)
    letters.send(unit, unit.mail.sender, "preview", board=board, view=view, at=at, moves=played)


def history(unit: Unit, command: Command, comment: str) -> None:
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    view = BoardView.current(board, players, load_records(unit.session, board))
    chats: dict[int, list[tuple[str, str]]] = {}  # move number -> (userid, text) of the chats after it
    for chat, userid in unit.session.exec(select(Chat, Player.userid).join(Player, Player.id == Chat.player_id)
                                          .where(Chat.board_id == board.id).order_by(Chat.id)).all():
        chats.setdefault(chat.after_move, []).append((userid, chat.text))
    # the move entries are written as the mail is, in its reader's language
    entries = [(record, chats.get(record.number, [])) for record in view.records]
    letters.send(unit, unit.mail.sender, "history", board=board, view=view, entries=entries[-HISTORY_MOVES:],
                 left_out=max(0, len(entries) - HISTORY_MOVES), comment_chars=HISTORY_COMMENT,
                 opening_chats=chats.get(0, []), for_players=letters.seat_of_sender(unit, board) is not None)


def games(unit: Unit, command: Command, comment: str) -> None:
    """The boards of a game (or of every game), of a player, active or where they are to
    move; the list is written in its reader's language."""
    s = unit.session
    matching = []
    if command.game:
        matching.append(Board.game == command.game)
    player = None
    if command.userid:
        player = s.exec(select(Player).where(Player.userid == command.userid)).first()
        if player is None and command.userid in game_names():  # pbmserv's "list <game>"
            raise PlayerError(lazy_gettext("There is no player called %(name)s; for the boards of the game %(name)s, "
                                           "write its name first: \"%(name)s list\".", name=command.userid),
                              USAGE["list"])
        if player is None:
            raise PlayerError(lazy_gettext("There is no player called %(name)s.", name=as_typed(command.userid)),
                              USAGE[command.verb])
        matching.append(or_(Board.seat0_id == player.id, Board.seat1_id == player.id))
    which = command.args[0] if command.args else "all"
    if which != "all":
        matching.append(Board.status == "active")
    if which == "next":  # to move, or one of both who may act (Go's scoring)
        matching.append(or_(and_(Board.to_move == 0, Board.seat0_id == player.id),
                            and_(Board.to_move == 1, Board.seat1_id == player.id), Board.to_move.is_(None)))
    count = s.exec(select(func.count()).select_from(Board).where(*matching)).one()
    # the newest LISTED_BOARDS, in the order of their numbers
    boards = s.exec(select(Board).where(*matching).order_by(Board.id.desc()).limit(LISTED_BOARDS)).all()[::-1]
    names = {p.id: player_name(p) for p in s.exec(select(Player).where(Player.id.in_(
        {b.seat0_id for b in boards} | {b.seat1_id for b in boards}))).all()} if boards else {}
    rows = [(b.id, b.game, names[b.seat0_id], names[b.seat1_id], b.move_count,
             names[b.player_id(b.to_move)] if b.to_move is not None else None, b.status) for b in boards]
    title = partial(_games_title, get_game(command.game).title if command.game else None,
                    player.userid if player else None, which)
    shown = {"game": command.game, "player": player.userid if player else None}  # the status page's filters
    query = urlencode({key: value for key, value in shown.items() if value})
    letters.send(unit, unit.mail.sender, "games", title=LazyText(title),
                 lines=[LazyText(partial(_games_line, *row)) for row in rows], left_out=count - len(boards),
                 everything=unit.settings.base_url + "/" + (f"?{query}" if query else ""))


def _games_title(game: str | None, userid: str | None, which: str) -> str:
    title = gettext("%(game)s boards", game=game) if game else gettext("All boards")
    if userid:
        title = gettext("%(boards)s of %(userid)s", boards=title, userid=userid)
    if which == "active":
        title = gettext("%(boards)s (active)", boards=title)
    elif which == "next":
        title = gettext("%(boards)s (to move)", boards=title)
    return title


def _games_line(board: int, game: str, first: str, second: str, moves: int, to_move: str | None,
                status: str) -> str:
    """One board of a ``games`` list: number, game, players, moves, who is to move."""
    turn = gettext("%(userid)s to move", userid=to_move) if to_move else \
        gettext("finished") if status == "finished" else gettext("active")
    versus = gettext("%(first)s vs %(second)s", first=f"{first:>12}", second=f"{second:<12}")
    return f"{board:>5}  {game:<13} {versus} " + gettext("move %(number)s", number=f"{moves:<4}") + f" {turn}"
