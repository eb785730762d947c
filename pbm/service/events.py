"""Live-page events: "board n now has m moves", raised by the unit of work's commit.

In one process (the embedded SQLite server) ``publish`` wakes the waiting
pages directly. With PostgreSQL the unit of work also sends ``NOTIFY
pbm_board`` inside its transaction (delivered only on commit), so a listener
in every web process can call ``publish`` for pages served anywhere.
"""

from __future__ import annotations

import threading

CHANNEL = "pbm_board"

_changed = threading.Condition()
_latest: dict[int, int] = {}  # board id -> move count last published


def publish(boards: dict[int, int]) -> None:
    """Record the new move counts and wake every waiting page."""
    if not boards:
        return
    with _changed:
        _latest.update(boards)
        _changed.notify_all()


def wait_for_change(board_id: int, known: int, timeout: float) -> int | None:
    """Block until board ``board_id`` has a move count other than ``known``, or the
    timeout passes; returns the new count or None."""
    with _changed:
        _changed.wait_for(lambda: _latest.get(board_id, known) != known, timeout)
        latest = _latest.get(board_id, known)
    return latest if latest != known else None
