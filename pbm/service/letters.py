"""Every mail the server writes, from the Jinja text templates beside this module.

A template's first line is ``Subject: ...``, then a blank line, then the body;
a wording change touches a template, not Python. ``send`` composes one mail
and queues it in the unit of work; ``board_mails`` writes the mail both
players get after a change to a board.

Every mail is written in its recipient's language (``Player.language``; English
for an address without an account): the templates' ``{% trans %}`` blocks and
``_()`` calls, and every sentence Python makes while the mail is rendered
(``pbm.i18n``), come from the same catalogues as the pages.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy import bindparam, func, or_
from sqlmodel import Session, select

from .. import driver_sql, i18n
from ..boardview import BoardView, board_state, game_record, load_records, player_name
from ..gamewords import game_sentence
from ..db import flush
from ..games import REGISTRY, Game
from ..mail.outbound import compose, quote, reply_address, writable_address
from ..models import Board, InboundMessage, Player, PlayerAddress, Subscription
from . import ratings
from .errors import PlayerError
from .unit import Unit
from .unsubscribe import link as unsubscribe_link

log = logging.getLogger(__name__)

# What a board mail's subject says where others name the player to move (English in every language, as
# pbmserv's): no browser seat may be called so (``rooms``).
GAME_OVER, EITHER_PLAYER = "game over", "either player"

MAX_ANSWERS_PER_MAIL = 10  # mails to the sender that one inbound mail may cause
MAX_STRANGERS_PER_MAIL = 1  # invitations and confirmations one inbound mail may cause
MAX_RELAYED_PER_MAIL = 60  # a player's words passed on to others (chat, message) one inbound mail may cause

# auto_reload off: the templates are part of the package, and checking their files
# for changes on every mail cost a stat() each.
_templates = Environment(loader=PackageLoader("pbm.service", "templates"), autoescape=False,
                         trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined,
                         extensions=["jinja2.ext.i18n"], auto_reload=False)
_templates.install_gettext_callables(i18n.gettext, i18n.ngettext, newstyle=True)  # the current language
_templates.filters["quote"] = quote
_templates.filters["sentence"] = game_sentence
_templates.filters["player_name"] = player_name  # a browser seat by the name it chose
_templates.filters["number"] = lambda value: str(i18n.number(value))
_templates.globals["provisional_games"] = ratings.PROVISIONAL_GAMES
_templates.filters["indent_comment"] = lambda text: "\n".join("        | " + c for c in text.split("\n"))


def render(name: str, language: str = i18n.DEFAULT, **context) -> tuple[str, str]:
    """The subject and body of template ``name`` in ``language``."""
    with i18n.language(language):
        text = _templates.get_template(f"{name}.txt").render(language=i18n.current(), **context)
    head, _, body = text.partition("\n\n")
    if not head.startswith("Subject: "):
        raise ValueError(f"template {name}.txt must start with a Subject line")
    return head.removeprefix("Subject: ").strip(), body.strip("\n")


def send(unit: Unit, to: str | None, name: str, *, board: Board | None = None, reply_to: str | None = None,
         auto: str = "auto-replied", attachments=(), relayed: bool = False, language: str | None = None,
         unsubscribe: str | None = None, **context) -> None:
    """Compose template ``name`` for ``to`` and queue it in this unit of work; a
    player without an address (``to`` None) gets no mail. ``relayed``: the mail
    passes a player's words on (chat, message; see ``within_limits``). The mail is
    in ``language``, by default the language of the player whose address (primary
    or added) ``to`` is. ``unsubscribe``: the link that stops such mails (a watcher's)."""
    if to is None or name != "board" and not within_limits(unit, to, stranger=name == "confirm",
                                                            relayed=relayed):
        return
    if not writable_address(to):  # kept from before the doors refused such addresses
        log.warning("no %s mail to %r: an address no mail can be written to", name, to)
        return
    if language is None:
        language = unit.session.exec(_LANGUAGE_OF, params={"to": to}).first()
    subject, body = render(name, language or i18n.DEFAULT, settings=unit.settings, board=board,
                           unsubscribe=unsubscribe, **context)
    board_id = board.id if board is not None else None
    answered = unit.mail is not None and to == unit.mail.sender
    mail = compose(unit.settings, to=to, subject=subject, body=body, now=unit.now,
                   # RFC 3834: only the answer to the sender is a reply; to anyone else it is generated
                   auto=auto if answered or auto != "auto-replied" else "auto-generated",
                   reply_to=reply_to, board_id=board_id,
                   # only the answer to the sender refers to their mail: its Message-ID names their host
                   in_reply_to=unit.mail.message_id if answered else None,
                   attachments=attachments, unsubscribe=unsubscribe)
    unit.queue(mail, board_id)


# Built once (see ``_SUBSCRIPTIONS``): the language of the account an address belongs to.
_LANGUAGE_OF = select(Player.language).where(or_(
    Player.email == bindparam("to"),
    Player.id.in_(select(PlayerAddress.player_id).where(PlayerAddress.email == bindparam("to")))))


def within_limits(unit: Unit, to: str, *, stranger: bool, relayed: bool = False) -> bool:
    """Whether this unit may queue one more mail (other than a board mail) to ``to``: a
    mail answered gets at most MAX_ANSWERS_PER_MAIL answers; an address that sent more
    than ``answers_per_hour`` (a setting) mails in the last hour gets no more answers (which also
    ends loops with auto-responders that do not say so); one mail reaches at most
    MAX_STRANGERS_PER_MAIL addresses without an account, and only while its sender is
    within the hourly limit (invitations and confirmations are refused beforehand,
    see ``check_hourly``); one mail passes a player's
    words on (``relayed``) to at most MAX_RELAYED_PER_MAIL addresses, and only while its
    sender is within the hourly limit (``check_relay`` refuses beforehand, with a
    sentence, what would go over)."""
    if stranger:
        unit.strangers += 1
        return unit.mail is None or unit.strangers <= MAX_STRANGERS_PER_MAIL and _answer_budget(unit) > 0
    if relayed:
        unit.relayed += 1
        return unit.relayed <= MAX_RELAYED_PER_MAIL and _answer_budget(unit) > 0
    if unit.mail is None or to != unit.mail.sender:
        return True
    unit.answers += 1
    if unit.answers == max(_answer_budget(unit), 0) + 1:  # once a mail: the operator sees why answers stop
        log.warning("no answer to %s: %s mails from that address in the last hour, the most answered",
                    to, unit.settings.answers_per_hour)
    return unit.answers <= min(MAX_ANSWERS_PER_MAIL, _answer_budget(unit))


def _answer_budget(unit: Unit) -> int:
    """Answers the sender of the mail being answered may still get this hour."""
    if unit.answer_budget is None:
        received = unit.session.exec(select(func.count()).select_from(InboundMessage).where(
            InboundMessage.sender == unit.mail.sender,
            InboundMessage.received_at > unit.now - timedelta(hours=1))).one()
        unit.answer_budget = unit.settings.answers_per_hour - received  # this mail is recorded as its unit ends
    return unit.answer_budget


def check_relay(unit: Unit, count: int) -> None:
    """PlayerError unless ``count`` more relayed mails fit in the limits of ``within_limits``."""
    if unit.relayed + count > MAX_RELAYED_PER_MAIL:
        raise PlayerError(i18n.lazy_gettext("One mail may pass words on to at most %(most)s addresses; this would "
                                            "make %(count)s.", most=MAX_RELAYED_PER_MAIL, count=unit.relayed + count),
                          i18n.lazy_gettext("the words to at most %(most)s players in one mail",
                                            most=MAX_RELAYED_PER_MAIL))
    check_hourly(unit)


def check_hourly(unit: Unit) -> None:
    """PlayerError when the sender of the mail being answered is over the hourly limit
    of ``within_limits``: such a mail passes no words on, and mails no stranger (an
    invitation, a confirmation), or a flood of mails would mail as many others."""
    if unit.mail is not None and _answer_budget(unit) <= 0:
        raise PlayerError(i18n.lazy_gettext("You sent more than %(count)s mails in the last hour; try again later.",
                                            count=unit.settings.answers_per_hour),
                          i18n.lazy_gettext("the same mail in an hour"))


def subject_tail(view: BoardView) -> str:
    """Who the board waits for, as pbmserv's subjects say it."""
    seat = view.to_move()
    if seat is not None:
        return view.name(seat)
    return GAME_OVER if view.outcome else EITHER_PLAYER


def footer(view: BoardView, seat: int | None) -> dict:
    """What the footer of a mail to ``seat`` about ``view``'s board offers now: a move
    (``acting``), the scoring words (``scoring``: both players may act, as in Go's scoring)."""
    board, game = view.board, view.game
    if seat is None or board.status != "active":
        return {"acting": False, "scoring": False}
    state = view.state if view.is_latest else board_state(game, board.state)  # the board as it is, not as shown
    return {"acting": seat in game.actors(state), "scoring": game.to_move(state) is None}


def player_reply_to(unit: Unit, board: Board, seat: int) -> str:
    return reply_address(unit.settings, board.id, board.token(seat))


# Built once: a statement made per call costs more Python than its round trip.
_SUBSCRIPTIONS = select(Subscription.player_id, Subscription.board_id, Subscription.watching,
                        Subscription.created_at).where(
    Subscription.game == bindparam("game"),
    or_(Subscription.board_id == bindparam("board"), Subscription.board_id.is_(None)))


def watchers(session: Session, board: Board) -> list[Player]:
    """The players watching ``board`` (not its own players), by userid: subscribed to
    it, or to every board of its game since before it began and not left out of it."""
    flush(session, later=(Board,))  # plain rows on the connection (see ``load_records``): pending subscriptions first
    rows = driver_sql.rows(session.connection(), _SUBSCRIPTIONS, {"game": board.game, "board": board.id})
    chosen = {player_id: watching for player_id, board_id, watching, _ in rows if board_id is not None}
    ids = {player_id for player_id, board_id, _, since in rows if board_id is None and since <= board.created_at}
    ids = {i for i in ids if chosen.get(i, True)} | {i for i, watching in chosen.items() if watching}
    ids -= {board.seat0_id, board.seat1_id}
    if not ids:
        return []
    return list(session.exec(select(Player).where(Player.id.in_(ids)).order_by(Player.userid)).all())


def seat_of_sender(unit: Unit, board: Board) -> int | None:
    """The seat on ``board`` of the player whose address (primary or added) sent the
    mail being answered, or None."""
    from .accounts import by_address  # accounts writes its mails through this module

    player = by_address(unit.session, unit.mail.sender)
    return board.seat_of(player.id) if player is not None else None


def board_mails(unit: Unit, board: Board, players: tuple[Player, Player], *, comment: str = "",
                mover: int | None = None, occasion: str | None = None, seats=(0, 1),
                invited: frozenset[int] = frozenset(), forced: tuple[str, ...] = (), notes: tuple[str, ...] = (),
                auto: str = "auto-replied", **context) -> None:
    """The board mail for each of ``seats``: ``notes`` (what happened to a request),
    status, recent moves, diagram, moves the server played (``forced``), the
    mover's comment, the player's private link; the game record and how each
    rating moved when it is over. A mail to both seats goes to the board's watchers
    too, with the mover's comment but without what is the players' own (the private
    link, the reply tag); every copy says who reads the comments."""
    view = BoardView.current(board, players, load_records(unit.session, board), unit.moves_played(board))
    # a reminder is the players' own
    watching = watchers(unit.session, board) if tuple(seats) == (0, 1) and not (occasion or "").startswith(
        "reminder") else []
    said = {"comment": comment if mover is not None else "", "mover": view.name(mover) if mover is not None else "",
            "watcher_count": len(watching)}
    record = []
    if board.status == "finished" and view.game.info.record_format:
        record = [game_record(view.game, board, players, view.records)]
    rated = ratings.movements(unit.session, board, players) if board.status == "finished" else []
    for seat in seats:
        player = players[seat]
        send(unit, player.email, "board", board=board, reply_to=player_reply_to(unit, board, seat), auto=auto,
             attachments=record, language=player.language, view=view, tail=subject_tail(view), seat=seat,
             player=player,
             occasion="invited" if player.id in invited else occasion,
             forced=forced, rated=rated, notes=notes, **said, **footer(view, seat), **context)
    for watcher in watching:
        send(unit, watcher.email, "board", board=board, auto=auto, attachments=record, language=watcher.language,
             unsubscribe=unsubscribe_link(unit.settings, watcher.id, board.id), view=view, tail=subject_tail(view), seat=None, player=watcher, occasion=occasion,
             forced=forced, rated=rated, notes=notes, **said, **footer(view, None), **context)


def quoted_original(mail) -> i18n.LazyText:
    """The mail an error answers, as the error mail quotes it: its subject, under the
    reader's word for it, and its text."""
    return i18n.LazyText(lambda: i18n.gettext("Subject:") + f" {mail.subject}\n\n{mail.body}")


def errors_mail(unit: Unit, refused: list[tuple]) -> None:
    """One mail for the several refused lines of one mail (``multiple``): each line
    with its sentence and what to send instead, in the sender's language."""
    boards = {board.id if board is not None else None for _, _, board, _ in refused}
    # titled after a board only when every refusal is about it
    board = refused[0][2] if len(boards) == 1 and None not in boards else None
    send(unit, unit.mail.sender, "errors", board=board,
         board_title=REGISTRY[board.game].title if board is not None else None,
         refused=[{"line": line or "", "error": error, "usage": getattr(error, "usage", None)}
                  for line, error, _, _ in refused],
         original=quoted_original(unit.mail))


def error_mail(unit: Unit, error: Exception, usage: str | None, board: Board | None, game: Game | None) -> None:
    """One error mail to the sender of the mail being answered; ``str(error)`` is its
    sentence, turned into text in the sender's language (see ``pbm.i18n.LazyText``).
    A player answers an error about their board with the corrected move: by replying."""
    seat = seat_of_sender(unit, board) if board is not None else None
    send(unit, unit.mail.sender, "error", board=board, board_title=REGISTRY[board.game].title if board else None,
         game=game, error=error, usage=usage, reply_to=player_reply_to(unit, board, seat) if seat is not None else None,
         original=quoted_original(unit.mail))
