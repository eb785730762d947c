"""Rooms: games started in the browser without an account (seed 003, ``/new``).

A room holds the boards of one browser game, one board per round (a new round
keeps the room). Its seats are players without an address or a password
(userids ``guest-<random>``, named Host and Guest, or Player against the
computer, in each reader's language unless the person chose names), or the
computer. Seat 0 is the host's and moves first (Go: Black).

* ``same-device``: both seats play on one screen. Either seat's private link
  acts, at each request, for the side to act (``acting_seat``, which
  ``boards.by_token`` asks), so every move still goes through ``boards.play``
  with the right seat; an answer to an open request (``accept``, ``reject``)
  acts for the seat the request is addressed to (``answering_seat``).
* ``friend``: the host gets seat 0 and an invitation ``/join/<invite>``; the
  first browser to open it takes seat 1. A browser holding a seat keeps a random
  key (the web keeps it in a cookie); the room stores only its SHA-256. The same
  browser opening the invitation again gets its seat back, in the room's latest
  round; any other browser finds the room full.
* ``computer``: the person takes the side they chose, the computer the other;
  the computer moves by itself after each commit (``service.computer``).

A room's boards expire after EXPIRE_DAYS without a move, through the boards'
own deadlines; reminders go only to players with an address, so none here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from ..boardview import UNNAMED
from ..gamewords import game_sentence
from ..config import Settings
from ..games import REGISTRY, OptionError, as_typed, get_game
from ..i18n import LANGUAGES, LazyText, N_, current, gettext, language as speaking, lazy_gettext, number
from ..models import Board, MoveRecord, OutboxMail, Player, Room
from . import boards, computer, letters
from .accounts import GUEST_PREFIX, SUBJECT_WORDS
from .addresses import player_address, same_mailbox
from .requests import ANSWERS
from .errors import PlayerError
from .unit import Unit, run

SAME_DEVICE, FRIEND, COMPUTER = "same-device", "friend", "computer"
MODES = (SAME_DEVICE, FRIEND, COMPUTER)
EXPIRE_DAYS = 7.0  # seed 003: a room expires after seven days without activity
# Seed 003 plays Go with komi 7.5 and no handicap: only the size is chosen.
FIXED_OPTIONS = {"go": {"komi": 7.5}}
FIXED_OPTION_WORDS = {"komi": N_("komi")}  # a fixed option as a sentence names it, in the reader's language
MAX_NAME = 24  # characters of a chosen name
MAX_INVITATION_MAILS = 3  # invitation mails to one address per hour (anyone may type any address)
INVITE = re.compile(r"[a-z0-9]{20}")


@dataclass(frozen=True)
class Started:
    """A new room: its first board, the host's private link token, and for a friend
    room the invitation and the key the host's browser keeps."""

    board_id: int
    token: str
    invite: str | None = None
    host_key: str | None = None


@dataclass(frozen=True)
class Joined:
    """What opening an invitation gave: ``seat`` (``token`` is the seat's private link
    in the latest round; ``key`` a new key for this browser to keep, if it got one),
    ``open`` (the seat is free, not taken: see ``join``), ``full``, ``closed`` (nobody
    joined before the game ended or expired) or ``unknown``."""

    outcome: str
    token: str | None = None
    key: str | None = None
    title: str = ""


def options_offered(game_name: str) -> list:
    """The game's options that a person chooses on ``/new`` (the seed fixes the others)."""
    fixed = FIXED_OPTIONS.get(game_name, {})
    return [spec for spec in get_game(game_name).info.options if spec.name not in fixed]


def computer_refusal(game_name: str, settings: Settings) -> str | None:
    """Why the computer cannot play ``game_name`` here (Go without GNU Go), or None."""
    try:
        computer.check_can_play(get_game(game_name), settings)
    except PlayerError as error:
        return str(error)
    return None


