"""Two Tigers: 20 goats against 2 tigers on the 5x5 alquerque board.

Rules as ``shared/rules.md`` settles them (seed 001): points a1..e5,
orthogonal lines everywhere, diagonals only through the points whose column
and row indices (from zero) add up to an even number. Tigers start on c4
and c2, goats in piles of five on b5, b3, d5 and d3; the goats move first.
A goat (a single one or the top of a pile) steps to an adjacent empty
point; a tiger steps, or leaps over an adjacent goat or pile to the empty
point beyond on the same line, capturing one goat, and may go on leaping
(never over the same point twice in a turn). Goats win when the tigers
cannot move; tigers win when fewer than 7 goats remain or the goats cannot
move; the third occurrence of a position with the same side to move draws.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from .base import Consequences, GameInfo, GameText, IllegalMoveError, InvalidMoveError, Outcome, TurnBased, register
from .said import as_typed

SIZE = 5
GOATS, TIGERS = 0, 1
TIGER = -1  # board value for a tiger; 0 empty; n > 0 a pile of n goats
FEWEST_GOATS = 7
COLUMNS = "abcde"


def name(point: int) -> str:
    return f"{COLUMNS[point % SIZE]}{point // SIZE + 1}"


def parse_name(text: str) -> int:
    t = text.strip().lower()
    if len(t) != 2 or t[0] not in COLUMNS or t[1] not in "12345":
        raise InvalidMoveError("\"%(text)s\" is not a point; points run from a1 to e5.", text=as_typed(text.strip()))
    return (int(t[1]) - 1) * SIZE + COLUMNS.index(t[0])


def has_diagonals(point: int) -> bool:
    return (point % SIZE + point // SIZE) % 2 == 0


@lru_cache(maxsize=None)
def lines() -> dict[int, tuple[tuple[int, int], ...]]:
    """For every point, the directions (dx, dy) along which a line leaves it."""
    result = {}
    for p in range(SIZE * SIZE):
        x, y = p % SIZE, p // SIZE
        dirs = [(1, 0), (-1, 0), (0, 1), (0, -1)]
        if has_diagonals(p):
            dirs += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
        result[p] = tuple((dx, dy) for dx, dy in dirs if 0 <= x + dx < SIZE and 0 <= y + dy < SIZE)
    return result


def step(point: int, direction: tuple[int, int]) -> int | None:
    x, y = point % SIZE + direction[0], point // SIZE + direction[1]
    return y * SIZE + x if 0 <= x < SIZE and 0 <= y < SIZE else None


def direction_between(a: int, b: int) -> tuple[int, int] | None:
    dx, dy = b % SIZE - a % SIZE, b // SIZE - a // SIZE
    return (dx, dy) if max(abs(dx), abs(dy)) == 1 else None


@dataclass(frozen=True)
class TwoTigersState:
    board: tuple[int, ...]
    turn: int  # 0 goats, 1 tigers
    seen_once: frozenset  # positions (board, turn) that occurred once
    seen_twice: frozenset
    last: tuple[int, ...] | None
    outcome: Outcome | None = None

    @property
    def goats(self) -> int:
        return sum(v for v in self.board if v > 0)


class TwoTigers(TurnBased):
    info = GameInfo(name="twotigers", title="Two Tigers", sides=("Goats", "Tigers"))

    def parse_options(self, raw: dict[str, str]) -> dict:
        self.info.parse_options(raw)  # refuses every option: the game has none
        return {}

    def initial_state(self, options: dict) -> TwoTigersState:
        board = [0] * (SIZE * SIZE)
        for point in ("c4", "c2"):
            board[parse_name(point)] = TIGER
        for point in ("b5", "b3", "d5", "d3"):
            board[parse_name(point)] = 5
        position = (tuple(board), GOATS)
        return TwoTigersState(tuple(board), GOATS, frozenset({position}), frozenset(), None)

    def parse_move(self, text: str, state: TwoTigersState) -> tuple[int, ...]:
        parts = [p for p in text.strip().lower().replace(" ", "-").split("-") if p]
        if len(parts) < 2:
            raise InvalidMoveError("A move joins points with '-': b5-b4 for a goat, c4-c5 or c2-c4-e4 "
                                   "for a tiger.")
        return tuple(parse_name(p) for p in parts)

    def format_move(self, move: tuple[int, ...]) -> str:
        return "-".join(name(p) for p in move)

    # -- rules -------------------------------------------------------------

    def _check_line(self, a: int, b: int) -> tuple[int, int]:
        direction = direction_between(a, b)
        if direction is None:
            raise IllegalMoveError("%(a)s is not adjacent to %(b)s on this board.", a=name(a), b=name(b))
        if direction not in lines()[a]:
            raise IllegalMoveError("%(a)s-%(b)s is not a line on this board (%(a)s has no diagonals).", a=name(a),
                                   b=name(b))
        return direction

    def _check_goat(self, state: TwoTigersState, move: tuple[int, ...]) -> None:
        if len(move) != 2:
            raise IllegalMoveError("A goat moves one step: two points, like b5-b4.")
        start, end = move
        if state.board[start] <= 0:
            raise IllegalMoveError("%(point)s holds no goat.", point=name(start))
        self._check_line(start, end)
        if state.board[end] != 0:
            if state.board[end] == TIGER:
                raise IllegalMoveError("%(point)s holds a tiger; a goat only moves to an empty point.",
                                       point=name(end))
            raise IllegalMoveError("%(point)s holds goats; a goat only moves to an empty point.", point=name(end))

    def _check_tiger(self, state: TwoTigersState, move: tuple[int, ...]) -> list[int]:
        """The points leapt over, or IllegalMoveError with the reason."""
        start = move[0]
        if state.board[start] != TIGER:
            raise IllegalMoveError("%(point)s holds no tiger.", point=name(start))
        board = list(state.board)
        board[start] = 0
        if len(move) == 2 and direction_between(start, move[1]) is not None:
            self._check_line(start, move[1])
            if board[move[1]] != 0:
                raise IllegalMoveError("%(point)s is not empty; a tiger steps to an empty point or leaps over a "
                                       "goat.", point=name(move[1]))
            return []
        leapt: list[int] = []
        for a, b in zip(move, move[1:]):
            dx, dy = b % SIZE - a % SIZE, b // SIZE - a // SIZE
            if max(abs(dx), abs(dy)) == 1:
                raise IllegalMoveError("%(a)s-%(b)s is a step, and a step ends the tiger's turn; only leaps can "
                                       "follow one another.", a=name(a), b=name(b))
            if max(abs(dx), abs(dy)) != 2 or (dx and dy and abs(dx) != abs(dy)):
                raise IllegalMoveError("%(a)s is not adjacent to %(b)s on this board, and a leap goes over "
                                       "exactly one point to the point beyond.", a=name(a), b=name(b))
            over = step(a, (dx // 2, dy // 2))
            self._check_line(a, over)
            self._check_line(over, b)
            if over in leapt:
                raise IllegalMoveError("%(point)s was already leapt over this turn.", point=name(over))
            if board[over] <= 0:
                raise IllegalMoveError("%(a)s-%(b)s would leap over %(over)s, which holds no goat.", a=name(a),
                                       b=name(b), over=name(over))
            if board[b] != 0:
                raise IllegalMoveError("%(point)s is not empty; a leap must land on an empty point.",
                                       point=name(b))
            board[over] -= 1
            leapt.append(over)
        return leapt

    def apply(self, state: TwoTigersState, side: int, move: tuple[int, ...]) -> TwoTigersState:
        self.guard(state, side)
        for point in move if isinstance(move, tuple) and len(move) >= 2 else (move,):
            if type(point) is not int or not 0 <= point < SIZE * SIZE:  # a move parse_move did not make
                raise IllegalMoveError("\"%(text)s\" is not a point; points run from a1 to e5.", text=str(point))
        board = list(state.board)
        if side == GOATS:
            self._check_goat(state, move)
            board[move[0]] -= 1
            board[move[1]] = 1
        else:
            for over in self._check_tiger(state, move):
                board[over] -= 1
            board[move[0]], board[move[-1]] = 0, TIGER
        after = replace(state, board=tuple(board), turn=1 - side, last=move)
        return self._judge(after)

    def _judge(self, state: TwoTigersState) -> TwoTigersState:
        position = (state.board, state.turn)
        if position in state.seen_twice:
            return replace(state, outcome=Outcome(None, "the same position occurred a third time", kind="repetition"))
        if position in state.seen_once:
            state = replace(state, seen_twice=state.seen_twice | {position})
        else:
            state = replace(state, seen_once=state.seen_once | {position})
        if state.goats < FEWEST_GOATS:
            return replace(state, outcome=Outcome(TIGERS, GameText(
                "only %(count)s goats are left, too few to trap the tigers", count=state.goats), kind="capture"))
        if not self._moves(state, state.turn):
            if state.turn == TIGERS:
                return replace(state, outcome=Outcome(GOATS, "both tigers are trapped", kind="blocked"))
            return replace(state, outcome=Outcome(TIGERS, "the goats cannot move", kind="blocked"))
        return state

    def _moves(self, state: TwoTigersState, side: int) -> list[tuple[int, ...]]:
        board = state.board
        moves: list[tuple[int, ...]] = []
        if side == GOATS:
            for p, v in enumerate(board):
                if v > 0:
                    moves += [(p, q) for d in lines()[p] if board[q := step(p, d)] == 0]
            return moves
        for p, v in enumerate(board):
            if v != TIGER:
                continue
            moves += [(p, q) for d in lines()[p] if board[q := step(p, d)] == 0]
            cleared = list(board)
            cleared[p] = 0
            self._leaps(cleared, (p,), [], moves)
        return moves

    def _leaps(self, board: list[int], path: tuple[int, ...], leapt: list[int], out: list) -> None:
        here = path[-1]
        for d in lines()[here]:
            over = step(here, d)
            land = step(over, d) if over is not None else None
            if land is None or over in leapt or board[over] <= 0 or board[land] != 0:
                continue
            if d not in lines()[over]:
                continue
            board[over] -= 1
            out.append(path + (land,))
            self._leaps(board, path + (land,), leapt + [over], out)
            board[over] += 1

    def legal_moves(self, state: TwoTigersState) -> list[tuple[int, ...]]:
        return [] if state.outcome else self._moves(state, state.turn)

    # -- presentation ------------------------------------------------------

    def diagram(self, state: TwoTigersState, legal: bool = False, over: bool = False) -> str:
        """The alquerque board: points 6 columns apart, lines drawn between them."""
        width = 8 + 6 * SIZE

        def cell(p: int) -> str:
            v = state.board[p]
            text = "T" if v == TIGER else "." if v == 0 else "G" if v == 1 else f"G{v}"
            return f"({text})" if state.last and p == state.last[-1] else text

        letters = " " * 7 + "     ".join(COLUMNS)
        out = [letters]
        for y in range(SIZE - 1, -1, -1):
            row = [" "] * width
            spans = []
            for x in range(SIZE):
                text, at = cell(y * SIZE + x), 7 + 6 * x
                start = at - 1 if text.startswith("(") else at
                row[start:start + len(text)] = text
                spans.append((start, start + len(text)))
            for (_, end), (start, _) in zip(spans, spans[1:]):
                row[end + 1:start - 1] = "-" * (start - end - 2)
            out.append(f"  {y + 1}" + "".join(row[3:]).rstrip().ljust(width - 4) + f"{y + 1}")
            if y:
                links = [" "] * width
                for x in range(SIZE):
                    links[7 + 6 * x] = "|"
                    if x < SIZE - 1:
                        links[10 + 6 * x] = "\\" if has_diagonals(y * SIZE + x) else "/"
                out.append("".join(links).rstrip())
        out.append(letters)
        return GameText.join(("\n".join(out), GameText("T tiger  G goat  G5 a pile of 5 goats  (x) last move")),
                             "\n")

    def point_contents(self, state: TwoTigersState) -> dict[str, str]:
        return {name(p): GameText("a tiger") if v == TIGER else GameText("a goat") if v == 1
                else GameText("a pile of %(count)s goats", count=v)
                for p, v in enumerate(state.board) if v != 0}

    def status(self, state: TwoTigersState, over: bool = False) -> str:
        return GameText("Goats left: %(goats)s of 20 (the tigers win below %(fewest)s).", goats=state.goats,
                        fewest=FEWEST_GOATS)

    def consequences(self, before: TwoTigersState, after: TwoTigersState) -> Consequences:
        return Consequences(captures=before.goats - after.goats)

    def help_text(self, language: str = "en") -> str:
        example = self.apply(self.initial_state({}), GOATS, self.parse_move("b3-b4", None))
        return GameText.fill(HELP_DE if language == "de" else HELP, diagram=self.diagram(example))

    # -- storage -----------------------------------------------------------

    def to_json(self, state: TwoTigersState) -> dict:
        def positions(seen):
            return sorted([list(board), turn] for board, turn in seen)
        return {"board": list(state.board), "turn": state.turn,
                "seen_once": positions(state.seen_once), "seen_twice": positions(state.seen_twice),
                "last": list(state.last) if state.last else None,
                "outcome": state.outcome.to_json() if state.outcome else None}

    def from_json(self, data: dict) -> TwoTigersState:
        def positions(seen):
            return frozenset((tuple(board), turn) for board, turn in seen)
        return TwoTigersState(tuple(data["board"]), data["turn"], positions(data["seen_once"]),
                              positions(data["seen_twice"]), tuple(data["last"]) if data["last"] else None,
                              Outcome.from_json(data["outcome"]))


HELP = """\
TWO TIGERS

