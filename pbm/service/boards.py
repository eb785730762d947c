"""Boards: the only writer of the move log and of the board's cached state.

Every change to a board (a move, a forced move the server plays, a pass, a
resignation, an expiry or cancellation) goes through ``append``,
which adds the log entry and brings the cached state, the turn and the
deadlines up to date in the same transaction. ``rebuild`` replays every log
into its cache and reports what differed.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import bindparam, or_
from sqlalchemy.orm import aliased
from sqlmodel import Session, select

from ..boardview import (LOG_INSERT, BoardView, board_state, entry_written, load_players, player_name,
                         remember_state)
from ..gamewords import lazy_sentence
from ..movelog import OWN_MOVES, ending
from ..games import Consequences, Game, MoveError, Outcome, get_game
from ..i18n import N_, LazyText, lazy_gettext
from ..models import Board, MoveRecord, Player
from ..usage import USAGE, Usage
from . import letters, ratings
from .movetext import applied, notation, overlong, same_move, spelled_out, word_moves
from .errors import PlayerError
from .forced import MAX_FORCED, forced_move
from .unit import Unit

STATE_VERSION = 1  # the version of the stored state JSON ("version" key)
MAX_COMMENT = 4000  # characters of a comment passed on to the opponent
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_token() -> str:
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(20))


def stored(game: Game, state) -> dict:
    """The state as the board caches it: the game's JSON plus its version."""
    return {**game.to_json(state), "version": STATE_VERSION}


def current_state(game: Game, board: Board):
    data = board.state
    if data.get("version", 1) > STATE_VERSION:
        raise ValueError(f"board {board.id} was stored by a newer pbm (state version {data['version']})")
    return board_state(game, data)


def new_board(unit: Unit, game: Game, options: dict, seats: tuple[Player, Player], nag: float,
              expire: float) -> Board:
    state = game.initial_state(options)
    board = Board(game=game.name, options=options, seat0_id=seats[0].id, seat1_id=seats[1].id,
                  token0=new_token(), token1=new_token(), state=stored(game, state),
                  to_move=game.to_move(state), nag_days=nag, expire_days=expire, created_at=unit.now,
                  last_move_at=unit.now, nag_due_at=unit.now + timedelta(days=nag),
                  expire_due_at=unit.now + timedelta(days=expire))
    unit.session.add(board)
    unit.session.flush()
    unit.board = board
    unit.board_changed(board)
    return board


# Built once: a statement made per call costs more Python than its round trip. The
# board's players come in the same statement (every use of a board shows or mails
# them); only the board row is locked.
_SEAT0, _SEAT1 = aliased(Player), aliased(Player)
_WITH_PLAYERS = (select(Board, _SEAT0, _SEAT1).join(_SEAT0, _SEAT0.id == Board.seat0_id)
                 .join(_SEAT1, _SEAT1.id == Board.seat1_id))
_BY_ID_LOCKED = _WITH_PLAYERS.where(Board.id == bindparam("board")).with_for_update(of=Board)
_BY_TOKEN = _WITH_PLAYERS.where(or_(Board.token0 == bindparam("token"), Board.token1 == bindparam("token")))
_BY_TOKEN_LOCKED = _BY_TOKEN.with_for_update(of=Board)


def lock(unit: Unit, board_id: int, game_name: str | None = None) -> Board:
    """The board, locked for this transaction, read with its two players (which the
    unit keeps, so ``load_players`` finds them); PlayerError when there is none or it
    is another game's. Errors from here on name this board."""
    row = unit.session.exec(_BY_ID_LOCKED, params={"board": board_id}).first()
    if row is None:
        raise PlayerError(lazy_gettext("There is no board %(board)s.", board=board_id), "<game> games")
    board, *players = row
    unit.held.extend(players)
    unit.board = board
    if game_name and game_name != board.game:
        raise another_game(board, game_name)
    return board


