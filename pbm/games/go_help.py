"""The Go help text (rules, notation, an example board), for ``Go.help_text``."""

HELP = """\
GO

Two players, Black (moves first) and White, place stones on the points of
a 9x9 board (options -size=13 or -size=19). White receives 7.5 points komi
(option -komi=K, half points allowed). There are no handicap stones.

Orthogonally connected stones form a group; its liberties are the empty
points next to it. A move that leaves enemy groups without liberties
captures them. Suicide is illegal: after captures your own group must have
a liberty. Positional superko: no move may recreate any earlier board
position of the game. Passing is always allowed.

Two passes in a row open the scoring. Either player may:
    mark D4    toggle the whole group at D4 between dead and alive
    done       confirm the current marking (a new mark clears confirmations)
    resume     clear the marks and play on; the player who did not pass
               last moves next
When both players have confirmed the same marking, dead stones are removed
and the game is scored by area: stones plus empty points surrounded only
by your stones. Prisoners do not count; White adds komi. Results read like
W+2.5. Resigning is possible at any time, during scoring too. After a game,
both players sending "newround" starts a fresh board with the same players,
colours, size and komi.

Notation: a point, column letter then row number (D4; columns skip I), or
pass, resign, mark D4, done, resume. By mail:
    go move 101 alice secret D4
or reply to a board mail with just: D4

In the diagram X is Black, O is White, (X) the last move, + a star point.
From the scoring on, x/o are stones marked dead, and b/w the empty points
of Black's/White's area (dead stones' points count for the side around
them). Example:

{diagram}
"""
