"""2 Dragons: grow the two biggest dragons by placing pieces in sight of your own.

Rules as ``shared/rules.md`` settles them (seed 000): 18x18 points by
default (``-size=N``, 9 to 19), White first; each player's first piece goes
anywhere, every later one must be in sight of an own piece along one of
the 8 directions (no cutting diagonally between two opposing pieces), and
no piece may complete a 2x2 square of its colour. After one player passes
the other moves alone until passing too. Score: the pieces in a player's
``-dragons=N`` (2) biggest orthogonal groups; a tie goes to Black.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .base import (
    GameInfo,
    GameText,
    IllegalMoveError,
    OptionSpec,
    Outcome,
    register,
    TurnBased,
)
from .grid import board_point, flood, parse_point_or_pass, point_name, square_diagram

EMPTY, WHITE, BLACK = 0, 1, 2
# What a point holds, as the keyboard cursor says it
CONTENTS = {WHITE: GameText("a white piece"), BLACK: GameText("a black piece")}
PASS = "pass"
SYMBOL = {EMPTY: ".", WHITE: "O", BLACK: "X"}
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


@dataclass(frozen=True)
class TwoDragonsState:
    size: int
    dragons: int  # how many dragons count
    board: tuple[int, ...]
    turn: int  # 0 White, 1 Black
    passed: tuple[bool, bool]
    last: int | None
    outcome: Outcome | None = None


def _colour(side: int) -> int:
    return WHITE if side == 0 else BLACK


class Sight:
    """Why a point is or is not in sight of a player's pieces."""

    def __init__(self, seen: bool, cut: tuple[int, int] | None = None):
        self.seen, self.cut = seen, cut


def sight(board, size: int, x: int, y: int, colour: int) -> Sight:
    """Is (x, y) in sight of a piece of ``colour``? If not, the first cut pair that
    blocked a line that would have reached one, if any."""
    enemy = BLACK if colour == WHITE else WHITE
    cut = None
    for dx, dy in DIRECTIONS:
        cx, cy = x, y
        while True:
            nx, ny = cx + dx, cy + dy
            if not (0 <= nx < size and 0 <= ny < size):
                break
            blocked = dx and dy and board[cy * size + nx] == enemy and board[ny * size + cx] == enemy
            value = board[ny * size + nx]
            if blocked:
                if value == colour or value == EMPTY:
                    # a line that might still have reached an own piece is cut here
                    if cut is None and _reaches(board, size, nx, ny, dx, dy, colour):
                        cut = (cy * size + nx, ny * size + cx)
                break
            if value == colour:
                return Sight(True)
            if value != EMPTY:
                break
            cx, cy = nx, ny
    return Sight(False, cut)


def _reaches(board, size, x, y, dx, dy, colour) -> bool:
    """From (x, y) on, does the line meet an own piece first (ignoring further cuts)?"""
    while 0 <= x < size and 0 <= y < size:
        value = board[y * size + x]
        if value != EMPTY:
            return value == colour
        x, y = x + dx, y + dy
    return False


def blob(board, size: int, x: int, y: int, colour: int) -> tuple[int, int] | None:
    """The lower-left corner of a 2x2 square of ``colour`` that (x, y) would complete."""
    for cx in (x - 1, x):
        for cy in (y - 1, y):
            if 0 <= cx < size - 1 and 0 <= cy < size - 1:
                square = [(cx, cy), (cx + 1, cy), (cx, cy + 1), (cx + 1, cy + 1)]
                if all((px, py) == (x, y) or board[py * size + px] == colour for px, py in square):
                    return cx, cy
    return None


def dragon_sizes(board, size: int, colour: int) -> list[int]:
    """Sizes of ``colour``'s orthogonally connected groups, biggest first."""
    seen: set[int] = set()
    sizes = []
    for start, value in enumerate(board):
        if value == colour and start not in seen:
            group, _ = flood(board, start, size)
            seen |= group
            sizes.append(len(group))
    return sorted(sizes, reverse=True)