def _name(text: str | None, default: str) -> str:
    """The name typed, or ``default`` (one of ``UNNAMED``, kept as it is and shown in
    each reader's language) when none was."""
    name = " ".join((text or "").split())
    if not name:
        return default
    if len(name) > MAX_NAME or not name.isprintable():
        raise PlayerError(lazy_gettext("A name may have at most %(count)s characters, letters, digits, spaces and "
                                       "punctuation; leave it empty to be called Host or Guest.", count=MAX_NAME))
    if name.lower() == computer.USERID:
        raise PlayerError(lazy_gettext("That name is the server's own player's; choose another."))
    # a watcher's board mail would read "Go Board 101 error", or "Go Board 101 game over" while the game runs
    if name.lower() in (*SUBJECT_WORDS, letters.GAME_OVER, letters.EITHER_PLAYER):
        raise PlayerError(lazy_gettext("%(name)s is a word board mails use in their subjects; choose another "
                                       "name.", name=name))
    return name


def _options(game, raw: dict[str, str]) -> dict:
    """The options chosen on ``/new`` (form fields by option name; yes or no for a
    switch), with the fixed ones; PlayerError in the page's words for a field that
    is no option offered there or a value the game refuses."""
    fixed = FIXED_OPTIONS.get(game.name, {})
    offered = {spec.name: spec for spec in options_offered(game.name)}
    for name, value in raw.items():
        if name in fixed:
            raise PlayerError(lazy_gettext("In games started here %(game)s is played with %(option)s %(value)s; "
                                           "it cannot be chosen.", game=game.title,
                                           option=lazy_gettext(FIXED_OPTION_WORDS[name]), value=number(fixed[name])))
        if name not in offered:
            raise PlayerError(lazy_gettext("The form holds a field that is none of the game's options; start again "
                                           "from this page."))
        if offered[name].kind == "bool" and value.strip().lower() not in ("", "yes", "no"):
            raise PlayerError(lazy_gettext("The option %(option)s must be yes or no, not \"%(value)s\".",
                                           option=_label_of(offered[name]), value=as_typed(value[:20])))
    try:  # a value too long to be one is refused as its beginning (the sentence quotes it)
        options = game.parse_options({k: v if len(v) <= 20 else v[:20] + "..." for k, v in raw.items() if v.strip()})
    except OptionError as error:  # mail's "-size must be ..." as a page says it
        raise PlayerError(lazy_option_sentence(error, offered)) from None
    return {**options, **fixed}


def option_label(spec) -> str:
    """An option as the ``/new`` form labels it, in the page's language ("Tiles in
    the pool (default 50; 40 with Tantrix scoring)")."""
    text = gettext(spec.help)
    return text[:1].upper() + text[1:]


def _label_of(spec) -> LazyText:
    """An option as a sentence of the page names it: its label without the
    parenthesis, quoted ('"Tiles in the pool"')."""
    return LazyText(lambda: '"%s"' % re.sub(r"\s*\(.*\)$", "", option_label(spec)))


def lazy_option_sentence(error: OptionError, offered: dict) -> LazyText:
    """Mail's "-size must be ..." as a page says it: 'The option "Board size" must
    be ...', in the page's language."""
    def sentence() -> str:
        return re.sub(r"^-(\w+)", lambda m: gettext("The option %(option)s", option=str(
            _label_of(offered[m[1]]) if m[1] in offered else m[1])), game_sentence(error))
    return LazyText(sentence)


