"""Every mail the server writes, from the Jinja text templates beside this module.

A template's first line is ``Subject: ...``, then a blank line, then the body;
a wording change touches a template, not Python. ``send`` composes one mail
and queues it in the unit of work; ``board_mails`` writes the mail both
players get after a change to a board.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined

from ..boardview import BoardView, game_record, load_records
from ..games import REGISTRY, Game
from ..mail.outbound import compose, quote, reply_address
from ..models import Board, Player
from .unit import Unit

RECENT_MOVES = 10  # moves listed in a board mail

_templates = Environment(loader=PackageLoader("pbm.service", "templates"), autoescape=False,
                         trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
_templates.filters["quote"] = quote
_templates.filters["indent_comment"] = lambda text: "\n".join("        | " + c for c in text.split("\n"))


def render(name: str, **context) -> tuple[str, str]:
    """The subject and body of template ``name``."""
    text = _templates.get_template(f"{name}.txt").render(**context)
    head, _, body = text.partition("\n\n")
    if not head.startswith("Subject: "):
        raise ValueError(f"template {name}.txt must start with a Subject line")
    return head.removeprefix("Subject: ").strip(), body.strip("\n")


def send(unit: Unit, to: str | None, name: str, *, board: Board | None = None, reply_to: str | None = None,
         auto: str = "auto-replied", attachments=(), **context) -> None:
    """Compose template ``name`` for ``to`` and queue it in this unit of work; a
    player without an address (``to`` None) gets no mail."""
    if to is None:
        return
    subject, body = render(name, settings=unit.settings, board=board, **context)
    board_id = board.id if board is not None else None
    message = compose(unit.settings, to=to, subject=subject, body=body, now=unit.now, auto=auto,
                      reply_to=reply_to, board_id=board_id,
                      in_reply_to=unit.mail.message_id if unit.mail else None, attachments=attachments)
    unit.queue(message, board_id)


def subject_tail(view: BoardView) -> str:
    """Who the board waits for, as pbmserv's subjects say it."""
    seat = view.to_move()
    if seat is not None:
        return view.name(seat)
    return "game over" if view.outcome else "either player"


def footer(board: Board, seat: int | None) -> dict:
    """What the footer of a mail to ``seat`` offers: a move (``acting``), the scoring
    words (``scoring``: both players may act, as in Go's scoring)."""
    if seat is None or board.status != "active":
        return {"acting": False, "scoring": False}
    game = REGISTRY[board.game]
    state = game.from_json(board.state)
    return {"acting": seat in game.actors(state), "scoring": game.to_move(state) is None}


def player_reply_to(unit: Unit, board: Board, seat: int) -> str:
    return reply_address(unit.settings, board.id, board.token(seat))


def board_mails(unit: Unit, board: Board, players: tuple[Player, Player], *, comment: str = "",
                mover: int | None = None, occasion: str | None = None, seats=(0, 1),
                invited: frozenset[int] = frozenset(), forced: tuple[str, ...] = (), auto: str = "auto-replied",
                **context) -> None:
    """The board mail for each of ``seats``: status, recent moves, diagram, the
    mover's comment, the player's private link; the game record when it is over."""
    view = BoardView.current(board, players, load_records(unit.session, board, last=RECENT_MOVES))
    record = []
    if board.status == "finished" and view.game.info.record_format:
        record = [game_record(view.game, board, players, load_records(unit.session, board))]
    for seat in seats:
        player = players[seat]
        send(unit, player.email, "board", board=board, reply_to=player_reply_to(unit, board, seat), auto=auto,
             attachments=record, view=view, tail=subject_tail(view), seat=seat, player=player,
             occasion="invited" if player.id in invited else occasion,
             comment=comment if mover is not None else "", mover=view.name(mover) if mover is not None else "",
             forced=forced, **footer(board, seat), **context)


def error_mail(unit: Unit, sentence: str, usage: str | None, board: Board | None, game: Game | None) -> None:
    """One error mail to the sender of the mail being answered."""
    if board is not None:
        title = f"{REGISTRY[board.game].title} Board {board.id} Error"
    else:
        title = f"{game.title} error" if game else "pbm error"
    send(unit, unit.mail.sender, "error", board=board, title=title, sentence=sentence, usage=usage,
         original=f"Subject: {unit.mail.subject}\n\n{unit.mail.body}")
