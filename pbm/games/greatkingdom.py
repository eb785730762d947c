"""Great Kingdom: place castles, claim territory, destroy one enemy castle to win.

Rules as ``shared/rules.md`` settles them: odd boards 5..19 (9 by default)
with a neutral castle in the centre, Blue first, 40 castles a side, siege
wins at once (enemy castles checked first), a self-siege that destroys
nothing is illegal, no placing inside the opponent's territory, and after
two passes Blue needs ``margin`` (3) more territory points than Orange.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from .base import (
    GameInfo,
    GameText,
    IllegalMoveError,
    OptionSpec,
    Outcome,
    register,
    TurnBased,
)
from .grid import board_point, flood, grid_neighbours, parse_point_or_pass, point_name, square_diagram

EMPTY, BLUE, ORANGE, NEUTRAL = 0, 1, 2, 3
# What a point holds, as the keyboard cursor says it
CONTENTS = {BLUE: GameText("a blue castle"), ORANGE: GameText("an orange castle"),
            NEUTRAL: GameText("the neutral castle")}
CASTLES_EACH = 40
PASS = "pass"
SYMBOL = {EMPTY: ".", BLUE: "B", ORANGE: "O", NEUTRAL: "#"}


@dataclass(frozen=True)
class GreatKingdomState:
    size: int
    margin: int
    board: tuple[int, ...]  # row-major from A1; index = y * size + x
    turn: int  # side to move: 0 Blue, 1 Orange
    passes: int  # consecutive passes just played
    stock: tuple[int, int]  # castles left in hand
    last: tuple[int, int] | None  # point of the last placement
    destroyed: tuple[int, ...]  # indices of castles destroyed by the winning siege
    outcome: Outcome | None


def _colour(side: int) -> int:
    return BLUE if side == 0 else ORANGE


def _group(board, start: int, size: int) -> tuple[set[int], bool]:
    """The castles connected to ``start`` and whether any has an empty neighbour."""
    group, boundary = flood(board, start, size)
    return group, any(board[n] == EMPTY for n in boundary)


@lru_cache(maxsize=4096)
def territory(board: tuple[int, ...], size: int, colour: int) -> frozenset[int]:
    """Empty points that are ``colour``'s territory (see the module docstring).

    Cached: a position's territory is asked for by the move check, the
    diagram and the status line of every mail."""
    enemy = ORANGE if colour == BLUE else BLUE
    seen: set[int] = set()
    owned: set[int] = set()
    for start in range(size * size):
        if start in seen or board[start] in (colour, NEUTRAL):
            continue
        region, stack, has_enemy, edges = {start}, [start], False, set()
        while stack:
            i = stack.pop()
            x, y = i % size, i // size
            has_enemy |= board[i] == enemy
            if x == 0:
                edges.add("W")
            if x == size - 1:
                edges.add("E")
            if y == 0:
                edges.add("S")
            if y == size - 1:
                edges.add("N")
            for n in grid_neighbours(size)[i]:
                if n not in region and board[n] not in (colour, NEUTRAL):
                    region.add(n)
                    stack.append(n)
        seen |= region
        if not has_enemy and len(edges) < 4:
            owned |= region
    return frozenset(owned)


class GreatKingdom(TurnBased):
    info = GameInfo(
        name="greatkingdom", title="Great Kingdom", sides=("Blue", "Orange"),
        options=(OptionSpec("size", "int", 9, "board size, odd", low=5, high=19, odd=True),
                 OptionSpec("margin", "int", 3, "territory Blue needs beyond Orange's", low=0, high=361)),
        passing=True, forced_moves=True)

    def initial_state(self, options: dict) -> GreatKingdomState:
        options = self.with_defaults(options)
        size = options["size"]
        board = [EMPTY] * (size * size)
        board[(size // 2) * size + size // 2] = NEUTRAL
        return GreatKingdomState(size, options["margin"], tuple(board), 0, 0,
                                 (CASTLES_EACH, CASTLES_EACH), None, (), None)

    # -- notation ----------------------------------------------------------

    def parse_move(self, text: str, state: GreatKingdomState):
        return parse_point_or_pass(text, state.size, self.title, "D4")

    def format_move(self, move) -> str:
        return "pass" if move == PASS else point_name(*move)

    # -- rules -------------------------------------------------------------

    def apply(self, state: GreatKingdomState, side: int, move) -> GreatKingdomState:
        self.guard(state, side)
        other = 1 - side
        if move == PASS:
            if state.passes + 1 >= 2:
                return replace(state, passes=2, turn=other, last=None,
                               outcome=self._count(state))
            return replace(state, passes=state.passes + 1, turn=other, last=None)

        size = state.size
        x, y = board_point(move, size)
        index = y * size + x
        name = point_name(x, y)
        if state.stock[side] == 0:
            raise IllegalMoveError("%(side)s has no castles left; the only move is pass.", side=self.sides[side])
        if state.board[index] == NEUTRAL:
            raise IllegalMoveError("%(point)s holds the neutral castle; choose an empty point.", point=name)
        if state.board[index] != EMPTY:
            raise IllegalMoveError("%(point)s already holds a castle; choose an empty point.", point=name)
        if index in territory(state.board, size, _colour(other)):
            raise IllegalMoveError("%(point)s is inside %(side)s's territory, where you may not build.",
                                   point=name, side=self.sides[other])

        board = list(state.board)
        board[index] = _colour(side)
        enemy = _colour(other)
        destroyed: set[int] = set()
        for n in grid_neighbours(size)[index]:
            if board[n] == enemy and n not in destroyed:
                group, free = _group(board, n, size)
                if not free:
                    destroyed |= group
        stock = list(state.stock)
        stock[side] -= 1
        if destroyed:
            for i in destroyed:
                board[i] = EMPTY
            names = ", ".join(point_name(i % size, i // size) for i in sorted(destroyed))
            outcome = Outcome(side, GameText("siege: %(side)s destroyed %(castles)s", side=self.sides[side], castles=names),
                              kind="siege")
            return replace(state, board=tuple(board), turn=other, passes=0, stock=tuple(stock),
                           last=(x, y), destroyed=tuple(sorted(destroyed)), outcome=outcome)
        if not _group(board, index, size)[1]:
            raise IllegalMoveError("A castle on %(point)s would leave your own castles with no free space around "
                                   "them and destroys nothing; that is not allowed.", point=name)
        return replace(state, board=tuple(board), turn=other, passes=0, stock=tuple(stock),
                       last=(x, y))

    def scores(self, state: GreatKingdomState) -> tuple[int, int]:
        return (len(territory(state.board, state.size, BLUE)),
                len(territory(state.board, state.size, ORANGE)))

    def _count(self, state: GreatKingdomState) -> Outcome:
        blue, orange = self.scores(state)
        winner = 0 if blue - orange >= state.margin else 1
        # Blue needing ``margin`` more is Orange holding a komi of margin - 1/2, as SGF would
        # record it: the winner's lead after that komi, never 0 (B+0.5 when Blue makes it exactly)
        lead = abs(blue - orange - (state.margin - 0.5))
        return Outcome(winner, GameText("territory after two passes (Blue needs %(margin)s more)", margin=state.margin),
                       f"Blue {blue}, Orange {orange}", "score", lead)

    def legal_moves(self, state: GreatKingdomState) -> list:
        if state.outcome:
            return []
        return [PASS, *self._legal_points(state)]

    def only_move(self, state: GreatKingdomState):
        """Pass, when no castle can be built (asked after every move: stops at the first point)."""
        if state.outcome or next(self._legal_points(state), None) is not None:
            return None
        return PASS

    def _legal_points(self, state: GreatKingdomState):
        if state.stock[state.turn] == 0:
            return
        size = state.size
        forbidden = territory(state.board, size, _colour(1 - state.turn))
        for index, value in enumerate(state.board):
            if value != EMPTY or index in forbidden:
                continue
            point = (index % size, index // size)
            try:
                self.apply(state, state.turn, point)
            except IllegalMoveError:
                continue
            yield point

    # -- presentation ------------------------------------------------------

    def diagram(self, state: GreatKingdomState, legal: bool = False, over: bool = False) -> str:
        size = state.size
        blue_land = territory(state.board, size, BLUE)
        orange_land = territory(state.board, size, ORANGE)
        destroyed = set(state.destroyed)

        def cell(x: int, y: int) -> str:
            i = y * size + x
            if i in destroyed:
                return "*"
            if i in blue_land:
                return "b"
            if i in orange_land:
                return "o"
            return SYMBOL[state.board[i]]

        legend = [GameText("B Blue castle  O Orange castle  # neutral castle  b/o territory")]
        if destroyed:
            legend.append(GameText("* destroyed"))
        return GameText.join((square_diagram(size, cell, state.last), GameText.join(legend, "  ")), "\n")

    def point_contents(self, state: GreatKingdomState) -> dict[str, str]:
        return {point_name(i % state.size, i // state.size): CONTENTS[v]
                for i, v in enumerate(state.board) if v != EMPTY}

    def status(self, state: GreatKingdomState, over: bool = False) -> str:
        blue, orange = self.scores(state)
        return GameText("Territory: Blue %(blue)s, Orange %(orange)s (Blue needs +%(margin)s). Castles in hand: "
                        "Blue %(blue_castles)s, Orange %(orange_castles)s.", blue=blue, orange=orange, margin=state.margin,
                        blue_castles=state.stock[0], orange_castles=state.stock[1])

    def help_text(self, language: str = "en") -> str:
        example = self.initial_state({"size": 5})
        for side, point in ((0, (1, 1)), (1, (3, 3)), (0, (1, 3))):
            example = self.apply(example, side, point)
        return GameText.fill(HELP_DE if language == "de" else HELP, diagram=self.diagram(example))

    # -- storage -----------------------------------------------------------

    def to_json(self, state: GreatKingdomState) -> dict:
        return {
            "size": state.size, "margin": state.margin, "board": list(state.board),
            "turn": state.turn, "passes": state.passes, "stock": list(state.stock),
            "last": list(state.last) if state.last else None,
            "destroyed": list(state.destroyed),
            "outcome": state.outcome.to_json() if state.outcome else None,
        }

    def from_json(self, data: dict) -> GreatKingdomState:
        return GreatKingdomState(
            data["size"], data["margin"], tuple(data["board"]), data["turn"], data["passes"],
            tuple(data["stock"]), tuple(data["last"]) if data["last"] else None,
            tuple(data["destroyed"]), Outcome.from_json(data["outcome"]))


HELP = """\
GREAT KINGDOM