The Goats (20 of them, moving first) try to trap the two Tigers on the
5x5 alquerque board: 25 points a1 to e5 (columns a-e, rows 1-5 from the
bottom), joined along rows and columns, and along diagonals through every
other point (a1, c1, e1, b2, d2, a3, c3, e3, b4, d4, a5, c5, e5).

Start: tigers on c4 and c2; goats in piles of five on b5, b3, d5 and d3.

Goats: move one goat (a single goat, or the top goat of a pile) one step
along a line to an empty point. Goats never move onto goats or piles, and
never capture.

Tigers: step one point along a line to an empty point, or leap over an
adjacent goat or pile to the empty point just beyond on the same line,
capturing one goat (the top one of a pile). The same tiger may go on
leaping in the same turn and may stop after any leap, but no point may be
leapt over twice in one turn. Capturing is never compulsory.

End: the goats win when the tigers, on their turn, cannot move. The tigers
win when fewer than 7 goats are left, or when the goats, on their turn,
cannot move. The third time the same position occurs with the same side to
move, the game is drawn.

Notation: points joined by '-': b5-b4 (a goat), c4-c5 (a tiger step),
c2-c4-e4 (a tiger leaping twice; the captured goats are implied). By mail:
    twotigers move 101 alice secret b5-b4
or reply to a board mail with just: b5-b4