def lock_seated(unit: Unit, player: Player, *, running: bool) -> list[Board]:
    """The boards ``player`` sits at (``running``: the active ones only), locked and
    read afresh, in id order as every unit locking several boards does: a unit that
    writes them all (a vacation, a disowned account's new tokens) must not read
    one that a move or chat changes before its write (on PostgreSQL that unit would
    fail its version check on every try and answer 'busy')."""
    query = select(Board).where(or_(Board.seat0_id == player.id, Board.seat1_id == player.id))
    if running:
        query = query.where(Board.status == "active")
    return list(unit.session.exec(query.order_by(Board.id).with_for_update()
                                  .execution_options(populate_existing=True)).all())


def another_game(board: Board, game_name: str) -> PlayerError:
    """The refusal of a command naming ``game_name`` for a board of another game."""
    return PlayerError(lazy_gettext("Board %(board)s is a %(game)s board, not %(named)s.", board=board.id,
                                    game=get_game(board.game).title, named=get_game(game_name).title),
                       lazy_gettext('the same command beginning with "%(name)s"', name=board.game))


def by_token(session: Session, token: str, *, lock: bool = True,
             move: str | None = None) -> tuple[Board | None, int, tuple[Player, Player] | None]:
    """The board, seat and players of a private token sending ``move`` (None: the
    seat its page acts for), or (None, 0, None); the board locked unless ``lock`` is
    False. On a board played on one device, either token is the seat to act, and an
    answer to a request the seat it is addressed to (``rooms.acting_seat``). Keep the
    players while the board is used: the session holds only what is referenced, and
    ``load_players`` finds them there."""
    from .rooms import acting_seat  # rooms builds on this module

    row = session.exec(_BY_TOKEN_LOCKED if lock else _BY_TOKEN, params={"token": token}).first()
    if row is None:
        return None, 0, None
    board, *players = row
    seat = board.seat_of_token(token)
    return board, acting_seat(session, board, seat, move), (players[0], players[1])


def spelled_out_on(board: Board, text: str) -> str:
    """``text`` as ``play`` reads it on ``board``: an abbreviated word written out
    (``movetext.spelled_out`` in the board's game and position, ``acc`` -> ``accept``);
    PlayerError as there."""
    game = get_game(board.game)
    return spelled_out(game, current_state(game, board), text.strip())


def finished(board: Board, players) -> PlayerError:
    """The refusal of a move or request on a finished board: how it ended, and its
    new round when there is one."""
    view = BoardView.current(board, players, [])
    status = view.lazy_status_line()
    if board.next_board_id is not None:
        return PlayerError(lazy_gettext("Board %(board)s is finished, so no more moves can be made. %(status)s Its "
                                        "new round is board %(next)s.", board=board.id, status=status,
                                        next=board.next_board_id),
                           lazy_gettext("your moves on board %(next)s", next=board.next_board_id))
    again = lazy_gettext('"newround" (both players send it) for a new round with the same sides and options') \
        if view.new_round_open else USAGE["challenge"]
    return PlayerError(lazy_gettext("Board %(board)s is finished, so no more moves can be made. %(status)s",
                                    board=board.id, status=status), again)


def bounded(comment: str) -> str:
    """A comment as it is passed on: at most MAX_COMMENT characters, saying when it was cut."""
    if len(comment) > MAX_COMMENT:
        return comment[:MAX_COMMENT].rstrip() + "\n[... the rest was cut]"
    return comment


def append(unit: Unit, board: Board, game: Game, *, kind: str, seat: int | None, text: str, state,
           outcome: Outcome | None, comment: str = "", did: Consequences | None = None) -> str:
    """Add one entry to the board's log and update its cache, turn and deadlines;
    returns the comment as the log keeps it (``bounded``). ``did``: what the move
    did besides itself (``game.consequences``), for the board mail's move list.
    The entry ends any open request (it was about the position before); the end of
    the game or an undo also drops a queued move; an entry that ends the game moves
    the players' ratings (``ratings.game_over``)."""
    logged = bounded(comment)
    number = board.move_count + 1
    if did is None:  # an entry logged again at this number after a refusal rolled one back is not the same
        unit.played.pop((board.id, number), None)
    else:
        unit.played[(board.id, number)] = did
    # A Core INSERT, at once: the log is append-only and read as plain rows, so the
    # entry never needs to be an ORM object (whose flush costs more than the write).
    unit.write(LOG_INSERT, {
        "board_id": board.id, "number": number, "seat": seat, "kind": kind, "text": text,
        "comment": logged, "created_at": unit.now})
    entry_written(unit.session, board.id, number)
    board.state = stored(game, state)
    remember_state(board.state, state)
    board.move_count += 1
    board.last_move_at = unit.now
    board.request_kind = board.request_seat = board.request_move = None
    if outcome is not None or kind == "undo":
        board.queued_seat = board.queued_move = None
    if outcome is not None:
        board.status, board.outcome, board.to_move = "finished", outcome.to_json(), None
        board.nag_due_at = board.expire_due_at = None
    else:
        board.to_move = game.to_move(state)
        board.nag_due_at = unit.now + timedelta(days=board.nag_days)
        board.expire_due_at = unit.now + timedelta(days=board.expire_days)
        board.nagged_at = None
    unit.session.add(board)
    if outcome is not None:
        ratings.game_over(unit, board, outcome)  # every end of a game passes here
    unit.board_changed(board)
    return logged


