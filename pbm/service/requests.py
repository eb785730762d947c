"""Requests between the two players of a board, and moves kept for later.

* ``undo`` asks to take back the asker's last move, ``propose`` offers a draw;
  the other player answers ``accept`` or ``reject`` (all four are sent as
  moves). The computer answers at once: in a rated game (by mail) it takes
  nothing back; in a game started in the browser (unrated) it takes back
  whenever asked; it never agrees to a draw. One request is open per board at a time; any new log entry ends it
  (``boards.append``): a move by the asker withdraws it, a move by the other
  player declines it. An accepted undo is the log entry ``undo N``: the entries
  from N on are taken back (the asker's last move, and whatever followed it),
  and the replay leaves them out; an accepted draw is the entry ``draw``.
* ``queue`` keeps one move while it is not the player's turn and plays it (log
  kind ``queued``) the moment the turn comes; a move that has become illegal by
  then is reported to its player only, and nothing is played.
* ``submit`` mails the position after a move without playing it; ``confirm``
  plays it while the board is still as it was.
"""

from __future__ import annotations

from ..boardview import BoardView, load_players, load_records, player_name
from ..gamewords import lazy_sentence
from ..movelog import OWN_MOVES, LogEntry, ending, in_force, log_entries, replay
from ..commands import Command
from ..usage import USAGE
from ..games import Game, InvalidMoveError, MoveError, get_game
from ..i18n import N_, LazyText, lazy_gettext
from ..models import Board, Player
from . import accounts, boards, forced, letters, movetext
from .computer import USERID as COMPUTER
from .errors import PlayerError
from .unit import Unit

ASKING = {"undo": "undo", "propose": "draw"}  # the move word -> the request it opens
ANSWERS = ("accept", "reject")
WORDS = (*ASKING, *ANSWERS)  # the moves this module answers (``boards.play`` hands them here)
NOT_QUEUEABLE = (*WORDS, *movetext.WORD_MOVES)
MAX_QUEUED = 200  # characters of a queued move (the column's width; moves are far shorter)


def describe(board: Board, players) -> LazyText:
    """The open request, as the object of a sentence: "alice's offer of a draw"."""
    asker = player_name(players[board.request_seat])
    if board.request_kind == "undo":
        return lazy_gettext("%(asker)s's request to take back move %(move)s", asker=asker, move=board.request_move)
    return lazy_gettext("%(asker)s's offer of a draw", asker=asker)


def answer(unit: Unit, board: Board, game: Game, seat: int, word: str, players, comment: str) -> None:
    """``seat`` sends one of WORDS on its active, locked board."""
    if word in ASKING:
        _ask(unit, board, game, seat, ASKING[word], players, comment)
    elif board.request_kind is None:
        raise PlayerError(lazy_gettext("There is no open request on board %(board)s to %(word)s; \"undo\" asks to "
                                       "take back your last move, \"propose\" offers a draw.", board=board.id,
                                       word=word), USAGE["move"])
    elif board.request_seat == seat:
        raise PlayerError(lazy_gettext("You made %(request)s on board %(board)s yourself; %(other)s answers it (a "
                                       "move of yours withdraws it).", request=describe(board, players),
                                       board=board.id, other=player_name(players[1 - seat])),
                          lazy_gettext("your next move, which withdraws it"))
    elif word == "reject":
        note = lazy_gettext("%(name)s rejected %(request)s.", name=player_name(players[seat]),
                            request=describe(board, players))
        board.request_kind = board.request_seat = board.request_move = None
        unit.session.add(board)
        unit.board_changed(board)
        letters.board_mails(unit, board, players, comment=boards.bounded(comment), mover=seat, notes=(note,))
    elif board.request_kind == "draw":
        note = lazy_gettext("%(name)s accepted %(request)s.", name=player_name(players[seat]),
                            request=describe(board, players))
        logged = boards.append(unit, board, game, kind="draw", seat=seat, text="draw",
                               state=boards.current_state(game, board), outcome=ending(game, "draw", seat),
                               comment=comment)
        letters.board_mails(unit, board, players, comment=logged, mover=seat, notes=(note,))
    else:
        _take_back(unit, board, game, seat, players, comment)