def start(engine: Engine, settings: Settings, *, game: str, mode: str, options: dict[str, str],
          side: str | None = None, name: str | None = None, guest_name: str | None = None,
          address: str | None = None, language: str | None = None, now: datetime | None = None) -> Started:
    """Open a room and its first board. ``options`` are the game's options as typed
    (empty ones take the default); ``side`` is the person's seat against the
    computer (``0`` moves first, ``1`` second; default 0); ``address`` (friend
    rooms) receives the invitation, in ``language``: the language of the page the
    host filled in (default: the current one), whatever account the address may
    have. PlayerError with a sentence for any bad input."""
    found = REGISTRY.get((game or "").strip().lower())
    if found is None:
        titles = ", ".join(g.title for g in REGISTRY.values())
        raise PlayerError(lazy_gettext("There is no game called \"%(name)s\" here; choose one of %(games)s.",
                                       name=as_typed(game[:40]), games=titles))
    if mode not in MODES:
        raise PlayerError(lazy_gettext("Choose how to play: on the same device, with a friend, or against the "
                                       "computer."))
    chosen = _options(found, options)
    host = _name(name, UNNAMED[2] if mode == COMPUTER else UNNAMED[0])
    guest = _name(guest_name, UNNAMED[1]) if mode != COMPUTER else None
    if guest is not None and (same := _same_name_shown(host, guest)) is not None:
        raise PlayerError(lazy_gettext("The two players need different names (both are %(name)s), or the status "
                                       "line could not say whose turn it is.", name=same))
    seat = 0
    if mode == COMPUTER:
        if side not in (None, "", "0", "1"):
            raise PlayerError(lazy_gettext("Choose your side: 0 to move first (%(first)s) or 1 to move second "
                                           "(%(second)s).", first=lazy_gettext(found.sides[0]),
                                           second=lazy_gettext(found.sides[1])))
        seat = int(side or 0)
        computer.check_can_play(found, settings)
    address = player_address(settings, address.strip()) if mode == FRIEND and address and address.strip() else None
    language = language or current()

    def work(unit: Unit) -> Started:
        for chosen_name in (name, guest_name if mode != COMPUTER else None):
            _refuse_a_players_userid(unit, chosen_name)
        if address is not None:
            _check_invitation_mails(unit, address)
        person = _anonymous(unit, host)
        other = computer.player(unit) if mode == COMPUTER else _anonymous(unit, guest)
        seats = (person, other) if seat == 0 else (other, person)
        host_key = secrets.token_urlsafe(24) if mode == FRIEND else None
        room = Room(mode=mode, invite=boards.new_token() if mode == FRIEND else None,
                    host_key=_digest(host_key) if host_key else None, created_at=unit.now)
        unit.session.add(room)
        unit.session.flush()
        board = boards.new_board(unit, found, chosen, seats, settings.nag_days, EXPIRE_DAYS)
        board.room_id = room.id
        unit.session.add(board)
        if address is not None:
            letters.send(unit, address, "room_invitation", board=board, game=found, auto="auto-generated",
                         language=language,
                         invite_url=invite_url(settings, room.invite),
                         play_url=f"{settings.base_url}/play/{board.token0}", days=int(EXPIRE_DAYS))
        return Started(board.id, board.token(seat), room.invite, host_key)

    return run(engine, settings, work, now=now)


def _same_name_shown(host: str, guest: str) -> str | None:
    """The name both seats would go by in some reader's language, or None. An unnamed seat
    is shown in each reader's language (``player_name``), so a host typing "Gastgeber"
    beside an unnamed guest clashes for German readers only; the page's language first."""
    for code in sorted(LANGUAGES, key=lambda code: code != current()):
        with speaking(code):
            shown = [gettext(name) if name in UNNAMED else name for name in (host, guest)]
        if shown[0].casefold() == shown[1].casefold():
            return shown[0]
    return None


def _refuse_a_players_userid(unit: Unit, chosen: str | None) -> None:
    """A browser seat may not go by a registered player's userid: on the status page and
    in lists it would pass for that player."""
    name = " ".join((chosen or "").split())
    if name and unit.session.exec(select(Player.id).where(Player.userid == name.lower())).first() is not None:
        raise PlayerError(lazy_gettext("%(name)s is the userid of a player with an account here; choose another "
                                       "name, so nobody takes you for them.", name=name))


def _anonymous(unit: Unit, display_name: str) -> Player:
    """A new seat without address or password, under a fresh userid."""
    while True:
        userid = GUEST_PREFIX + boards.new_token()[:10]
        if unit.session.exec(select(Player.id).where(Player.userid == userid)).first() is None:
            break
    player = Player(userid=userid, email=None, display_name=display_name, created_at=unit.now)
    unit.session.add(player)
    unit.session.flush()
    return player


def _check_invitation_mails(unit: Unit, address: str) -> None:
    """Anyone may type any address on ``/new``: one address gets at most
    MAX_INVITATION_MAILS invitations an hour (the only mails rooms send)."""
    sent = unit.session.exec(select(func.count()).select_from(OutboxMail).join(
        Board, Board.id == OutboxMail.board_id).where(
        same_mailbox(OutboxMail.recipient, address), Board.room_id.is_not(None),
        OutboxMail.created_at > unit.now - timedelta(hours=1))).one()
    if sent >= MAX_INVITATION_MAILS:
        raise PlayerError(lazy_gettext("%(address)s was sent %(count)s invitations in the last hour, the most it "
                                       "gets; leave the address empty and copy the link instead.",
                                       address=address, count=sent))


