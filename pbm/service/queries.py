"""Read-only commands: show, history, games. They change nothing but the outbox."""

from __future__ import annotations

from sqlalchemy import or_
from sqlmodel import select

from ..boardview import BoardView, load_players, load_records
from ..commands import USAGE, Command
from ..games import MoveError, get_game
from ..models import Board, Chat, Player
from . import accounts, letters
from .errors import PlayerError
from .unit import Unit


def _board(unit: Unit, board_id: int, game_name: str | None) -> Board:
    board = unit.session.get(Board, board_id)
    if board is None:
        raise PlayerError(f"There is no board {board_id}.", USAGE["games"])
    unit.board = board
    if game_name and game_name != board.game:
        raise PlayerError(f"Board {board.id} is a {get_game(board.game).title} board, not "
                          f"{get_game(game_name).title}.")
    return board


HISTORY_MOVES = 300  # moves a history mail lists (the last ones); the web record has them all
HISTORY_COMMENT = 500  # characters of each comment in a history mail


def show(unit: Unit, command: Command, comment: str) -> None:
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    records = load_records(unit.session, board)
    if command.number is not None:
        if not 0 <= command.number <= board.move_count:
            raise PlayerError(f"Board {board.id} has moves 0 to {board.move_count}; there is no move "
                              f"#{command.number}.", USAGE["show"])
        view = BoardView.at(board, players, records, command.number)
    else:
        view = BoardView.current(board, players, records)
    seat = _seat_of_sender(unit, board)
    letters.send(unit, unit.mail.sender, "show", board=board,
                 reply_to=letters.player_reply_to(unit, board, seat) if seat is not None else None,
                 view=view, tail=letters.subject_tail(view), seat=seat, **letters.footer(board, seat),
                 watchers=len(letters.watchers(unit.session, board)))


def _seat_of_sender(unit: Unit, board: Board) -> int | None:
    """The seat on ``board`` of the player whose address (primary or added) sent the mail."""
    player = accounts.by_address(unit.session, unit.mail.sender)
    return board.seat_of(player.id) if player is not None else None


def preview(unit: Unit, command: Command, comment: str) -> None:
    """The position after hypothetical moves (one word each, by whoever is to move),
    from the current position or after move n; nothing is saved."""
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    records = load_records(unit.session, board)
    at = board.move_count if command.number is None else command.number
    if not 0 <= at <= board.move_count:
        raise PlayerError(f"Board {board.id} has moves 0 to {board.move_count}; there is no move #{at}.",
                          USAGE["preview"])
    view = BoardView.at(board, players, records, at)
    game, state = view.game, view.state
    for text in command.args:
        seat = game.to_move(state) if view.outcome is None else None
        if seat is None:
            raise PlayerError(f"The preview cannot go on with {text}: nobody is to move there.", USAGE["preview"])
        try:
            state = game.apply(state, seat, game.parse_move(text, state))
        except MoveError as error:
            raise PlayerError(f"In the preview, {text}: {error}", USAGE["preview"]) from None
        view = BoardView(board, game, players, view.records, state, game.outcome(state), at)
    letters.send(unit, unit.mail.sender, "preview", board=board, view=view, at=at, moves=command.args)


def history(unit: Unit, command: Command, comment: str) -> None:
    board = _board(unit, command.board, command.game)
    players = load_players(unit.session, board)
    view = BoardView.current(board, players, load_records(unit.session, board))
    chats: dict[int, list[tuple[str, str]]] = {}  # move number -> (userid, text) of the chats after it
    for chat, userid in unit.session.exec(select(Chat, Player.userid).join(Player, Player.id == Chat.player_id)
                                          .where(Chat.board_id == board.id).order_by(Chat.id)).all():
        chats.setdefault(chat.after_move, []).append((userid, chat.text))
    entries = [(record, line, chats.get(record.number, []))
               for record, line in zip(view.records, view.move_lines())]
    letters.send(unit, unit.mail.sender, "history", board=board, view=view, entries=entries[-HISTORY_MOVES:],
                 left_out=max(0, len(entries) - HISTORY_MOVES), comment_chars=HISTORY_COMMENT,
                 opening_chats=chats.get(0, []), for_players=_seat_of_sender(unit, board) is not None)


def games(unit: Unit, command: Command, comment: str) -> None:
    s = unit.session
    query = select(Board).order_by(Board.id)
    title = "All boards"
    if command.game:
        query = query.where(Board.game == command.game)
        title = f"{get_game(command.game).title} boards"
    player = None
    if command.userid:
        player = s.exec(select(Player).where(Player.userid == command.userid)).first()
        if player is None:
            raise PlayerError(f"There is no player called {command.userid}.", USAGE["games"])
        query = query.where(or_(Board.seat0_id == player.id, Board.seat1_id == player.id))
        title += f" of {player.userid}"
    which = command.args[0] if command.args else "all"
    if which != "all":
        query = query.where(Board.status == "active")
        title += " (active)" if which == "active" else " (to move)"
    boards = s.exec(query).all()
    if which == "next":  # to move, or one of both who may act (Go's scoring)
        boards = [b for b in boards if b.to_move is not None and b.player_id(b.to_move) == player.id
                  or b.to_move is None and player.id in (b.seat0_id, b.seat1_id)]
    names = {p.id: p.userid for p in s.exec(select(Player).where(Player.id.in_(
        {b.seat0_id for b in boards} | {b.seat1_id for b in boards}))).all()} if boards else {}
    lines = []
    for b in boards:
        turn = names[b.player_id(b.to_move)] + " to move" if b.to_move is not None else b.status
        lines.append(f"{b.id:>5}  {b.game:<13} {names[b.seat0_id]:>12} vs {names[b.seat1_id]:<12} "
                     f"move {b.move_count:<4} {turn}")
    letters.send(unit, unit.mail.sender, "games", title=title, lines=lines)