Two players, Blue (moves first) and Orange, place castles on the points
of a 9x9 board (option -size=N, odd, 5 to 19). A neutral castle stands on
the centre point. Each player has 40 castles; with none left, pass.

A turn: place a castle on an empty point, or pass.

Territory: the empty points of a region (orthogonally connected points that
are not your castles or the neutral castle) holding no enemy castle and not
touching all four edges. Edges and the neutral castle act as walls. You may
not place a castle inside your opponent's territory.

Siege: after your placement, every enemy group (orthogonally connected
castles) with no empty point next to it is destroyed and you win at once.
Enemy castles are checked first. A placement that destroys nothing and
leaves your own group without an empty neighbour is illegal.

End: after two passes in a row the territories are counted. Blue wins with
at least 3 more points than Orange (option -margin=N); otherwise Orange
wins: the count is never a draw (the players may still agree to one, by
"propose" and "accept"). Resigning loses at once.

Notation: a point, column letter then row number (D4; the letters skip I),
or "pass". Example, by mail:
    greatkingdom move 101 alice secret D4
or reply to a board mail with just: D4

In the diagram: B Blue, O Orange, # neutral castle, b/o territory,
(x) the last move. Example (5x5, after B2, D4, B4):

{diagram}
"""

# The same in German (the help mail of a player whose language is de).
HELP_DE = """\
GREAT KINGDOM

