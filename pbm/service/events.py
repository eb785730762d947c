"""Live-page events: "board n is now at version v", raised by the unit of work's
commit, and "this seat is now held by that tab", raised by a page that opens a seat.
With each board's version goes who sits at it, so a play page can follow the list
of its player's boards ("Your boards") as well as its own board.

A board's version (``Board.version``) rises with every write of the board row,
and every change a page shows writes it (``unit.Unit.board_changed``): a move,
an undo request or draw offer and its answer, a queued or submitted move, a
chat, a vacation starting or ending, a vote for a new round. So a page that
shows version v is stale exactly when the board's version is above v.

In the process that commits, ``publish`` wakes the waiting pages directly.
With PostgreSQL the unit of work also sends ``NOTIFY pbm_board``
(``{"101": 17}``) and ``NOTIFY pbm_players`` (``{"101": [3, 4]}``, the board's
two players) inside its transaction (delivered only on commit), and a page
taking a seat sends ``NOTIFY pbm_seat``; one listener thread per web process
(``start_listener``) turns them into calls here, so pages served by any process
hear of changes made in any other. A SQLite file has the same notices, sent
right after the commit (``tell_other_processes``) as Unix datagrams to every
other process of the file that serves live pages (``pbm.service.sqlite_notify``,
one listener thread a process: ``start_sqlite_listener``): the workers of ``pbm
serve --workers``, and commits of ``pbm ingest`` or the scheduler reach them.

A player's *mark* (``player_mark``) is the sum of the latest versions this
process heard of the boards the player sits at: it rises whenever one of them
changes or a new one begins, and, as versions only grow, hearing a notice twice
(a process hears its own NOTIFY too) or out of order changes nothing. A play
page's stream waits for its player's mark to rise, then compares the list the
page shows with the database (``web.play.boards_mark``) and tells the page only
when the list changed.

Everything is kept per process, in memory: the latest version of each board
that changed since the process started, and which tab holds each seat. A page
that connects compares its own version with the database once, so nothing it
missed before (or while the listener was reconnecting) is lost.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..db import beside_database
from . import sqlite_notify

CHANNEL = "pbm_board"
SEAT_CHANNEL = "pbm_seat"
PLAYERS_CHANNEL = "pbm_players"
NOTICE_BOARDS = 150  # boards named in one notice: PostgreSQL takes payloads under 8,000 bytes
LIVE_SUFFIX = "-live"  # the directory beside a SQLite file where its processes' listeners bind

log = logging.getLogger(__name__)

_changed = threading.Condition()
_latest: dict[int, int] = {}   # board id -> version last published
_holders: dict[str, str] = {}  # seat key -> id of the tab that holds the seat
_boards_of: dict[int, set[int]] = {}  # player id -> the boards heard of that the player sits at
_resets = 0                    # how often waiting streams were told to start over


def publish(boards: dict[int, int], seated: dict[int, tuple[int, int]] | None = None) -> None:
    """Record the boards' new versions (and who sits at them: board -> its two
    players) and wake every waiting page. A board's version only grows, so a late
    or repeated notice of an older version changes nothing."""
    if not boards and not seated:
        return
    with _changed:
        for board_id, version in boards.items():
            board_id, version = int(board_id), int(version)
            _latest[board_id] = max(version, _latest.get(board_id, version))
        for board_id, players in (seated or {}).items():
            for player in players:
                _boards_of.setdefault(int(player), set()).add(int(board_id))
        _changed.notify_all()


def _mark(player: int) -> int:
    return sum(_latest.get(board_id, 0) for board_id in _boards_of.get(player, ()))


def player_mark(player: int) -> int:
    """How far this process has heard the boards of ``player`` go: rises with every
    change of one of them (and a new one); see the module's doc."""
    with _changed:
        return _mark(player)


