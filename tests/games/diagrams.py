"""Positions written the way the server draws them: rows of symbols, top row first."""


def board_from_rows(diagram: str, codes: dict[str, int]) -> tuple[int, tuple[int, ...]]:
    """(size, board) from a square diagram; index = y * size + x with y = 0 the bottom row."""
    rows = [line.split() for line in diagram.strip().split("\n")]
    size = len(rows)
    board = [0] * (size * size)
    for r, row in enumerate(rows):
        assert len(row) == size, f"row {r + 1} has {len(row)} points, not {size}"
        for x, symbol in enumerate(row):
            board[(size - 1 - r) * size + x] = codes[symbol]
    return size, tuple(board)