def _ask(unit: Unit, board: Board, game: Game, seat: int, kind: str, players, comment: str) -> None:
    computer = players[1 - seat].userid == COMPUTER
    if computer and board.room_id is None:  # a rated game
        raise PlayerError(lazy_gettext("The computer neither takes back moves nor agrees to draws; play on, or "
                                       "resign."), lazy_gettext("a move, or resign"))
    if computer and kind == "draw":
        raise PlayerError(lazy_gettext("The computer agrees to no draws; play on, or resign."),
                          lazy_gettext("a move, or resign"))
    if board.request_kind is not None:
        raise PlayerError(lazy_gettext("Board %(board)s already has an open request (%(request)s); only one may "
                                       "be open at a time, until it is answered or a move is made.",
                                       board=board.id, request=describe(board, players)),
                          lazy_gettext("a move, or wait for the answer"))
    first = None
    if kind == "undo":
        own = [number for number, entry in in_force(log_entries(load_records(unit.session, board)))
               if entry.kind in OWN_MOVES and entry.seat == seat]
        if not own:
            raise PlayerError(lazy_gettext("You have made no move on board %(board)s that could be taken back.",
                                           board=board.id), USAGE["move"])
        first = own[-1]
    board.request_kind, board.request_seat, board.request_move = kind, seat, first
    unit.session.add(board)
    unit.board_changed(board)
    if computer:  # a game started in the browser, unrated: a misplaced stone is taken back at once
        _take_back(unit, board, game, 1 - seat, players, comment)
        return
    letters.board_mails(unit, board, players, comment=boards.bounded(comment), mover=seat)


def _take_back(unit: Unit, board: Board, game: Game, seat: int, players, comment: str) -> None:
    """The undo request is accepted: the log gets ``undo N``, the position is replayed without
    the entries from N on, and a queued move (meant for a position that is gone) is dropped."""
    first, last = board.request_move, board.move_count
    said = {"name": player_name(players[seat]), "request": describe(board, players), "first": first, "last": last}
    note = (lazy_gettext("%(name)s accepted %(request)s: move %(first)s is taken back.", **said) if first == last
            else lazy_gettext("%(name)s accepted %(request)s: moves %(first)s to %(last)s are taken back.", **said))
    text = f"undo {first}"
    entries = [*log_entries(load_records(unit.session, board)), LogEntry("undo", seat, text)]
    state, outcome = replay(game, board.options, entries)
    logged = boards.append(unit, board, game, kind="undo", seat=seat, text=text, state=state, outcome=outcome,
                           comment=comment)
    letters.board_mails(unit, board, players, comment=logged, mover=seat, notes=(note,))


def lapse(board: Board, seat: int, players) -> tuple[LazyText, ...]:
    """What becomes of the open request when ``seat`` makes a move instead of answering
    it (the entry the move adds ends it): a sentence for the board mail."""
    if board.request_kind is None:
        return ()
    if board.request_seat == seat:
        return (lazy_gettext("%(name)s moved, which withdraws %(request)s.", name=player_name(players[seat]),
                             request=describe(board, players)),)
    return (lazy_gettext("%(name)s moved instead of answering, which declines %(request)s.",
                         name=player_name(players[seat]), request=describe(board, players)),)


def play_queued(unit: Unit, board: Board, game: Game, state, players) -> tuple[object, LazyText] | None:
    """Play the queued move if its player's turn has come in ``state``: the new state and
    a sentence for the board mail. None when there is none to play; a move that has
    become illegal is dropped and its player alone is told why (None too)."""
    seat, text = board.queued_seat, board.queued_move
    if seat is None or seat not in game.actors(state):
        return None
    board.queued_seat = board.queued_move = None
    unit.session.add(board)
    try:
        move = game.parse_move(text, state)
        state = game.apply(state, seat, move)
    except MoveError as error:
        letters.send(unit, players[seat].email, "queued_failed", board=board, game=game, move=text,
                     reason=lazy_sentence(error), reply_to=letters.player_reply_to(unit, board, seat))
        return None
    played = game.format_move(move)
    boards.append(unit, board, game, kind="queued", seat=seat, text=played, state=state,
                  outcome=game.outcome(state))
    return state, lazy_gettext("%(name)s's queued move %(move)s was played (move %(number)s).",
                               name=player_name(players[seat]), move=played, number=board.move_count)


def _seated(unit: Unit, command: Command) -> tuple[Board, int, tuple[Player, Player]]:
    """The locked board, the sender's seat on it and its players; PlayerError unless the
    password is right, the sender plays there, and the board is still being played."""
    board = boards.lock(unit, command.board, command.game)
    players = load_players(unit.session, board)
    player = accounts.authenticate(unit, command.userid, command.password, USAGE[command.verb], among=players)
    seat = board.seat_of(player.id)
    if seat is None:
        raise PlayerError(lazy_gettext("%(userid)s is not a player on board %(board)s.", userid=player.userid,
                                       board=board.id), USAGE["games"])  # which boards they play
    if board.status != "active":
        raise boards.finished(board, players)
    return board, seat, players