In the diagram T is a tiger, G a goat, G5 a pile of five; lines show where
pieces may move. After the goats' first move b3-b4:

{diagram}
"""

# The same in German (the help mail of a player whose language is de).
HELP_DE = """\
TWO TIGERS

Die Ziegen (20 Stück, sie beginnen) versuchen, die zwei Tiger auf dem
5x5-Alquerque-Brett einzusperren: 25 Punkte a1 bis e5 (Spalten a-e,
Zeilen 1-5 von unten), verbunden entlang Zeilen und Spalten und entlang
von Diagonalen durch jeden zweiten Punkt (a1, c1, e1, b2, d2, a3, c3, e3,
b4, d4, a5, c5, e5).

Start: Tiger auf c4 und c2; Ziegen in Stapeln zu fünft auf b5, b3, d5 und
d3.

Ziegen: eine Ziege (eine einzelne oder die oberste eines Stapels) einen
Schritt entlang einer Linie auf einen leeren Punkt ziehen. Ziegen ziehen
nie auf Ziegen oder Stapel und schlagen nie.

Tiger: einen Schritt entlang einer Linie auf einen leeren Punkt, oder über
eine benachbarte Ziege oder einen Stapel auf den leeren Punkt direkt
dahinter auf derselben Linie springen und dabei eine Ziege schlagen (die
oberste eines Stapels). Derselbe Tiger darf im selben Zug weiterspringen
und nach jedem Sprung aufhören, aber kein Punkt darf in einem Zug zweimal
übersprungen werden. Schlagen ist nie Pflicht.

Ende: die Ziegen gewinnen, wenn die Tiger am Zug nicht ziehen können. Die
Tiger gewinnen, wenn weniger als 7 Ziegen übrig sind oder wenn die Ziegen
am Zug nicht ziehen können. Tritt dieselbe Stellung mit derselben Seite am
Zug zum dritten Mal auf, endet die Partie unentschieden.

Notation: Punkte, verbunden mit '-': b5-b4 (eine Ziege), c4-c5 (ein
Tigerschritt), c2-c4-e4 (ein Tiger springt zweimal; die geschlagenen
Ziegen ergeben sich daraus). Per Mail:
    twotigers move 101 alice secret b5-b4
oder antworte auf eine Brett-Mail nur mit: b5-b4

Im Diagramm ist T ein Tiger, G eine Ziege, G5 ein Stapel aus fünf; Linien
zeigen, wohin Figuren ziehen dürfen. Nach dem ersten Zug der Ziegen b3-b4:

{diagram}
"""

TWO_TIGERS = register(TwoTigers())
