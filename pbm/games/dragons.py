"""Dragons (Cameron Browne): hex tiles, auto moves, gap moves, loops.

Rules as ``shared/rules.md`` settles them (seed 002). Hexes have flat tops;
edges are numbered clockwise 0=N 1=NE 2=SE 3=S 4=SW 5=NW. Every tile is the
same two-sided tile:

* front ("shoulders"), ``F0``: edges 5, 0, 1 are O and 2, 3, 4 are X, each
  colour one region;
* back ("tails"), ``B0``: colours alternate 0=O 1=X 2=O 3=X 4=O 5=X; an X
  band joins 5 and 1, an O band joins 2 and 4, edges 0 and 3 are dead-end
  tails;
* ``Fk``/``Bk``: turned clockwise by k x 60 degrees.

Cells are axial coordinates ``(q, r)``: N is (0, -1), NE (+1, -1), SE
(+1, 0), S (0, +1), SW (-1, +1), NW (-1, 0). Players name a cell from a
numbered neighbouring tile (``7ne``); a move is ``<cell>:<orientation>``.

Auto moves: after a placement, while some gap (an empty cell with three or
more tiled neighbours) fits exactly one orientation, the gap with the
smallest name is filled (names compare by tile number, then by direction in
the order n ne se s sw nw), until none is left or the pool is empty. Gap
moves: while any gap fits two or more orientations, the player must fill
one of those gaps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .base import (Consequences, GameInfo, GameText, IllegalMoveError, InvalidMoveError, OptionSpec, Outcome,
                   TurnBased, register)
from .dragons_help import HELP, HELP_DE
from .dragons_tiles import (COLOURS, DIRECTIONS, EDGE_NAMES, ORIENTATIONS, STEP, WIN_LENGTH, Cell, edge_colours,
                            fitting, neighbour)
from .said import as_typed

# -- state ---------------------------------------------------------------------

@dataclass(frozen=True)
class DragonsState:
    tiles: tuple[tuple[int, int, int], ...]  # (q, r, orientation); tile number = index + 1
    pool: int  # tiles allowed in all, the first and auto moves included
    tantrix: bool
    turn: int  # 0 O, 1 X
    last: tuple[int, ...] = ()  # numbers of the tiles the last move placed (own first, then auto)
    outcome: Outcome | None = None
    # Derived, kept up to date tile by tile (see ``placed``): cell -> tile index, and
    # empty cell next to tiles -> how many tiled neighbours it has.
    at: dict = field(default=None, compare=False, repr=False)
    counts: dict = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.at is None:
            at = {(q, r): i for i, (q, r, _) in enumerate(self.tiles)}
            counts: dict = {}
            for q, r in at:
                for dq, dr in STEP:
                    cell = (q + dq, r + dr)
                    if cell not in at:
                        counts[cell] = counts.get(cell, 0) + 1
            object.__setattr__(self, "at", at)
            object.__setattr__(self, "counts", counts)

    def placed(self, cell: Cell, orientation: int) -> "DragonsState":
        """This state with one more tile (the derived maps updated, not rebuilt)."""
        at = dict(self.at)
        at[cell] = len(self.tiles)
        counts = dict(self.counts)
        counts.pop(cell, None)
        for dq, dr in STEP:
            near = (cell[0] + dq, cell[1] + dr)
            if near not in at:
                counts[near] = counts.get(near, 0) + 1
        return replace(self, tiles=self.tiles + ((cell[0], cell[1], orientation),), at=at, counts=counts)

    def constraint(self, cell: Cell) -> tuple:
        """Per edge of ``cell``: the colour the neighbouring tile shows it, or None."""
        out = []
        for d in range(6):
            i = self.at.get(neighbour(cell, d))
            out.append(None if i is None else edge_colours(self.tiles[i][2])[(d + 3) % 6])
        return tuple(out)

    def tiled_neighbours(self, cell: Cell) -> int:
        return 0 if cell in self.at else self.counts.get(cell, 0)

    def frontier(self) -> set[Cell]:
        return set(self.counts)

    def name(self, cell: Cell) -> str:
        """The canonical name: from the lowest-numbered neighbouring tile."""
        options = []
        for d in range(6):
            i = self.at.get(neighbour(cell, (d + 3) % 6))
            if i is not None:
                options.append((i, d))
        i, d = min(options)
        return f"{i + 1}{DIRECTIONS[d]}"

    def name_when_placed(self, number: int) -> str:
        """The name tile ``number``'s cell had just before the tile was placed (from the
        lowest-numbered tile next to it then)."""
        q, r, _ = self.tiles[number - 1]
        i, d = min((self.at[near], d) for d in range(6)
                   if (near := neighbour((q, r), (d + 3) % 6)) in self.at and self.at[near] < number - 1)
        return f"{i + 1}{DIRECTIONS[d]}"

    def name_key(self, cell: Cell) -> tuple[int, int]:
        return min((self.at[neighbour(cell, (d + 3) % 6)], d) for d in range(6)
                   if neighbour(cell, (d + 3) % 6) in self.at)

    def gaps(self) -> list[tuple[Cell, tuple[int, ...]]]:
        """Empty cells with three or more tiled neighbours, with their fitting orientations."""
        return [(cell, fitting(self.constraint(cell))) for cell, n in self.counts.items() if n >= 3]

    def compulsory(self) -> list[Cell]:
        return sorted((cell for cell, fits in self.gaps() if len(fits) >= 2), key=self.name_key)


STEP_WORD = r"(?:nw|ne|sw|se|n|s)"
CELL = rf"([0-9]{{1,4}})\s*({STEP_WORD}(?:\s*[.,]?\s*{STEP_WORD})*)"  # a tile number and a walk: 7ne, 2sw.se
MOVE = re.compile(rf"^\s*{CELL}\s*[:\-/ ]?\s*([fb])\s*([0-5])\s*$", re.I)


class Dragons(TurnBased):
    info = GameInfo(
        name="dragons", title="Dragons", sides=("O", "X"),
        options=(OptionSpec("num_tiles", "int", None, "tiles in the pool (default 50; 40 with Tantrix scoring)",
                            low=2, high=200),
                 OptionSpec("tantrix", "bool", False, "score the best dragon as in Tantrix")),
        forced_moves=False)  # its automatic moves happen inside a move (see apply)

    def with_defaults(self, options: dict) -> dict:
        options = super().with_defaults(options)
        return {"num_tiles": 40 if options["tantrix"] else 50, **options}

    def parse_options(self, raw: dict[str, str]) -> dict:
        return self.with_defaults(self.info.parse_options(raw))

    def initial_state(self, options: dict) -> DragonsState:
        options = self.with_defaults(options)
        return DragonsState(((0, 0, 0),), options["num_tiles"], options["tantrix"], 0)

    # -- notation ----------------------------------------------------------

    def parse_cell(self, text: str, state: DragonsState) -> Cell:
        match = re.fullmatch(rf"\s*{CELL}\s*", text, re.I)
        if not match:
            raise InvalidMoveError("\"%(text)s\" is not a cell name: write a tile number and a direction "
                                   "(n, ne, se, s, sw, nw), like 7ne.", text=as_typed(text.strip()))
        number = int(match.group(1))
        if not 1 <= number <= len(state.tiles):
            raise InvalidMoveError("There is no tile %(number)s; the tiles are numbered 1 to %(last)s.",
                                   number=number, last=len(state.tiles))
        q, r, _ = state.tiles[number - 1]
        cell = (q, r)
        for word in re.findall(STEP_WORD, match.group(2).lower()):
            cell = neighbour(cell, DIRECTIONS.index(word))
        return cell

    def parse_move(self, text: str, state: DragonsState):
        match = MOVE.match(text)
        if not match:
            raise InvalidMoveError("\"%(text)s\" is not a Dragons move: write a cell and an orientation, like 7ne:B2 "
                                   "(cell 7ne, back turned twice).", text=as_typed(text.strip()))
        cell = self.parse_cell(match.group(1) + match.group(2), state)
        orientation = ORIENTATIONS.index(match.group(3).upper() + match.group(4))
        if cell in state.at:
            raise IllegalMoveError("%(cell)s names tile %(tile)s's cell, which is taken.",
                                   cell=match.group(1) + match.group(2).lower(), tile=state.at[cell] + 1)
        if state.tiled_neighbours(cell) == 0:
            raise IllegalMoveError("%(cell)s is not next to any tile; a tile must touch at least one other.",
                                   cell=match.group(1) + match.group(2).lower())
        number, direction = state.name_key(cell)
        return number + 1, direction, orientation

    def format_move(self, move) -> str:
        number, direction, orientation = move
        return f"{number}{DIRECTIONS[direction]}:{ORIENTATIONS[orientation]}"

    def cell_of(self, move, state: DragonsState) -> Cell:
        number, direction, _ = move
        q, r, _ = state.tiles[number - 1]
        return neighbour((q, r), direction)

    # -- rules -------------------------------------------------------------

    def check_shape(self, state: DragonsState, move) -> None:
        """Raise IllegalMoveError unless ``move`` is (tile number, direction, orientation) in range:
        parse_move makes only such moves; this guards apply() against one built elsewhere."""
        if not (isinstance(move, tuple) and len(move) == 3 and all(type(part) is int for part in move)
                and 0 <= move[1] < len(DIRECTIONS) and 0 <= move[2] < len(ORIENTATIONS)):
            raise IllegalMoveError("\"%(text)s\" is not a Dragons move: write a cell and an orientation, like 7ne:B2 "
                                   "(cell 7ne, back turned twice).", text=str(move))
        if not 1 <= move[0] <= len(state.tiles):
            raise IllegalMoveError("There is no tile %(number)s; the tiles are numbered 1 to %(last)s.",
                                   number=move[0], last=len(state.tiles))

    def check(self, state: DragonsState, cell: Cell, orientation: int) -> None:
        """Raise IllegalMoveError unless the tile may go there now."""
        name = state.name(cell)
        colours = edge_colours(orientation)
        for d, wanted in enumerate(state.constraint(cell)):
            if wanted is not None and colours[d] != wanted:
                other = state.at[neighbour(cell, d)] + 1
                raise IllegalMoveError(
                    "%(move)s does not fit: its %(edge)s edge is %(colour)s but tile %(other)s's %(facing)s "
                    "edge is %(wanted)s.", move=name + ":" + ORIENTATIONS[orientation], edge=EDGE_NAMES[d],
                    colour=colours[d].upper(), other=other, facing=EDGE_NAMES[(d + 3) % 6], wanted=wanted.upper())
        must = state.compulsory()
        if must and cell not in must:
            if len(must) == 1:
                raise IllegalMoveError("A gap must be filled first: play in %(cell)s (it fits two or more "
                                       "orientations).", cell=state.name(next(iter(must))))
            raise IllegalMoveError("A gap must be filled first: play in one of %(cells)s (each fits two or more "
                                   "orientations).", cells=", ".join(state.name(c) for c in must))

    def apply(self, state: DragonsState, side: int, move) -> DragonsState:
        self.guard(state, side)
        self.check_shape(state, move)
        cell = self.cell_of(move, state)
        if cell in state.at:
            raise IllegalMoveError("%(move)s: that cell is already tile %(tile)s.", move=self.format_move(move),
                                   tile=state.at[cell] + 1)
        self.check(state, cell, move[2])
        first = len(state.tiles) + 1
        state = self._auto_moves(state.placed(cell, move[2]))
        placed = tuple(range(first, len(state.tiles) + 1))
        state = replace(state, turn=1 - side, last=placed)
        return replace(state, outcome=self._judge(state, set(n - 1 for n in placed)))

    def _auto_moves(self, state: DragonsState) -> DragonsState:
        while len(state.tiles) < state.pool:
            forced = [cell for cell, fits in state.gaps() if len(fits) == 1]
            if not forced:
                break
            cell = min(forced, key=state.name_key)
            state = state.placed(cell, fitting(state.constraint(cell))[0])
        return state

    def _judge(self, state: DragonsState, placed: set[int]) -> Outcome | None:
        full = len(state.tiles) >= state.pool
        if state.tantrix:
            if not full:
                return None
            best = [max((n * (2 if closed else 1) for n, closed in dragon_scores(state, c)), default=0)
                    for c in COLOURS]
            score = f"O {best[0]}, X {best[1]}"
            if best[0] == best[1]:
                return Outcome(None, "Tantrix scoring, equal best dragons", score, "score", 0)
            return Outcome(0 if best[0] > best[1] else 1, "Tantrix scoring, the best dragon", score, "score",
                           abs(best[0] - best[1]))
        loops = [longest_loop(state, c, placed) for c in COLOURS]
        winners = [s for s in (0, 1) if loops[s] >= WIN_LENGTH]
        if winners:
            if len(winners) == 2 and loops[0] == loops[1]:
                return Outcome(None, GameText("both colours closed loops of %(count)s tiles", count=loops[0]),
                               kind="loop")
            winner = max(winners, key=lambda s: loops[s])
            return Outcome(winner, GameText("a loop of %(count)s %(colour)s tiles", count=loops[winner],
                                             colour=COLOURS[winner].upper()), kind="loop")
        if full:
            return Outcome(None, GameText("all %(count)s tiles were played without a winning loop", count=state.pool),
                           kind="exhaustion")
        return None

    def legal_moves(self, state: DragonsState) -> list:
        if state.outcome:
            return []
        cells = state.compulsory() or sorted(state.frontier(), key=state.name_key)
        moves = []
        for cell in cells:
            number, direction = state.name_key(cell)
            moves += [(number + 1, direction, o) for o in fitting(state.constraint(cell))]
        return moves

    def playable(self, state: DragonsState) -> list[tuple[str, list[str]]]:
        """Each cell the player to move may fill, with the orientations that fit it."""
        cells = state.compulsory() or sorted(state.frontier(), key=state.name_key)
        return [(state.name(c), [ORIENTATIONS[o] for o in fitting(state.constraint(c))]) for c in cells
                if fitting(state.constraint(c))]

    # -- presentation ------------------------------------------------------

    def diagram(self, state: DragonsState, legal: bool = False, over: bool = False) -> str:
        marks = {cell: "*" for cell in state.compulsory()} if not (state.outcome or over) else {}
        from .dragons_diagram import draw  # the drawing sits beside the rules and reads them

        legend = [GameText("o/x edge colours, numbers are tiles")]
        if marks:
            legend.append(GameText("* a gap that must be filled"))
        lines = [draw(state, marks), GameText.join(legend, "; ")]
        if legal and not (state.outcome or over):
            lines.append(GameText("Playable cells and the orientations that fit:"))
            lines += [f"  {name:<6} {' '.join(fits)}" for name, fits in self.playable(state)]
        return GameText.join(lines, "\n")

    def consequences(self, before: DragonsState, after: DragonsState) -> Consequences:
        """The tiles placed automatically after the move, as moves (``(Auto) 5se:F2``)."""
        return Consequences(auto=tuple(f"{after.name_when_placed(n)}:{ORIENTATIONS[after.tiles[n - 1][2]]}"
                                       for n in after.last[1:]))

    def status(self, state: DragonsState, over: bool = False) -> str:
        parts = [GameText("Tiles: %(placed)s of %(pool)s placed.", placed=len(state.tiles), pool=state.pool)]
        if state.last:
            own, *auto = state.last
            q, r, o = state.tiles[own - 1]
            automatic = GameText.join([GameText(", (Auto) tile %(tile)s (%(orientation)s)", tile=n,
                                                orientation=ORIENTATIONS[state.tiles[n - 1][2]])
                                       for n in auto], "")
            parts.append(GameText("Last move: tile %(tile)s (%(orientation)s)%(auto)s.", tile=own,
                                  orientation=ORIENTATIONS[o], auto=automatic))
        if not state.outcome and not over:
            must = state.compulsory()
            if must:
                fits = "; ".join(f"{name} {' '.join(orientations)}" for name, orientations in self.playable(state))
                parts.append(GameText("Must fill a gap: %(cells)s.", cells=", ".join(state.name(c) for c in must)))
                parts.append(GameText("Orientations that fit: %(fits)s.", fits=fits))
        return GameText.join(parts)

    def help_text(self, language: str = "en") -> str:
        from .dragons_diagram import draw_single

        pictures = []
        for row in (range(6), range(6, 12)):
            tiles = [draw_single(o) for o in row]
            pictures.append("\n".join("  ".join(t[i] for t in tiles).rstrip() for i in range(5)))
            pictures.append("  ".join(f"{ORIENTATIONS[o]:^9}" for o in row).rstrip())
        example = self.initial_state({})
        example = self.apply(example, 0, self.parse_move("1ne:F5", example))
        return GameText.fill(HELP_DE if language == "de" else HELP, orientations="\n".join(pictures),
                             diagram=self.diagram(example, legal=False))

    # -- storage -----------------------------------------------------------

    def to_json(self, state: DragonsState) -> dict:
        return {"tiles": [list(t) for t in state.tiles], "pool": state.pool, "tantrix": state.tantrix,
                "turn": state.turn, "last": list(state.last),
                "outcome": state.outcome.to_json() if state.outcome else None}

    def from_json(self, data: dict) -> DragonsState:
        return DragonsState(tuple(tuple(t) for t in data["tiles"]), data["pool"], data["tantrix"],
                            data["turn"], tuple(data["last"]), Outcome.from_json(data["outcome"]))


DRAGONS = register(Dragons())

# Loops and chains read the tile geometry above, so they are imported last.
from .dragons_chains import dragon_scores, longest_loop  # noqa: E402