def play(unit: Unit, board: Board, seat: int, text: str, comment: str = "", number: int | None = None) -> None:
    """``seat`` plays ``text`` (a move, ``resign``, ``decline``, ``newround``, or one of
    ``requests.WORDS``) on a locked board; forced replies and the other player's queued
    move follow; both players get the board mail. PlayerError otherwise."""
    from . import requests  # requests builds on this module

    game = get_game(board.game)
    players = load_players(unit.session, board)
    state = current_state(game, board)
    text = spelled_out(game, state, text.strip())
    if text.lower() == "newround":
        from .rounds import new_round  # rounds builds on this module

        new_round(unit, board, seat, players)
        return
    if board.status != "active":
        raise finished(board, players)
    expected = board.move_count + 1
    if number is not None and number != expected:
        if text.lower() not in word_moves(game) and (refusal := unreadable(game, state, text)) is not None:
            raise refusal  # no move at all: that, not the board's having moved on, is what went wrong
        raise moved_on(board, number)
    if text.lower() in requests.WORDS:
        requests.answer(unit, board, game, seat, text.lower(), players, comment)
        return
    if text.lower() == "decline":
        decline(unit, board, game, seat, state, players, comment)
        return
    if text.lower() == "resign":
        logged = append(unit, board, game, kind="resign", seat=seat, text="resign", state=state,
                        outcome=ending(game, "resign", seat), comment=comment)
        letters.board_mails(unit, board, players, comment=logged, mover=seat)
        return
    if seat not in game.actors(state):
        turn = game.to_move(state)
        if (again := _played_before(unit, board, seat, text)) is not None:  # the same mail or form sent twice
            raise PlayerError(lazy_gettext("Your move %(move)s on board %(board)s was already played (move "
                                           "%(number)s); it is %(name)s's turn now.", move=again.text, board=board.id,
                                           number=again.number, name=player_name(players[turn])),
                              as_it_is_now(board))
        raise PlayerError(lazy_gettext("It is not your turn on board %(board)s: it is %(name)s's turn (%(side)s).",
                                       board=board.id, name=player_name(players[turn]),
                                       side=lazy_gettext(game.sides[turn])),
                          Usage(USAGE["queue"].forms[0], note=N_("a move played the moment your turn comes")))
    if (refusal := overlong(text)) is not None:
        raise PlayerError(refusal, notation(game))
    try:
        move, after = applied(game, state, seat, text)
    except MoveError as error:
        raise PlayerError(lazy_sentence(error), notation(game)) from None
    notes = requests.lapse(board, seat, players)  # before the entry ends the open request
    logged = append(unit, board, game, kind="move", seat=seat, text=game.format_move(move), state=after,
                    outcome=game.outcome(after), comment=comment, did=game.consequences(state, after))
    forced = play_on(unit, board, game, after, players)
    letters.board_mails(unit, board, players, comment=logged, mover=seat, forced=forced, notes=notes)


def moved_on(board: Board, number: int) -> PlayerError:
    """The refusal of a move sent as move ``number`` when the board's next move is another."""
    return PlayerError(lazy_gettext("You sent move #%(number)s, but the next move on board %(board)s is "
                                    "#%(expected)s; the board changed since you looked.",
                                    number=number, board=board.id, expected=board.move_count + 1),
                       as_it_is_now(board))


