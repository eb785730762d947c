"""Go with area scoring, positional superko and scoring by mail.

Rules as ``shared/rules.md`` settles them (seed 003): 9x9 (default), 13x13
or 19x19, Black first, komi 7.5, suicide illegal, positional superko over
the whole game (passes never illegal), two passes open scoring where either
player marks dead groups (``mark D4``), confirms (``done``) or resumes play
(``resume``); both confirming the same marking ends the game.

Speed: a move costs work in proportion to the groups it touches, never to
the length of the game. Positions are identified by Zobrist hashes; every
state shares one append-only table of the hashes seen along its line of
play and only looks at the entries older than itself, so applying a move is
O(1) in the history (a branch from an older state copies once).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .go_help import HELP, HELP_DE
from .base import (
    Consequences,
    Declared,
    GameInfo,
    GameText,
    IllegalMoveError,
    InvalidMoveError,
    OptionSpec,
    Outcome,
    register,
)
from .go_board import area_owners, area_score, group_and_liberties, has_liberty, star_points
from .go_positions import BLACK, EMPTY, WHITE, PositionHistory, zobrist
from .grid import board_point, grid_neighbours as neighbours, parse_point, point_name, square_diagram
from .said import as_typed

SIZES = (9, 13, 19)
PASS, DONE, RESUME = "pass", "done", "resume"
PLAY, SCORING, OVER = "play", "scoring", "over"
STONE = {EMPTY: ".", BLACK: "X", WHITE: "O"}
AREA = {BLACK: "b", WHITE: "w"}  # an empty point of that colour's area, on diagrams from the scoring on


# What a point holds, as the keyboard cursor says it: (colour, marked dead) -> text
CONTENTS = {(BLACK, False): GameText("a black stone"), (WHITE, False): GameText("a white stone"),
            (BLACK, True): GameText("a black stone, marked dead"), (WHITE, True): GameText("a white stone, marked dead")}


@dataclass(frozen=True)
class GoState:
    size: int
    komi: float
    board: tuple[int, ...]
    turn: int  # 0 Black, 1 White (in play)
    passes: int
    captures: tuple[int, int]  # stones captured by Black, by White
    last: int | None  # point of the last stone played
    hash: int
    ply: int  # positions so far (index of this position in the history)
    phase: str = PLAY
    dead: frozenset[int] = frozenset()
    confirmed: frozenset[int] = frozenset()
    last_passer: int | None = None
    outcome: Outcome | None = None
    history: PositionHistory = field(default=None, compare=False, repr=False)

    def __eq__(self, other):
        if not isinstance(other, GoState):
            return NotImplemented
        mine = {k: v for k, v in self.__dict__.items() if k != "history"}
        theirs = {k: v for k, v in other.__dict__.items() if k != "history"}
        return mine == theirs and self._seen() == other._seen()

    def _seen(self) -> dict[int, int]:
        return {h: p for h, p in self.history.first_seen.items() if p <= self.ply}


def _colour(side: int) -> int:
    return BLACK if side == 0 else WHITE


class Go(Declared):
    info = GameInfo(
        name="go", title="Go", sides=("Black", "White"),
        options=(OptionSpec("size", "choice", 9, "board size", choices=SIZES),
                 OptionSpec("komi", "half", 7.5, "points White receives", low=-100, high=100)),
        passing=True, words=(DONE, RESUME), record_format="sgf")

    def initial_state(self, options: dict) -> GoState:
        options = self.with_defaults(options)
        size = options["size"]
        return GoState(size, options["komi"], (EMPTY,) * (size * size), 0, 0, (0, 0), None,
                       0, 0, history=PositionHistory.start())

    # -- notation ----------------------------------------------------------

    def parse_move(self, text: str, state: GoState):
        written = text.split()  # quoted as written in errors
        words = [word.lower() for word in written]
        if not words:
            raise InvalidMoveError("The move is empty; send a point like D4, or pass.")
        if words == ["pass"] or words == ["p"]:
            return PASS
        if words == ["done"]:
            return DONE
        if words == ["resume"]:
            return RESUME
        if words[0] == "mark":
            if len(words) != 2:
                raise InvalidMoveError("Write mark and one point of the group, like: mark D4.")
            return ("mark", parse_point(written[1], state.size))
        if len(words) > 1:
            raise InvalidMoveError("\"%(text)s\" is not a Go move; send a point like D4, pass, or during scoring "
                                   "mark D4, done or resume.", text=as_typed(text.strip()))
        try:
            return parse_point(written[0], state.size)
        except InvalidMoveError as error:
            raise InvalidMoveError("%(error)s A Go move is a point like D4, or pass.", error=error) from None

    def format_move(self, move) -> str:
        if isinstance(move, str):
            return move
        if move[0] == "mark":
            return "mark " + point_name(*move[1])
        return point_name(*move)

    # -- turn --------------------------------------------------------------

    def to_move(self, state: GoState) -> int | None:
        return state.turn if state.phase == PLAY else None

    def awaited(self, state: GoState) -> int | None:
        """In the scoring, once one side has confirmed the marking, the other."""
        if state.phase == SCORING and len(state.confirmed) == 1:
            return 1 - next(iter(state.confirmed))
        return self.to_move(state)

    def actors(self, state: GoState) -> tuple[int, ...]:
        if state.phase == PLAY:
            return (state.turn,)
        return (0, 1) if state.phase == SCORING else ()

    def outcome(self, state: GoState) -> Outcome | None:
        return state.outcome

    # -- rules -------------------------------------------------------------

    def apply(self, state: GoState, side: int, move) -> GoState:
        if state.phase == OVER:
            raise IllegalMoveError("This game is over; no more moves can be played.")
        if state.phase == SCORING:
            return self._scoring(state, side, move)
        if move in (DONE, RESUME) or (isinstance(move, tuple) and move[:1] == ("mark",)):
            raise IllegalMoveError("%(move)s belongs to the scoring, which opens after two passes in a row.",
                                   move=self.format_move(move))
        if side != state.turn:
            raise IllegalMoveError("It is %(turn)s's turn, not %(side)s's.", turn=self.sides[state.turn],
                                   side=self.sides[side])
        if move == PASS:
            if state.passes + 1 >= 2:
                return replace(state, passes=2, turn=1 - side, last=None, phase=SCORING,
                               last_passer=side)
            return replace(state, passes=state.passes + 1, turn=1 - side, last=None, last_passer=side)
        board, point_hash, captured = self._place(state, side, move)
        history = state.history.extended(point_hash, state.ply + 1)
        caps = list(state.captures)
        caps[side] += captured
        return replace(state, board=board, turn=1 - side, passes=0, captures=tuple(caps),
                       last=move[1] * state.size + move[0], hash=point_hash, ply=state.ply + 1,
                       history=history)

    def _place(self, state: GoState, side: int, move) -> tuple[tuple[int, ...], int, int]:
        """The board and hash after a stone, or IllegalMoveError (occupied, suicide, superko)."""
        x, y = board_point(move, state.size)
        size = state.size
        index = y * size + x
        name = point_name(x, y)
        if state.board[index] != EMPTY:
            raise IllegalMoveError("%(point)s is already occupied; choose an empty point.", point=name)
        colour, enemy = _colour(side), _colour(1 - side)
        keys = zobrist(size)
        board = list(state.board)
        board[index] = colour
        position = state.hash ^ keys[index][colour]
        captured = 0
        for n in neighbours(size)[index]:
            if board[n] == enemy and not has_liberty(board, n, size):
                group, _ = group_and_liberties(board, n, size)
                for i in group:
                    board[i] = EMPTY
                    position ^= keys[i][enemy]
                captured += len(group)
        if not captured and not has_liberty(board, index, size):
            raise IllegalMoveError("%(point)s would be suicide: your stones there would have no liberty.",
                                   point=name)
        if state.history.seen_before(position, state.ply):
            raise IllegalMoveError("%(point)s would repeat an earlier position (positional superko); "
                                   "play elsewhere first.", point=name)
        return tuple(board), position, captured

    def _scoring(self, state: GoState, side: int, move) -> GoState:
        if move == RESUME:
            mover = 1 - state.last_passer if state.last_passer is not None else 0
            return replace(state, phase=PLAY, dead=frozenset(), confirmed=frozenset(), passes=0,
                           turn=mover)
        if move == DONE:
            confirmed = state.confirmed | {side}
            if len(confirmed) < 2:
                return replace(state, confirmed=confirmed)
            return replace(state, confirmed=confirmed, phase=OVER, outcome=self._result(state))
        if isinstance(move, tuple) and len(move) == 2 and move[0] == "mark":
            x, y = board_point(move[1], state.size)
            index = y * state.size + x
            if state.board[index] == EMPTY:
                raise IllegalMoveError("%(point)s is empty; mark a point with a stone of the group you think is "
                                       "dead (or alive again).", point=point_name(x, y))
            group, _ = group_and_liberties(state.board, index, state.size)
            dead = state.dead - group if index in state.dead else state.dead | group
            return replace(state, dead=frozenset(dead), confirmed=frozenset())
        raise IllegalMoveError("The game is in scoring: mark dead groups with 'mark D4', confirm with "
                               "'done', or 'resume' to play on.")

    def score(self, state: GoState) -> tuple[int, float]:
        black, white = area_score(state.board, state.size, state.dead)
        return black, white + state.komi

    def _result(self, state: GoState) -> Outcome:
        black, white = self.score(state)
        margin = abs(black - white)
        if black == white:
            return Outcome(None, "area scoring: equal", f"Black {black:g}, White {white:g}, draw", "score", 0)
        winner = 0 if black > white else 1
        return Outcome(winner, "area scoring", f"{'BW'[winner]}+{margin:g} (Black {black:g}, White {white:g})",
                       "score", margin)

    def legal_moves(self, state: GoState) -> list:
        if state.phase == OVER:
            return []
        if state.phase == SCORING:
            seen, marks = set(), []
            for i, v in enumerate(state.board):
                if v != EMPTY and i not in seen:
                    group, _ = group_and_liberties(state.board, i, state.size)
                    seen |= group
                    marks.append(("mark", (i % state.size, i // state.size)))
            return [DONE, RESUME, *marks]
        moves: list = [PASS]
        for i, v in enumerate(state.board):
            if v == EMPTY:
                point = (i % state.size, i // state.size)
                try:
                    self._place(state, state.turn, point)
                except IllegalMoveError:
                    continue
                moves.append(point)
        return moves

    # -- presentation ------------------------------------------------------

    def diagram(self, state: GoState, legal: bool = False, over: bool = False) -> str:
        size, stars = state.size, star_points(state.size)
        # From the scoring on, every empty point shows whose area it is (not once the game
        # ended otherwise: a count nobody confirmed is no result).
        counted = state.phase == OVER or state.phase == SCORING and not over
        owners = area_owners(state.board, size, state.dead) if counted else {}

        def cell(x: int, y: int) -> str:
            i = y * size + x
            v = state.board[i]
            if v == EMPTY:
                return AREA[owners[i]] if i in owners else "+" if i in stars else "."
            return STONE[v].lower() if i in state.dead else STONE[v]

        last = (state.last % size, state.last // size) if state.last is not None else None
        last_stone = STONE.get(state.board[last[1] * size + last[0]]) if last else None
        legend = [GameText("X Black  O White")]
        if last_stone in ("X", "O"):
            legend.append(GameText("(%(stone)s) the last move", stone=last_stone))
        if state.dead:
            legend.append(GameText("x/o dead"))
        if counted:
            legend.append(GameText("b/w Black's/White's area"))
        captures = GameText("Captured so far: by Black %(black)s, by White %(white)s", black=state.captures[0],
                            white=state.captures[1])
        return GameText.join((square_diagram(size, cell, last), GameText.join(legend, "  "), captures), "\n")

    def point_contents(self, state: GoState) -> dict[str, str]:
        return {point_name(i % state.size, i // state.size): CONTENTS[v, i in state.dead]
                for i, v in enumerate(state.board) if v != EMPTY}

    def status(self, state: GoState, over: bool = False) -> str:
        komi = GameText("Komi %(komi)s.", komi=float(state.komi))
        if state.phase == PLAY or (over and state.phase != OVER):  # a count nobody confirmed is no result
            return komi
        black, white = self.score(state)
        count = GameText("Count: Black %(black)s, White %(white)s.", black=float(black), white=float(white))
        if state.phase == OVER:
            return GameText.join((komi, count))
        done = GameText.join([GameText(self.sides[s]) for s in sorted(state.confirmed)], ", ") \
            or GameText("nobody yet")
        scoring = GameText("Scoring: mark dead groups (mark D4), then done; resume to play on.")
        return GameText.join((scoring, count, GameText("Confirmed by: %(sides)s.", sides=done)))

    def consequences(self, before: GoState, after: GoState) -> Consequences:
        return Consequences(captures=sum(after.captures) - sum(before.captures))

    def help_text(self, language: str = "en") -> str:
        example = self.initial_state({"size": 9})
        for side, point in ((0, (2, 2)), (1, (6, 6)), (0, (6, 2)), (1, (2, 6)), (0, (4, 4))):
            example = self.apply(example, side, point)
        return GameText.fill(HELP_DE if language == "de" else HELP, diagram=self.diagram(example))

    # -- game record -------------------------------------------------------

    def game_record(self, options: dict, log, players: tuple[str, str], outcome: Outcome | None,
                    date: str) -> tuple[str, str, bytes]:
        """The game as SGF (see ``go_sgf``)."""
        from .go_sgf import game_record

        return game_record(self, options, log, players, outcome, date)

    # -- storage -----------------------------------------------------------

    def to_json(self, state: GoState) -> dict:
        return {
            "size": state.size, "komi": state.komi, "board": "".join(map(str, state.board)),
            "turn": state.turn, "passes": state.passes, "captures": list(state.captures),
            "last": state.last, "hash": format(state.hash, "016x"), "ply": state.ply,
            "phase": state.phase, "dead": sorted(state.dead), "confirmed": sorted(state.confirmed),
            "last_passer": state.last_passer,
            "outcome": state.outcome.to_json() if state.outcome else None,
            "history": state.history.stored_up_to(state.ply),
        }

    def from_json(self, data: dict) -> GoState:
        history = PositionHistory.from_stored(data["history"], data["ply"] + 1)
        return GoState(
            data["size"], data["komi"], tuple(int(c) for c in data["board"]), data["turn"], data["passes"],
            tuple(data["captures"]), data["last"], int(data["hash"], 16), data["ply"], data["phase"],
            frozenset(data["dead"]), frozenset(data["confirmed"]), data["last_passer"],
            Outcome.from_json(data["outcome"]), history)


GO = register(Go())
