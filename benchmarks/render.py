"""Board pictures: bytes and drawing time of the largest boards of every game,
positions from seeded random games; with ``--png DIR`` also screenshots of
each picture taken by Debian's headless ``chromium``, to look at.

A figure, not a pass/fail test: ``.venv/bin/python benchmarks/render.py``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbm.games import get_game  # noqa: E402
from pbm.render import board_svg, dragons_orientation_choices  # noqa: E402

# (game, options, moves to play): big boards, played far into the game
CASES = [
    ("go", {"size": "19"}, 400),
    ("greatkingdom", {"size": "19"}, 80),
    ("twodragons", {"size": "19"}, 330),
    ("twotigers", {}, 40),
    ("dragons", {"num_tiles": "200", "tantrix": "true"}, 200),
]
NOT_PLAYED = ("pass", "done", "resume")


def position(name: str, options: dict, moves: int, seed: int = 1):
    """The state after up to ``moves`` random moves that neither pass nor score."""
    game = get_game(name)
    rng = random.Random(seed)
    state, last, played = game.initial_state(game.parse_options(options)), None, 0
    while game.outcome(state) is None and played < moves:
        choices = [m for m in game.legal_moves(state)
                   if game.format_move(m) not in NOT_PLAYED and not game.format_move(m).startswith("mark")]
        if not choices:
            break
        move = rng.choice(choices)
        state = game.apply(state, rng.choice(game.actors(state)), move)
        last, played = game.format_move(move), played + 1
    return state, played, last


def timed(draw, repeat: int = 20) -> tuple[str, float]:
    start = time.perf_counter()
    for _ in range(repeat):
        svg = draw()
    return svg, (time.perf_counter() - start) / repeat


def screenshot(svgs: list[str], path: Path, width: int) -> None:
    html = "<!doctype html><body style='margin:0'>" + "".join(
        f"<div style='width:{width}px;display:inline-block;vertical-align:top'>{s}</div>" for s in svgs)
    with tempfile.NamedTemporaryFile("w", suffix=".html") as page:
        page.write(html)
        page.flush()
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={path}", f"--window-size={max(width, 720)},{int(width * 1.3)}",
                        f"file://{page.name}"], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--png", type=Path, help="also write a screenshot of each picture here")
    args = parser.parse_args()
    print(f"{'game':<13} {'options':<40} {'moves':>5} {'plain':>9} {'play page':>10} {'time':>8}")
    for name, options, moves in CASES:
        state, played, last = position(name, options, moves)
        plain = board_svg(name, state, move_number=played, last_move=last)
        svg, seconds = timed(lambda: board_svg(name, state, move_number=played, last_move=last,
                                               interactive=True))
        print(f"{name:<13} {str(options):<40} {played:>5} {len(plain.encode()):>8}B {len(svg.encode()):>9}B "
              f"{seconds * 1000:>6.2f}ms")
        if args.png:
            args.png.mkdir(parents=True, exist_ok=True)
            screenshot([svg], args.png / f"{name}.png", 700)
    if args.png:
        state, _, _ = position("dragons", {}, 10)
        cell = get_game("dragons").playable(state)[0][0]
        previews = [p for _, p in dragons_orientation_choices(state, cell)]
        screenshot(previews, args.png / "dragons-orientations.png", 140)


if __name__ == "__main__":
    main()
