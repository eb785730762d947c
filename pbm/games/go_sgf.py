"""Go game records as SGF (FF[4], via sgfmill), beside the rules in ``go``."""

from __future__ import annotations

from sgfmill import sgf

from .base import Outcome
from .go import PASS


def game_record(go, options: dict, log, players: tuple[str, str], outcome: Outcome | None,
            date: str) -> tuple[str, str, bytes]:
    """The game as SGF (FF[4]): every stone and pass of ``log`` ((seat, kind, text)
    entries), with size, komi, rules, players, date and result."""
    size = options.get("size", 9)
    record = sgf.Sgf_game(size=size)
    root = record.get_root()
    root.set("KM", options.get("komi", 7.5))
    root.set("RU", "Chinese")  # area scoring
    root.set("PB", players[0])
    root.set("PW", players[1])
    root.set("DT", date)
    if outcome is not None:
        root.set("RE", sgf_result(outcome))
    state = go.initial_state(options)
    for seat, kind, text in log:
        if kind != "move":
            continue
        move = go.parse_move(text, state)
        if move == PASS or (isinstance(move, tuple) and isinstance(move[0], int)):
            node = record.extend_main_sequence()
            node.set_move("bw"[seat], None if move == PASS else (move[1], move[0]))
    return "game.sgf", "application/x-go-sgf", record.serialise()


def sgf_result(outcome: Outcome) -> str:
    """SGF's RE value: W+2.5, B+R (resignation), W+T (time), 0 (draw), Void (no result)."""
    if outcome.winner is None:
        return "0" if outcome.kind in ("score", "agreement") else "Void"
    colour = "BW"[outcome.winner]
    if outcome.kind == "score" and outcome.margin is not None:
        return f"{colour}+{outcome.margin:g}"
    return colour + {"resignation": "+R", "time": "+T"}.get(outcome.kind, "+")