def invite_url(settings: Settings, invite: str) -> str:
    return f"{settings.base_url}/join/{invite}"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _holds(stored: str | None, key: str | None) -> bool:
    return bool(stored and key) and hmac.compare_digest(stored, _digest(key))


def latest_board(session: Session, room_id: int) -> Board:
    """The room's current round."""
    return session.exec(select(Board).where(Board.room_id == room_id).order_by(Board.id.desc())).first()


def join(engine: Engine, settings: Settings, invite: str, key: str | None, *, claim: bool = True,
         now: datetime | None = None) -> Joined:
    """Open invitation ``invite`` with the ``key`` this browser keeps (if any): the
    seat the key holds, else the free second seat (taken only with ``claim``, and
    only while the game is on), else ``full``."""
    if not INVITE.fullmatch(invite or ""):
        return Joined("unknown")
    key = key if key and len(key) <= 64 else None

    def work(unit: Unit) -> Joined:
        room = unit.session.exec(select(Room).where(Room.invite == invite)).first()
        if room is None:
            return Joined("unknown")
        board = latest_board(unit.session, room.id)
        title = get_game(board.game).title
        for seat, stored in enumerate((room.host_key, room.guest_key)):
            if _holds(stored, key):
                return Joined("seat", board.token(seat), title=title)
        if room.guest_key is not None:
            return Joined("full", title=title)
        if never_joined(room, board):
            return Joined("closed", title=title)
        if not claim:
            return Joined("open", title=title)
        fresh = secrets.token_urlsafe(24)
        taken = unit.session.execute(update(Room).where(Room.id == room.id, Room.guest_key.is_(None))
                                     .values(guest_key=_digest(fresh)))
        if taken.rowcount != 1:  # another browser took it a moment before
            return Joined("full", title=title)
        unit.board_changed(board)  # the host's open page says the friend has joined
        return Joined("seat", board.token1, key=fresh, title=title)

    return run(engine, settings, work, now=now)


def never_joined(room: Room, board: Board) -> bool:
    """Whether ``board`` of ``room`` is a friend room's that ended before anyone took
    its invitation (which is closed then: ``join``); it gets no new round."""
    return room.mode == FRIEND and room.guest_key is None and board.status != "active"


def room_of(session: Session, board: Board) -> Room | None:
    return session.get(Room, board.room_id) if board.room_id is not None else None


def link_seats(session: Session, board: Board, token: str) -> set[int]:
    """The seats the private link ``token`` of ``board`` plays for: both in a
    same-device room, otherwise its own."""
    room = room_of(session, board)
    if room is not None and room.mode == SAME_DEVICE:
        return {0, 1}
    return {board.seat_of_token(token)}


def acting_seat(session: Session, board: Board, seat: int, move: str | None = None) -> int:
    """The seat a private link of ``board`` acts for when it sends ``move`` (None:
    whatever the page offers): its own seat, except in a same-device room. There an
    answer to an open request (``accept``, ``reject``) acts for the seat the request
    is addressed to; anything else for the side to act now: the side to move; while
    both may act (Go's scoring), the side that did not act last, so each in turn can
    mark and confirm; on a finished board, the side that has not yet asked for a new
    round. ``move`` is read as ``boards.play`` reads it (``acc`` is ``accept``), and
    refused as there (PlayerError) when it abbreviates several words."""
    room = room_of(session, board)
    if room is None or room.mode != SAME_DEVICE:
        return seat
    if move is not None and boards.spelled_out_on(board, move) in ANSWERS:
        return answering_seat(session, board, seat)
    if board.status != "active":
        return 1 if board.newround_votes & 1 else 0
    if board.to_move is not None:
        return board.to_move
    last = session.exec(select(MoveRecord.seat).where(MoveRecord.board_id == board.id)
                        .order_by(MoveRecord.number.desc())).first()
    return 0 if last is None else 1 - last


def answering_seat(session: Session, board: Board, seat: int) -> int:
    """The seat whose answer (``accept``, ``reject``) a page acting for ``seat`` sends:
    ``seat`` itself, except in a same-device room with an open request, where it is
    the seat the request is addressed to (the one who asked shares the screen)."""
    room = room_of(session, board)
    if room is None or room.mode != SAME_DEVICE or board.request_kind is None:
        return seat
    return 1 - board.request_seat