def board_move(game, state, text: str, refusal: str) -> str:
    """``text`` with an abbreviated word move written out (``pas`` -> ``pass``), for the
    commands that take a move on the board only (queue, submit, preview); PlayerError
    with ``refusal`` (its ``%(word)s`` the word) for a word that is no such move
    (``undo``, ``resign``...), which would otherwise be read as a point."""
    word = movetext.spelled_out(game, state, text)
    if word in NOT_QUEUEABLE:
        raise PlayerError(lazy_gettext(refusal, word=word), USAGE["move"])
    return word


def queue(unit: Unit, command: Command, comment: str) -> None:
    """``<game> queue <board> <userid> <password> <move>``: keep the move for when it is
    the player's turn (a new queue replaces it); on their turn, play it now."""
    board, seat, players = _seated(unit, command)
    game = get_game(board.game)
    state = boards.current_state(game, board)
    if seat in game.actors(state):
        boards.play(unit, board, seat, command.move, comment, command.number)
        return
    if command.number is not None:
        raise PlayerError(lazy_gettext("A queued move takes no move number (#%(number)s): it is played as soon as "
                                       "your turn comes, whatever its number.", number=command.number),
                          USAGE["queue"])
    word = board_move(game, state, command.move, N_("Only a move on the board can be queued; send %(word)s with "
                                                    "the move command."))
    if len(word) > MAX_QUEUED:
        raise PlayerError(lazy_gettext("A queued move is at most %(count)s characters long.", count=MAX_QUEUED),
                          USAGE["queue"])
    try:
        text = game.format_move(game.parse_move(word, state))
    except InvalidMoveError as error:  # the notation is wrong whatever the opponent plays
        raise PlayerError(lazy_sentence(error), USAGE["queue"]) from None
    except MoveError:
        text = word  # illegal now; it may be legal when the turn comes
    replaced = board.queued_move if board.queued_seat == seat else None
    board.queued_seat, board.queued_move = seat, text
    unit.session.add(board)
    unit.board_changed(board)  # the player's page shows the queued move
    letters.send(unit, unit.mail.sender, "queued", board=board, game=game, move=text, replaced=replaced,
                 opponent=player_name(players[1 - seat]))


def submit(unit: Unit, command: Command, comment: str) -> None:
    """``<game> submit <board> <userid> <password> <move>``: mail the position after the
    move, unplayed; ``confirm`` plays it."""
    board, seat, players = _seated(unit, command)
    if command.number is not None and command.number != board.move_count + 1:
        raise boards.moved_on(board, command.number)
    game = get_game(board.game)
    state = boards.current_state(game, board)
    if seat not in game.actors(state):
        raise PlayerError(lazy_gettext("It is not your turn on board %(board)s; a move for when it is can be kept "
                                       "with the queue command.", board=board.id), USAGE["queue"])
    word = board_move(game, state, command.move, N_("Only a move on the board can be submitted; send %(word)s "
                                                    "with the move command."))
    try:
        move = game.parse_move(word, state)
        state = game.apply(state, seat, move)
    except MoveError as error:
        raise PlayerError(lazy_sentence(error), movetext.notation(game)) from None
    state, replies = forced.with_forced_replies(game, state)
    board.submitted_seat, board.submitted_move = seat, game.format_move(move)
    board.submitted_at_move = board.move_count
    unit.session.add(board)
    unit.board_changed(board)  # the player's page shows the submitted move
    view = BoardView(board, game, players, [], state, game.outcome(state), board.move_count)
    letters.send(unit, unit.mail.sender, "submitted", board=board, view=view, move=board.submitted_move,
                 replies=[forced.marked_forced(reply) for reply in replies], userid=players[seat].userid)


def confirm(unit: Unit, command: Command, comment: str) -> None:
    """``<game> confirm <board> <userid> <password>``: play the submitted move, if the
    board has not changed since it was submitted."""
    board, seat, _ = _seated(unit, command)
    if command.number is not None and command.number != board.move_count + 1:
        raise boards.moved_on(board, command.number)
    if board.submitted_seat != seat or board.submitted_move is None:
        raise PlayerError(lazy_gettext("You have submitted no move on board %(board)s, so there is nothing to "
                                       "confirm.", board=board.id), USAGE["submit"])
    move, at = board.submitted_move, board.submitted_at_move
    if at != board.move_count:
        raise PlayerError(lazy_gettext("Board %(board)s has changed since you submitted %(move)s (it had %(at)s "
                                       "moves, now %(now)s); nothing was played. Look at the board and submit "
                                       "again.", board=board.id, move=move, at=at, now=board.move_count),
                          USAGE["submit"])
    board.submitted_seat = board.submitted_move = board.submitted_at_move = None
    unit.session.add(board)
    boards.play(unit, board, seat, move, comment, at + 1)
