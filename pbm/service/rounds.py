"""New rounds: after a game is over, ``newround`` from both players starts a fresh
board with the same players, sides and options (the computer agrees at once, and on
a same-device screen one press asks for both sides); a board gets no new round when
it was cancelled, a player has signed off, or nobody took its room's invitation."""

from __future__ import annotations

from ..boardview import player_name
from ..games import Outcome, get_game
from ..i18n import lazy_gettext
from ..models import Board
from ..usage import USAGE
from . import boards, letters
from .computer import USERID as COMPUTER
from .errors import PlayerError
from .rooms import SAME_DEVICE, never_joined, room_of
from .unit import Unit


def new_round(unit: Unit, board: Board, seat: int, players) -> None:
    """``newround`` on a finished board: when both players asked, a fresh board starts
    with the same players, sides and options."""
    game = get_game(board.game)
    if board.status == "active":
        raise PlayerError(lazy_gettext("Board %(board)s is still being played; a new round can start once it "
                                       "is over.", board=board.id),
                          lazy_gettext("your moves on board %(next)s", next=board.id))
    if board.next_board_id is not None:
        raise PlayerError(lazy_gettext("The new round of board %(board)s has already started as board %(next)s.",
                                       board=board.id, next=board.next_board_id),
                          lazy_gettext("your moves on board %(next)s", next=board.next_board_id))
    ended = Outcome.from_json(board.outcome)  # its kind filled in for outcomes stored without one
    if ended is not None and ended.kind == "cancellation":
        raise PlayerError(lazy_gettext("Board %(board)s was cancelled before its game began, so it has no new "
                                       "round; challenge again for a new game.", board=board.id),
                          USAGE["challenge"])
    room = room_of(unit.session, board)
    if room is not None and never_joined(room, board):
        raise PlayerError(lazy_gettext("Nobody took the invitation of board %(board)s before its game ended, so it "
                                       "gets no new round; start a new game.", board=board.id),
                          lazy_gettext("a new game from the page /new"))
    gone = [player_name(player) for player in players if player.closed_at is not None]
    if gone:
        raise PlayerError(lazy_gettext("%(name)s has signed off, so board %(board)s gets no new round; challenge "
                                       "someone else to a new game.", name=gone[0], board=board.id),
                          USAGE["challenge"])
    if board.newround_votes & 1 << seat:
        raise PlayerError(lazy_gettext("You have already asked for a new round of board %(board)s; it starts when "
                                       "%(other)s agrees.", board=board.id, other=player_name(players[1 - seat])),
                          USAGE["message"])  # a word to the other player
    board.newround_votes |= 1 << seat
    if players[1 - seat].userid == COMPUTER or (room is not None and room.mode == SAME_DEVICE):
        board.newround_votes = 0b11  # the computer is always ready; on one screen both sides asked
    unit.session.add(board)
    unit.board_changed(board)  # its pages show the vote, and then the new round
    if board.newround_votes != 0b11:
        for reader, player in enumerate(players):
            letters.send(unit, player.email, "newround_asked", board=board,
                         reply_to=letters.player_reply_to(unit, board, reader), game=game,
                         asker=player_name(players[seat]), asking=reader == seat,
                         other=player_name(players[1 - seat]))
        return
    new = boards.new_board(unit, game, board.options, players, board.nag_days, board.expire_days)
    new.room_id = board.room_id  # a browser game's rounds stay in its room
    board.next_board_id = new.id
    letters.board_mails(unit, new, players, occasion="newround", previous=board.id)
