"""One-click unsubscribe (RFC 8058): every board mail to a watcher carries a link
(and ``List-Unsubscribe`` headers) that stops that watcher's mails of that board,
no password needed, so whoever gets the mails can stop them, even at an address
someone else signed up and subscribed. The link is signed with the instance's
key (``config.secret_key``): it names the watcher and the board, and nothing else
can be done with it (``social.stop_watching`` follows it)."""

from __future__ import annotations

import hashlib
import hmac
import re

from ..config import Settings, secret_key

_TOKEN = re.compile(r"([1-9][0-9]{0,17})-([1-9][0-9]{0,17})-([0-9a-f]{24})\Z")


def _signature(settings: Settings, player_id: int, board_id: int) -> str:
    key = secret_key(settings).encode()
    return hmac.new(key, f"unsubscribe:{player_id}:{board_id}".encode(), hashlib.sha256).hexdigest()[:24]


def link(settings: Settings, player_id: int, board_id: int) -> str:
    """The address that stops ``player_id`` watching ``board_id``."""
    return f"{settings.base_url}/unsubscribe/{player_id}-{board_id}-{_signature(settings, player_id, board_id)}"


def read(settings: Settings, token: str) -> tuple[int, int] | None:
    """(watcher, board) that a link's token names, or None for a token this server did not sign."""
    match = _TOKEN.match(token)
    if match is None:
        return None
    player_id, board_id = int(match[1]), int(match[2])
    if not hmac.compare_digest(match[3], _signature(settings, player_id, board_id)):
        return None
    return player_id, board_id