def as_it_is_now(board: Board) -> LazyText:
    """What to send instead of a move made for a position that is gone: a look at the board."""
    return lazy_gettext('"%(game)s show %(board)s" for the board as it is now', game=board.game, board=board.id)


def unreadable(game: Game, state, text: str) -> PlayerError | None:
    """The refusal of ``text`` when it is no move of the game's notation (too long, or
    not read as one), else None: whether it is legal is not asked."""
    if (refusal := overlong(text)) is not None:
        return PlayerError(refusal, notation(game))
    try:
        game.parse_move(text, state)
    except MoveError as error:
        return PlayerError(lazy_sentence(error), notation(game))
    return None


def _played_before(unit: Unit, board: Board, seat: int, text: str) -> MoveRecord | None:
    """``seat``'s latest move on ``board`` when it was ``text`` (spaces and case aside)."""
    last = unit.session.exec(select(MoveRecord).where(
        MoveRecord.board_id == board.id, MoveRecord.seat == seat, MoveRecord.kind.in_(OWN_MOVES))
        .order_by(MoveRecord.number.desc()).limit(1)).first()
    return last if last is not None and same_move(last.text, text) else None


RESIGN = "resign"  # what to send instead: the move word, in every language (the move list translates it)


def decline(unit: Unit, board: Board, game: Game, seat: int, state, players, comment: str) -> None:
    """The challenged player refuses the board before making a move: cancelled, unrated."""
    if board.room_id is not None:
        raise PlayerError(lazy_gettext("A game started in the browser cannot be declined; resign ends it, and a new "
                                       "round can follow."), lazy_gettext("a move, or resign"))
    if board.challenger_seat == seat:
        raise PlayerError(lazy_gettext("You challenged on board %(board)s yourself, so it is not yours to decline; "
                                       "resign ends it.", board=board.id), RESIGN)
    moved = unit.session.exec(select(MoveRecord.id).where(
        MoveRecord.board_id == board.id, MoveRecord.seat == seat, MoveRecord.kind.in_(OWN_MOVES))).first()
    if moved is not None:
        raise PlayerError(lazy_gettext("You have moved on board %(board)s already; a game can only be declined "
                                       "before your first move (resign ends it instead).", board=board.id),
                          RESIGN)
    logged = append(unit, board, game, kind="decline", seat=seat, text="decline", state=state,
                    outcome=ending(game, "decline", seat), comment=comment)
    letters.board_mails(unit, board, players, comment=logged, mover=seat)


def play_on(unit: Unit, board: Board, game: Game, state, players) -> list[LazyText]:
    """After a move, what follows on its own, with a sentence for each: the queued move
    of the player whose turn has come, and while the rules leave the side to move
    exactly one move, that move (logged as ``auto``). The queued move is tried first:
    when it has become illegal (the only move left may be a forced pass), its player
    is told and the forced move follows."""
    from . import requests  # requests builds on this module

    sentences: list[LazyText] = []
    while board.status == "active" and len(sentences) < MAX_FORCED:
        if (queued := requests.play_queued(unit, board, game, state, players)) is not None:
            state, sentence = queued
            sentences.append(sentence)
            continue
        if (forced := forced_move(game, state)) is None:
            break
        seat, move = forced
        state = game.apply(state, seat, move)
        text = game.format_move(move)
        append(unit, board, game, kind="auto", seat=seat, text=text, state=state, outcome=game.outcome(state))
        sentences.append(lazy_gettext("%(name)s had no other move: the server played %(move)s for them (move "
                                      "%(number)s).", name=player_name(players[seat]), move=text,
                                      number=board.move_count))
    return sentences


def end(unit: Unit, board: Board, kind: str, seat: int | None) -> Outcome:
    """End an active board without a move: ``forfeit``, ``cancel``, ``expire``, or
    ``draw`` (a draw offer still open at expiry)."""
    game = get_game(board.game)
    outcome = ending(game, kind, seat)
    append(unit, board, game, kind=kind, seat=seat, text=kind, state=current_state(game, board),
           outcome=outcome)
    return outcome