class TwoDragons(TurnBased):
    info = GameInfo(
        name="twodragons", title="2 Dragons", sides=("White", "Black"),
        options=(OptionSpec("size", "int", 18, "board size", low=9, high=19),
                 OptionSpec("dragons", "int", 2, "how many of each side's biggest dragons count",
                            low=1, high=10)),
        passing=True, forced_moves=True)

    def initial_state(self, options: dict) -> TwoDragonsState:
        options = self.with_defaults(options)
        size = options["size"]
        return TwoDragonsState(size, options["dragons"], (EMPTY,) * (size * size), 0,
                               (False, False), None)

    def parse_move(self, text: str, state: TwoDragonsState):
        return parse_point_or_pass(text, state.size, self.title, "K10" if state.size >= 10 else "D4")

    def format_move(self, move) -> str:
        return PASS if move == PASS else point_name(*move)

    def check(self, state: TwoDragonsState, side: int, x: int, y: int) -> None:
        """Raise IllegalMoveError naming the rule a piece on (x, y) would break."""
        size, colour = state.size, _colour(side)
        name = point_name(x, y)
        if state.board[y * size + x] != EMPTY:
            raise IllegalMoveError("%(point)s is already taken; choose an empty point.", point=name)
        if colour in state.board:
            seen = sight(state.board, size, x, y, colour)
            if not seen.seen:
                if seen.cut:
                    a, b = sorted(seen.cut)
                    enemy = self.sides[1 - side]
                    raise IllegalMoveError("%(point)s: the sight line cuts through two of %(side)s's pieces at "
                                           "%(pair)s.", point=name, side=enemy, pair="-".join(
                                               (point_name(a % size, a // size), point_name(b % size, b // size))))
                raise IllegalMoveError("%(point)s is not in sight of your pieces (along a row, column or diagonal "
                                       "with only empty points between).", point=name)
        square = blob(state.board, size, x, y, colour)
        if square:
            cx, cy = square
            raise IllegalMoveError("%(point)s would make a 2x2 blob at %(square)s.", point=name,
                                   square=point_name(cx, cy) + "-" + point_name(cx + 1, cy + 1))

    def legal_points(self, state: TwoDragonsState, side: int) -> list[tuple[int, int]]:
        return list(self._legal_points(state, side))

    def _legal_points(self, state: TwoDragonsState, side: int):
        for i, value in enumerate(state.board):
            if value == EMPTY:
                x, y = i % state.size, i // state.size
                try:
                    self.check(state, side, x, y)
                except IllegalMoveError:
                    continue
                yield x, y

    def only_move(self, state: TwoDragonsState):
        """Pass, when no stone can be placed (asked after every move: stops at the first point)."""
        if state.outcome or next(self._legal_points(state, state.turn), None) is not None:
            return None
        return PASS

    def apply(self, state: TwoDragonsState, side: int, move) -> TwoDragonsState:
        self.guard(state, side)
        if move == PASS:
            passed = tuple(p or s == side for s, p in enumerate(state.passed))
            if all(passed):
                return replace(state, passed=passed, last=None, outcome=self._score(state))
            return replace(state, passed=passed, turn=1 - side, last=None)
        x, y = board_point(move, state.size)
        try:
            self.check(state, side, x, y)
        except IllegalMoveError as error:
            if not self.legal_points(state, side):
                raise IllegalMoveError("%(error)s You have no legal point left and must pass.",
                                       error=error) from None
            raise
        board = list(state.board)
        index = y * state.size + x
        board[index] = _colour(side)
        # after the opponent has passed, the player keeps the turn
        turn = side if state.passed[1 - side] else 1 - side
        return replace(state, board=tuple(board), turn=turn, last=index)

    def scores(self, state: TwoDragonsState) -> tuple[int, int]:
        return tuple(sum(dragon_sizes(state.board, state.size, _colour(s))[:state.dragons]) for s in (0, 1))

    def _score(self, state: TwoDragonsState) -> Outcome:
        white, black = self.scores(state)
        winner = 0 if white > black else 1
        if state.dragons == 1:
            reason = GameText("the biggest dragon (a tie goes to Black)") if white == black \
                else GameText("the biggest dragon")
        elif white == black:
            reason = GameText("the %(count)s biggest dragons (a tie goes to Black)", count=state.dragons)
        else:
            reason = GameText("the %(count)s biggest dragons", count=state.dragons)
        return Outcome(winner, reason, f"White {white}, Black {black}", "score", abs(white - black))

    def legal_moves(self, state: TwoDragonsState) -> list:
        if state.outcome:
            return []
        return [PASS, *self.legal_points(state, state.turn)]

    def diagram(self, state: TwoDragonsState, legal: bool = False, over: bool = False) -> str:
        size = state.size
        hints = set(self.legal_points(state, state.turn)) if legal and not (state.outcome or over) else set()

        def cell(x: int, y: int) -> str:
            if (x, y) in hints:
                return "*"
            return SYMBOL[state.board[y * size + x]]

        last = (state.last % size, state.last // size) if state.last is not None else None
        legend = [GameText("O White  X Black")]
        if last:
            legend.append(GameText("(%(stone)s) the last move", stone=SYMBOL[state.board[state.last]]))
        if hints:
            legend.append(GameText("* where the player to move may play"))
        return GameText.join((square_diagram(size, cell, last), GameText.join(legend, "  ")), "\n")

    def point_contents(self, state: TwoDragonsState) -> dict[str, str]:
        return {point_name(i % state.size, i // state.size): CONTENTS[v]
                for i, v in enumerate(state.board) if v != EMPTY}

    def status(self, state: TwoDragonsState, over: bool = False) -> str:
        parts = []
        for side in (0, 1):
            sizes = dragon_sizes(state.board, state.size, _colour(side))
            counted = sizes[:state.dragons]
            parts.append(GameText("%(side)s dragons %(sizes)s = %(total)s", side=self.sides[side],
                                  sizes="+".join(map(str, counted)) or "0", total=sum(counted)))
        sentences = [GameText("%(first)s; %(second)s.", first=parts[0], second=parts[1])]
        if not state.outcome and not over:
            if any(state.passed):
                sentences.append(GameText("%(passer)s has passed; %(mover)s moves alone until passing too.",
                                          passer=self.sides[state.passed.index(True)],
                                          mover=self.sides[state.turn]))
            if not self.legal_points(state, state.turn):
                sentences.append(GameText("%(side)s has no legal point and must pass.",
                                          side=self.sides[state.turn]))
        return GameText.join(sentences)

    def help_text(self, language: str = "en") -> str:
        example = self.initial_state({"size": 9})
        for side, point in ((0, (2, 2)), (1, (6, 6)), (0, (4, 4)), (1, (6, 2)), (0, (2, 3))):
            example = self.apply(example, side, point)
        return GameText.fill(HELP_DE if language == "de" else HELP, diagram=self.diagram(example, legal=True))

    def to_json(self, state: TwoDragonsState) -> dict:
        return {"size": state.size, "dragons": state.dragons, "board": "".join(map(str, state.board)),
                "turn": state.turn, "passed": list(state.passed), "last": state.last,
                "outcome": state.outcome.to_json() if state.outcome else None}

    def from_json(self, data: dict) -> TwoDragonsState:
        return TwoDragonsState(data["size"], data["dragons"], tuple(int(c) for c in data["board"]),
                               data["turn"], tuple(data["passed"]), data["last"],
                               Outcome.from_json(data["outcome"]))


HELP = """\
2 DRAGONS

Two players, White (moves first) and Black, place pieces on the points of
an 18x18 board (option -size=N, 9 to 19). A dragon is a group of your
pieces connected along rows and columns (diagonal contact does not count).

Each player's first piece may go on any empty point. Every later piece
must be in sight of one of your pieces: walking from the new point along a
row, a column or a diagonal, the first piece met is yours, with only empty
points between (adjacent counts). Two rules close lines and squares:
  - No cutting through: a diagonal step between two opponent pieces that
    touch each other diagonally is blocked, and a blocked line gives no
    sight.
  - No blobs: a piece may not complete a 2x2 square of your colour.

Passing: you may pass at any time, and must when no legal point remains.
After one player passes, the other moves alone, as many turns as wanted,
until passing too; then the game ends.

Score: the pieces in your 2 biggest dragons (option -dragons=N). The higher
score wins; a tie goes to Black.

Notation: a point (K10; columns skip I), or pass. By mail:
    twodragons move 101 alice secret K10
or reply to a board mail with just: K10. "twodragons show <board>" marks
with * the points where the player to move may play, as here:

{diagram}
"""

# The same in German (the help mail of a player whose language is de).
HELP_DE = """\
2 DRAGONS

Zwei Spieler, Weiß (beginnt) und Schwarz, setzen Steine auf die Punkte
eines 18x18-Bretts (Option -size=N, 9 bis 19). Ein Drache ist eine Gruppe
eigener Steine, die entlang Zeilen und Spalten verbunden sind (diagonale
Berührung zählt nicht).

Der erste Stein jedes Spielers darf auf jeden leeren Punkt. Jeder weitere
Stein muss in Sicht eines eigenen Steins stehen: geht man vom neuen Punkt
entlang einer Zeile, Spalte oder Diagonale, ist der erste Stein, auf den
man trifft, ein eigener, mit nur leeren Punkten dazwischen (direkt daneben
zählt). Zwei Regeln schließen Linien und Quadrate:
  - Kein Durchschneiden: ein diagonaler Schritt zwischen zwei gegnerischen
    Steinen, die sich diagonal berühren, ist gesperrt, und eine gesperrte
    Linie gibt keine Sicht.
  - Keine Klumpen: ein Stein darf kein 2x2-Quadrat der eigenen Farbe
    vollenden.

Passen: du darfst jederzeit passen und musst es, wenn kein erlaubter Punkt
bleibt. Hat ein Spieler gepasst, zieht der andere allein, so viele Züge er
will, bis er ebenfalls passt; dann endet die Partie.

Wertung: die Steine in deinen 2 größten Drachen (Option -dragons=N). Die
höhere Wertung gewinnt; bei Gleichstand gewinnt Schwarz.

Notation: ein Punkt (K10; die Spalten überspringen I), oder pass. Per Mail:
    twodragons move 101 alice secret K10
oder antworte auf eine Brett-Mail nur mit: K10. "twodragons show <board>"
markiert mit * die Punkte, auf die der Spieler am Zug setzen darf, wie hier:

{diagram}
"""

TWO_DRAGONS = register(TwoDragons())