Zwei Spieler, Blau (beginnt) und Orange, setzen Burgen auf die Punkte
eines 9x9-Bretts (Option -size=N, ungerade, 5 bis 19). Auf dem Mittelpunkt
steht eine neutrale Burg. Jeder Spieler hat 40 Burgen; wer keine mehr hat,
passt.

Ein Zug: eine Burg auf einen leeren Punkt setzen, oder passen.

Gebiet: die leeren Punkte einer Region (waagerecht oder senkrecht
verbundene Punkte, die weder eigene Burgen noch die neutrale Burg sind),
die keine gegnerische Burg enthält und nicht alle vier Ränder berührt.
Ränder und die neutrale Burg wirken als Mauern. Ins Gebiet des Gegners
darf man keine Burg setzen.

Belagerung: jede gegnerische Gruppe (waagerecht oder senkrecht verbundene
Burgen), die nach deinem Zug keinen leeren Nachbarpunkt hat, ist zerstört,
und du gewinnst sofort. Gegnerische Burgen werden zuerst geprüft. Ein Zug,
der nichts zerstört und die eigene Gruppe ohne leeren Nachbarn lässt, ist
verboten.

Ende: nach zweimal Passen hintereinander werden die Gebiete gezählt. Blau
gewinnt mit mindestens 3 Punkten mehr als Orange (Option -margin=N), sonst
gewinnt Orange: die Zählung endet nie unentschieden (ein Remis können die
Spieler aber vereinbaren, mit "propose" und "accept"). Wer aufgibt,
verliert sofort.

Notation: ein Punkt, Spaltenbuchstabe und Zeilennummer (D4; die Buchstaben
überspringen I), oder "pass". Beispiel per Mail:
    greatkingdom move 101 alice secret D4
oder antworte auf eine Brett-Mail nur mit: D4

Im Diagramm: B Blau, O Orange, # neutrale Burg, b/o Gebiet, (x) der letzte
Zug. Beispiel (5x5, nach B2, D4, B4):

{diagram}
"""

GREAT_KINGDOM = register(GreatKingdom())