def notices(boards: dict[int, int], seated: dict[int, tuple[int, int]]) -> list[tuple[str, str]]:
    """The PostgreSQL notices (channel, payload) that tell other processes of these
    changes, NOTICE_BOARDS boards a notice."""
    ids = list(boards)
    out = []
    for start in range(0, len(ids), NOTICE_BOARDS):
        chunk = ids[start:start + NOTICE_BOARDS]
        out.append((CHANNEL, json.dumps({board_id: boards[board_id] for board_id in chunk})))
        players = {board_id: list(seated[board_id]) for board_id in chunk if board_id in seated}
        if players:
            out.append((PLAYERS_CHANNEL, json.dumps(players)))
    return out


def take_seat(seat: str, tab: str) -> None:
    """Tab ``tab`` now holds ``seat`` (a key naming one player's seat on one board);
    a stream of any other tab on that seat is told it was replaced."""
    with _changed:
        _holders[seat] = tab
        _changed.notify_all()


def holder(seat: str) -> str | None:
    """The tab that took ``seat`` last, as far as this process heard."""
    with _changed:
        return _holders.get(seat)


def reset_streams() -> None:
    """Wake every waiting stream with "resync", so each page reconnects and compares
    its version with the database (used when notices may have been missed)."""
    global _resets
    with _changed:
        _resets += 1
        _changed.notify_all()


@dataclass(frozen=True)
class Change:
    """What ended a wait: ``kind`` is ``change`` (``version`` is the board's new
    version), ``boards`` (``version`` is the player's new mark), ``replaced``
    (another tab took the seat) or ``resync``."""

    kind: str
    version: int | None = None


def wait(board_id: int, known: int, timeout: float, seat: str | None = None,
         tab: str | None = None, player: int | None = None, mark: int = 0) -> Change | None:
    """Block until board ``board_id`` is at a version above ``known``, another tab
    takes ``seat`` from ``tab``, the mark of ``player`` (when given) rises above
    ``mark``, or the streams are reset; None after ``timeout`` seconds without any
    of these. (A version this process heard of that is not above ``known`` is old
    news: the page read a newer one from the database.)"""
    with _changed:
        resets = _resets

        def change() -> Change | None:
            if seat is not None and _holders.get(seat, tab) != tab:
                return Change("replaced")
            latest = _latest.get(board_id, known)
            if latest > known:
                return Change("change", latest)
            if player is not None and (now := _mark(player)) > mark:
                return Change("boards", now)
            if _resets != resets:
                return Change("resync")
            return None

        return _changed.wait_for(change, timeout)


def wait_for_change(board_id: int, known: int, timeout: float) -> int | None:
    """Block until board ``board_id`` is at a version above ``known``, or the timeout
    passes (or the streams are reset); returns the new version or None."""
    change = wait(board_id, known, timeout)
    return change.version if change is not None and change.kind == "change" else None


def clear() -> None:
    """Forget every version and seat heard so far (for a process that starts over on
    another database, as tests do)."""
    with _changed:
        _latest.clear()
        _holders.clear()
        _boards_of.clear()


