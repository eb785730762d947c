"""Dragons: loops and chains of one colour across tiles (the win by a loop, and
Tantrix scoring), beside the rules in ``dragons``. Reads the state only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dragons_tiles import STEP, edge_colours, main_edges, neighbour, regions

if TYPE_CHECKING:
    from .dragons import DragonsState


def loop_links(state: DragonsState, i: int, colour: str) -> list[int]:
    """The tiles joined to tile index ``i`` through its main region of ``colour``
    (tails never close a loop)."""
    q, r, o = state.tiles[i]
    links = []
    for e in main_edges(o, colour):
        dq, dr = STEP[e]
        j = state.at.get((q + dq, r + dr))
        if j is not None and (e + 3) % 6 in main_edges(state.tiles[j][2], colour):
            links.append(j)
    return links


def longest_loop(state: DragonsState, colour: str, through: set[int]) -> int:
    """The most tiles on a simple cycle of ``colour`` through any tile of ``through``
    (a new loop must pass through a tile the move placed).

    Longest cycle is a hard problem, so the search is kept small: only tiles
    reachable from ``through`` are looked at, and a cycle through a tile stays
    inside one biconnected block containing it, so each block is searched alone."""
    graph: dict[int, list[int]] = {}
    todo = list(through)
    while todo:
        i = todo.pop()
        if i not in graph:
            graph[i] = loop_links(state, i, colour)
            todo += [j for j in graph[i] if j not in graph]
    best = 0
    for block in _blocks(graph):
        starts = [t for t in through if t in block]
        if len(block) < 3 or not starts:
            continue
        inner = {i: [j for j in graph[i] if j in block] for i in block}
        for n, start in enumerate(starts):
            if best >= len(block):
                break
            skip = set(starts[:n])  # cycles through earlier starts were already seen
            best = max(best, _longest_cycle_from(inner, start, skip))
    return best


def _longest_cycle_from(graph: dict[int, list[int]], start: int, skip: set[int]) -> int:
    best = 0
    on_path = {start} | skip

    def walk(node: int, length: int) -> None:
        nonlocal best
        for nxt in graph[node]:
            if nxt == start and length >= 3:
                best = max(best, length)
            elif nxt not in on_path:
                on_path.add(nxt)
                walk(nxt, length + 1)
                on_path.discard(nxt)

    walk(start, 1)
    return best


def _blocks(graph: dict[int, list[int]]) -> list[set[int]]:
    """The biconnected blocks of an undirected graph (Hopcroft-Tarjan)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[tuple[int, int]] = []
    blocks: list[set[int]] = []

    def visit(v: int, parent: int | None) -> None:
        index[v] = low[v] = len(index)
        for w in graph[v]:
            if w == parent:
                continue
            if w not in index:
                stack.append((v, w))
                visit(w, v)
                low[v] = min(low[v], low[w])
                if low[w] >= index[v]:
                    block = set()
                    while True:
                        a, b = stack.pop()
                        block |= {a, b}
                        if (a, b) == (v, w):
                            break
                    blocks.append(block)
            elif index[w] < index[v]:
                stack.append((v, w))
                low[v] = min(low[v], index[w])

    for v in graph:
        if v not in index:
            visit(v, None)
    return blocks


def dragon_scores(state: DragonsState, colour: str) -> list[tuple[int, bool]]:
    """Each dragon (connected region of ``colour``, tails included): the number of tiles
    it passes through, and whether it is closed (contains a loop)."""
    parent: dict = {}

    def find(a):
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    links = []
    for i, (q, r, o) in enumerate(state.tiles):
        for e in range(6):
            if edge_colours(o)[e] != colour:
                continue
            here = (i, regions(o)[e])
            find(here)
            j = state.at.get(neighbour((q, r), e))
            if j is not None and j > i:
                links.append((here, (j, regions(state.tiles[j][2])[(e + 3) % 6])))
    for a, b in links:
        parent[find(a)] = find(b)
    tiles: dict = {}
    nodes: dict = {}
    edges: dict = {}
    for node in list(parent):
        root = find(node)
        tiles.setdefault(root, set()).add(node[0])
        nodes[root] = nodes.get(root, 0) + 1
    for a, _ in links:
        edges[find(a)] = edges.get(find(a), 0) + 1
    return [(len(tiles[root]), edges.get(root, 0) >= nodes[root]) for root in tiles]


# -- the game -----------------------------------------------------------------------
