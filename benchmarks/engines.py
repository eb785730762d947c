"""Engine throughput, printed as figures (run by ``make bench``).

* Go: long 19x19 games (seeded random playouts, no own-eye filling) are
  replayed through ``pbm.games.go``: parse + apply per move, superko
  included. The same records are replayed through GNU Go over GTP
  (``play`` per move) when /usr/games/gnugo exists; the ratio is printed.
  Per-move cost in the first and the last 100 moves shows whether it grows
  with the length of the game.
* Great Kingdom: random 9x9 games, apply per move.
* Dragons: random 50-tile games; one move = placement, auto-move cascade and
  loop check. Each move is timed 5 times and the fastest run kept (so a
  garbage-collector pause does not count as the engine's time).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm.games.dragons import DRAGONS  # noqa: E402
from pbm.games.go import BLACK, GO, WHITE, neighbours  # noqa: E402
from pbm.games.greatkingdom import GREAT_KINGDOM  # noqa: E402
from tests.gtp import GnuGo, gnugo_available  # noqa: E402


def long_go_game(size: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    state = GO.initial_state({"size": size})
    moves: list[str] = []
    while state.phase == "play":
        own = BLACK if state.turn == 0 else WHITE
        candidates = [m for m in GO.legal_moves(state) if m != "pass" and not all(
            state.board[n] == own for n in neighbours(size)[m[1] * size + m[0]])]
        move = rng.choice(candidates) if candidates else "pass"
        moves.append(GO.format_move(move))
        state = GO.apply(state, state.turn, move)
    return moves


def replay_pbm(size: int, record: list[str]) -> tuple[float, list[float]]:
    state = GO.initial_state({"size": size})
    per_move = []
    start = time.perf_counter()
    for text in record:
        t = time.perf_counter()
        state = GO.apply(state, state.turn, GO.parse_move(text, state))
        per_move.append(time.perf_counter() - t)
    return time.perf_counter() - start, per_move


def replay_gnugo(engine: GnuGo, record: list[str]) -> float:
    engine.send("clear_board")
    start = time.perf_counter()
    for number, text in enumerate(record):
        engine.send(f"play {'black' if number % 2 == 0 else 'white'} {text}")
    return time.perf_counter() - start


def main() -> None:
    size, games = 19, 5
    records = [long_go_game(size, seed) for seed in range(games)]
    moves = sum(len(r) for r in records)
    ours, first, last = 0.0, [], []
    for record in records:
        seconds, per_move = replay_pbm(size, record)
        ours += seconds
        first += per_move[:100]
        last += per_move[-100:]
    print(f"Go engine, {games} random 19x19 games, {moves} moves (mean {moves // games} per game):")
    print(f"  pbm.games.go    {moves / ours:>10,.0f} moves/s   "
          f"first 100 moves {1e6 * sum(first) / len(first):.0f} us/move, "
          f"last 100 {1e6 * sum(last) / len(last):.0f} us/move")
    if gnugo_available():
        engine = GnuGo(size)
        try:
            theirs = sum(replay_gnugo(engine, record) for record in records)
        finally:
            engine.close()
        print(f"  GNU Go over GTP {moves / theirs:>10,.0f} moves/s   "
              f"pbm/GNU Go speed ratio {theirs / ours:.2f}")
    else:
        print("  GNU Go over GTP (skipped: /usr/games/gnugo not installed)")

    rng = random.Random(7)
    applied, seconds = 0, 0.0
    for _ in range(20):
        state = GREAT_KINGDOM.initial_state({"size": 9})
        while GREAT_KINGDOM.outcome(state) is None:
            move = rng.choice(GREAT_KINGDOM.legal_moves(state))
            t = time.perf_counter()
            state = GREAT_KINGDOM.apply(state, state.turn, move)
            seconds += time.perf_counter() - t
            applied += 1
    print(f"Great Kingdom engine, 20 random 9x9 games: {applied / seconds:,.0f} moves/s "
          f"({1e6 * seconds / applied:.0f} us/move)")

    cases = []
    for seed in range(40):
        rng = random.Random(seed)
        state = DRAGONS.initial_state({"num_tiles": 50})
        while state.outcome is None:
            move = rng.choice(DRAGONS.legal_moves(state))
            cases.append((state, move))
            state = DRAGONS.apply(state, state.turn, move)
    timings = []
    for state, move in cases:
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            DRAGONS.apply(state, state.turn, move)
            runs.append(time.perf_counter() - t)
        timings.append((min(runs), len(state.tiles)))
    every = sorted(t for t, _ in timings)
    late = sorted(t for t, tiles in timings if tiles >= 35)
    print(f"Dragons engine, 40 random 50-tile games, {len(every)} moves (placement + auto moves + loop check):")
    print(f"  p50 {1e6 * every[len(every) // 2]:.0f} us, p99 {1e6 * every[int(len(every) * 0.99)]:.0f} us, "
          f"max {1e6 * every[-1]:.0f} us; with 35+ tiles on the board p50 {1e6 * late[len(late) // 2]:.0f} us")


if __name__ == "__main__":
    main()
