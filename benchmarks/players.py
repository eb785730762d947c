"""The computer players' strength and speed: figures, not a pass/fail test.

For each game but Go, whole games of the search player (with the budget the
server uses, ``computer_move``'s defaults) against a uniformly random player,
half of them with the computer moving first; prints the computer's win rate
and the average and 95th-percentile time of its moves. The issue asks for a
win rate of at least 90% in every game. Then GNU Go at level 1: the time of
one ``genmove`` (process start, replay of the game so far, answer) along games
on 9x9 and 19x19 against a random player.

Run: ``.venv/bin/python benchmarks/players.py [--games 50] [--jobs 2]``. Games run
in ``--jobs`` processes at once (one per core keeps the move times honest).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm.games import get_game  # noqa: E402
from pbm.players import available, computer_move  # noqa: E402
from pbm.players.gnugo import DEFAULT_PATH, genmove  # noqa: E402

SEARCH_GAMES = ("greatkingdom", "twodragons", "twotigers", "dragons")
PLY_LIMIT = 1000  # a game this long counts as not won (Two Tigers can wander)


def search_game(job: tuple[str, int]) -> tuple[bool, list[float]]:
    """One game, the computer on seat ``number % 2``: (did it win, its move times)."""
    name, number = job
    game = get_game(name)
    computer, rng = number % 2, random.Random(number)
    state, times = game.initial_state(game.parse_options({})), []
    for ply in range(PLY_LIMIT):
        if game.outcome(state) is not None:
            break
        (side,) = game.actors(state)
        if side == computer:
            start = time.perf_counter()
            text = computer_move(name, state, side, seed=number * 100_003 + ply)
            times.append(time.perf_counter() - start)
            move = game.parse_move(text, state)
        else:
            move = rng.choice(game.legal_moves(state))
        state = game.apply(state, side, move)
    outcome = game.outcome(state)
    return outcome is not None and outcome.winner == computer, times


def gnugo_times(size: int, moves: int, seed: int) -> list[float]:
    """GNU Go level 1 as Black against random White stones: each genmove's time."""
    go = get_game("go")
    rng = random.Random(seed)
    state, log, times = go.initial_state(go.parse_options({"size": str(size)})), [], []
    while len(log) < moves and state.phase == "play":
        if state.turn == 0:
            start = time.perf_counter()
            text = genmove(DEFAULT_PATH, 1, size, state.komi, log, 0, timeout=30)
            times.append(time.perf_counter() - start)
            if text == "resign":
                break
        else:
            stones = [m for m in go.legal_moves(state) if m != "pass"]
            text = go.format_move(rng.choice(stones)) if stones else "pass"
        state = go.apply(state, state.turn, go.parse_move(text, state))
        log.append((1 - state.turn, text))
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="games per game (half on each seat)")
    parser.add_argument("--jobs", type=int, default=2, help="games played at once")
    parser.add_argument("--only", nargs="*", default=SEARCH_GAMES, help="the games to measure")
    args = parser.parse_args()
    print(f"Search player against a uniformly random player, {args.games} games each, {args.jobs} at once")
    print(f"{'game':<14}{'won':>10}{'moves':>8}{'avg s':>8}{'p95 s':>8}{'max s':>8}{'wall s':>8}")
    with Pool(args.jobs) as pool:
        for name in args.only:
            start = time.perf_counter()
            results = pool.map(search_game, [(name, n) for n in range(args.games)], chunksize=1)
            wins = sum(won for won, _ in results)
            times = [t for _, ts in results for t in ts]
            print(f"{name:<14}{wins:>4}/{args.games:<3}{wins / args.games:>4.0%}{len(times):>7}"
                  f"{statistics.mean(times):>8.3f}{p95(times):>8.3f}{max(times):>8.3f}"
                  f"{time.perf_counter() - start:>8.0f}", flush=True)
    if not available(DEFAULT_PATH):
        print(f"GNU Go: not installed at {DEFAULT_PATH}; skipped")
        return
    print("GNU Go level 1, one genmove (process, replay, answer) against random stones")
    for size, moves in ((9, 80), (19, 300)):
        times = [t for seed in range(3) for t in gnugo_times(size, moves, seed)]
        print(f"  {size}x{size}: {len(times)} genmoves, avg {statistics.mean(times):.3f} s, "
              f"p95 {p95(times):.3f} s, max {max(times):.3f} s", flush=True)


if __name__ == "__main__":
    main()
