"""The move log, replayed: which entries stand (an ``undo N`` takes entries back),
what a move did besides itself, how a log entry that is not a move ends a game, and
``replay``, which rebuilds a position from the log (the truth) from the nearest
position it remembers. Pure of the database: it reads ``LogEntry`` values."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import NamedTuple, Sequence

from .games import Consequences, Game, Outcome
from .i18n import N_
from .models import MoveRecord

class LogEntry(NamedTuple):
    """What the pure replay needs of one move record (a tuple: made for every
    entry of a log on each read, so it must be cheap to make)."""

    kind: str
    seat: int | None
    text: str


# An outcome's reason is stored in English (the board's data); ``reason_text`` shows
# it in the reader's language.
RESIGNED = N_("%(side)s resigned")
OUT_OF_TIME = N_("%(side)s ran out of time")
DECLINED = N_("%(side)s declined the game before moving")


OWN_MOVES = ("move", "queued")  # log kinds that are moves a player chose (queued: played when its turn came)
MOVES = (*OWN_MOVES, "auto")  # log kinds that are moves, the ones the server played (forced) included



def ending(game: Game, kind: str, seat: int | None) -> Outcome:
    """How a log entry that is not a move ends the game (its reason in English)."""
    if kind == "resign":
        return Outcome(1 - seat, RESIGNED % {"side": game.sides[seat]}, kind="resignation")
    if kind == "forfeit":
        return Outcome(1 - seat, OUT_OF_TIME % {"side": game.sides[seat]}, kind="time")
    if kind == "decline":
        return Outcome(None, DECLINED % {"side": game.sides[seat]}, kind="cancellation")
    if kind == "cancel":
        return Outcome(None, N_("the game expired before both players had moved"), kind="cancellation")
    if kind == "expire":
        return Outcome(None, N_("it expired while both players could act (scoring was not finished)"),
                       kind="expiry")
    if kind == "draw":
        reason = N_("the players agreed") if seat is not None else N_("a draw offer was still open at expiry")
        return Outcome(None, reason, kind="agreement")
    raise ValueError(f"unknown log entry kind {kind!r}")


def undo_target(text: str) -> int:
    """The first log number an ``undo N`` entry takes back."""
    return int(text.split()[1])


def in_force(log: Sequence[LogEntry]) -> list[tuple[int, LogEntry]]:
    """The (number, entry) pairs of the log that stand: every ``undo N`` entry
    removes, with itself, the entries from number N on that stood before it."""
    standing: list[tuple[int, LogEntry]] = []
    for number, entry in enumerate(log, 1):
        if entry.kind == "undo":
            first = undo_target(entry.text)
            standing = [(n, e) for n, e in standing if n < first]
        else:
            standing.append((number, entry))
    return standing


def taken_back(records: Sequence[MoveRecord]) -> set[int]:
    """The numbers of the given records that an ``undo`` among them took back."""
    gone: set[int] = set()
    for r in records:
        if r.kind == "undo":
            gone.update(range(undo_target(r.text), r.number))
    return gone


CHECKPOINT_EVERY = 25  # log entries between the positions ``replay`` remembers
MAX_CHECKPOINTS = 1000  # remembered positions per process (a 19x19 Go position is ~10 kB)
MAX_LATEST = 1000  # the last position each replay reached, remembered apart from the checkpoints
MAX_CONSEQUENCES = 20_000  # what a log entry did (``move_consequences``), a few dozen bytes each
_consequences: OrderedDict[bytes, Consequences | None] = OrderedDict()
_checkpoints: OrderedDict[bytes, tuple[dict, Outcome | None]] = OrderedDict()
_latest: OrderedDict[bytes, tuple[dict, Outcome | None]] = OrderedDict()
_checkpoints_lock = threading.Lock()  # guards all three


def move_consequences(game: Game, options: dict, log: Sequence[LogEntry], first: int = 0,
                      known: dict[int, Consequences] | None = None) -> list[Consequences | None]:
    """What each log entry from index ``first`` on did besides itself when it was
    played (captures, automatic moves), taken back since or not; None for an entry
    that is not a move (and for the entries before ``first``, not worked out).
    ``known``: what some entries did, by index, as the unit that just played them
    found it (``game.consequences`` of the positions before and after).

    What an entry did is remembered in this process, keyed by a digest of the log
    up to it, so a board mail, which lists the same moves as the one before and
    one more, works out only the new ones: the move just played is known, others
    from the position before them, which ``replay`` finds from a remembered one; an
    ``undo`` entry returns to its own replay."""
    keys = _prefix_keys(game, options, log, range(first + 1, len(log) + 1))  # what entry i did: keys[i + 1]
    done: list[Consequences | None] = [None] * first
    with _checkpoints_lock:
        for count in range(first + 1, len(log) + 1):
            if keys[count] not in _consequences:
                break
            _consequences.move_to_end(keys[count])
            done.append(_consequences[keys[count]])
    if known and all(index in known for index in range(len(done), len(log))):
        for index in range(len(done), len(log)):
            done.append(known[index])
            _remember(_consequences, MAX_CONSEQUENCES, keys[index + 1], known[index])
    if len(done) == len(log):
        return done
    state = replay(game, options, log[:len(done)])[0]
    for index in range(len(done), len(log)):
        entry = log[index]
        if entry.kind in MOVES:
            before, state = state, game.apply(state, entry.seat, game.parse_move(entry.text, state))
            done.append(game.consequences(before, state))
        else:
            if entry.kind == "undo":
                state = replay(game, options, log[:index + 1])[0]
            done.append(None)
        _remember(_consequences, MAX_CONSEQUENCES, keys[index + 1], done[index])
    return done


def _prefix_keys(game: Game, options: dict, log: Sequence[LogEntry], counts) -> dict[int, bytes]:
    """For each of ``counts`` (from 1 to the log's length), a digest of the game, its
    options and the log's first ``count`` entries: a key no other log shares."""
    digest = hashlib.blake2b(json.dumps([game.name, options], sort_keys=True).encode(), digest_size=16)
    keys, hashed = {}, 0
    for count in sorted(counts):
        # Fields separated by control characters, which no move text holds.
        digest.update("".join([f"{e.kind}\x1f{e.seat}\x1f{e.text}\x1e" for e in log[hashed:count]]).encode())
        keys[count], hashed = digest.copy().digest(), count
    return keys


def replay(game: Game, options: dict, log: Sequence[LogEntry]):
    """The game state and outcome after the given log entries (those taken back
    by an ``undo`` entry left out).

    Positions are remembered in this process (least recently used first
    forgotten), keyed by a digest of the game, its options and every standing
    entry up to there: every ``CHECKPOINT_EVERY`` standing entries, and the last
    position of each replay apart from those. A replay starts from the longest
    remembered beginning of its log, so a long log costs at most
    ``CHECKPOINT_EVERY`` moves, never the whole game, and the board mail after a
    move, which replays one move further than the one before, costs one move; a
    log that differs anywhere has other keys. Positions are kept as the game's
    JSON, so each replay works on a state of its own."""
    log = [entry for _, entry in in_force(log)]
    # The keys of the positions after the checkpoints' counts and the last few counts.
    keys = _prefix_keys(game, options, log, {*range(CHECKPOINT_EVERY, len(log) + 1, CHECKPOINT_EVERY),
                                             *range(max(1, len(log) - CHECKPOINT_EVERY), len(log) + 1)})
    start, state, ended = 0, None, None
    with _checkpoints_lock:
        for count in sorted(keys, reverse=True):
            remembered = _latest if keys[count] in _latest else _checkpoints
            if keys[count] in remembered:
                remembered.move_to_end(keys[count])
                (data, ended), start = remembered[keys[count]], count
                state = game.from_json(data)
                break
    if state is None:
        state = game.initial_state(options)
    for count in range(start + 1, len(log) + 1):
        entry = log[count - 1]
        if entry.kind in MOVES:
            state = game.apply(state, entry.seat, game.parse_move(entry.text, state))
        else:
            ended = ending(game, entry.kind, entry.seat)
        if count % CHECKPOINT_EVERY == 0:
            _remember(_checkpoints, MAX_CHECKPOINTS, keys[count], (game.to_json(state), ended))
    if len(log) > start and len(log) % CHECKPOINT_EVERY:
        _remember(_latest, MAX_LATEST, keys[len(log)], (game.to_json(state), ended))
    return state, ended or game.outcome(state)


def _remember(remembered: OrderedDict, most: int, key: bytes, value) -> None:
    with _checkpoints_lock:
        remembered[key] = value
        if len(remembered) > most:
            remembered.popitem(last=False)


def log_entries(records: Sequence[MoveRecord]) -> list[LogEntry]:
    return [LogEntry(r.kind, r.seat, r.text) for r in records]