def receive(channel: str, payload: str) -> None:
    """Apply one notice of another process, heard by PostgreSQL's LISTEN or in a
    SQLite datagram (``pbm_board``: ``{"101": 5}``, board -> version; ``pbm_players``:
    ``{"101": [3, 4]}``, board -> its players; ``pbm_seat``: ``{"seat": key, "tab":
    id}``); a malformed one is logged and dropped."""
    try:
        data = json.loads(payload)
        if channel == CHANNEL:
            publish({int(k): int(v) for k, v in data.items()})
        elif channel == PLAYERS_CHANNEL:
            publish({}, {int(k): (int(v[0]), int(v[1])) for k, v in data.items()})
        elif channel == SEAT_CHANNEL:
            take_seat(str(data["seat"]), str(data["tab"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        log.warning("dropped a malformed %s notice: %.200r", channel, payload)


# -- the listeners, one thread per process: PostgreSQL's here, SQLite's below ----

_listener: "Listener | None" = None
_sqlite_listener: sqlite_notify.Listener | None = None
_listener_lock = threading.Lock()


class Listener(threading.Thread):
    """LISTENs on one autocommit psycopg connection and feeds every notice to
    ``receive``; reconnects after a failure (then resets the streams, since
    notices sent meanwhile are lost)."""

    def __init__(self, conninfo: str):
        super().__init__(name="pbm-listen", daemon=True)
        self.conninfo = conninfo
        self.listening = threading.Event()
        self.stopping = threading.Event()

    def run(self) -> None:
        import psycopg

        delay, failed = 0.5, False
        while not self.stopping.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    conn.execute(f"LISTEN {PLAYERS_CHANNEL}")
                    conn.execute(f"LISTEN {SEAT_CHANNEL}")
                    self.listening.set()
                    if failed:
                        reset_streams()
                    delay, failed = 0.5, False
                    while not self.stopping.is_set():
                        for note in conn.notifies(timeout=1.0):
                            receive(note.channel, note.payload)
            except psycopg.Error as error:
                self.listening.clear()
                failed = True
                log.warning("live updates: lost the database listener (%s); retrying in %g s",
                            error.__class__.__name__, delay)
                self.stopping.wait(delay)
                delay = min(delay * 2, 10.0)


def conninfo_of(database_url: str) -> str:
    """The libpq connection string of a SQLAlchemy PostgreSQL URL."""
    from sqlalchemy.engine import make_url

    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


def start_listener(database_url: str) -> Listener:
    """Start this process's listener once (later calls return the running one)."""
    global _listener
    with _listener_lock:
        if _listener is None or not _listener.is_alive():
            _listener = Listener(conninfo_of(database_url))
            _listener.start()
        return _listener


def stop_listener() -> None:
    """Stop this process's listeners, if any run (tests; the threads are daemons)."""
    global _listener, _sqlite_listener
    with _listener_lock:
        for running in (_listener, _sqlite_listener):
            if running is not None:
                running.stopping.set()
                running.join(timeout=5)
        _listener = _sqlite_listener = None


# -- SQLite: the same notices between the processes of one database file -----------


def live_directory(engine) -> Path | None:
    """Where the processes of the engine's SQLite file exchange live notices; None for
    an in-memory database (one process) and PostgreSQL (NOTIFY)."""
    return beside_database(engine, LIVE_SUFFIX)


def start_sqlite_listener(directory: Path) -> sqlite_notify.Listener:
    """Start this process's listener in ``directory`` once (later calls return the
    running one; one left listening for another database is stopped)."""
    global _sqlite_listener
    with _listener_lock:
        running = _sqlite_listener
        if running is not None and running.is_alive() and running.directory == directory:
            return running
        if running is not None:
            running.stopping.set()
        _sqlite_listener = sqlite_notify.Listener(directory, receive, reset_streams)
        _sqlite_listener.start()
        return _sqlite_listener


def _send_on_sqlite(engine, make_notices: Callable[[], list[tuple[str, str]]]) -> None:
    """Send the notices ``make_notices`` makes to the other processes listening on the
    engine's SQLite file; made only when one listens (most commits have no page to tell)."""
    directory = live_directory(engine)
    if directory is not None:
        own = _sqlite_listener.socket_name if _sqlite_listener is not None else None
        if names := sqlite_notify.listeners(directory, own):
            sqlite_notify.send_to(directory, names, make_notices())


def tell_other_processes(engine, boards: dict[int, int], seated: dict[int, tuple[int, int]]) -> None:
    """After a commit on a SQLite file, send its notices to the file's other processes
    (this one published them already; on PostgreSQL the transaction's NOTIFY did it).
    Never blocks and never raises for a listener that cannot take them."""
    if boards:
        _send_on_sqlite(engine, lambda: notices(boards, seated))


def announce_seat(engine, seat: str, tab: str) -> None:
    """``tab`` takes ``seat`` here and in every other web process of the database."""
    take_seat(seat, tab)
    payload = json.dumps({"seat": seat, "tab": tab})
    if engine.dialect.name == "postgresql":
        from sqlalchemy import text

        with engine.connect() as conn:
            conn.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": SEAT_CHANNEL, "payload": payload})
            conn.commit()
    else:
        _send_on_sqlite(engine, lambda: [(SEAT_CHANNEL, payload)])
