"""The Go help text (rules, notation, an example board), for ``Go.help_text``, in
English and in German (whose wording follows seed 003, "Go zu zweit")."""

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
    done       confirm the current marking, once (a new mark clears
               confirmations)
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

# The same in German (the help mail of a player whose language is de).
HELP_DE = """\
GO

Zwei Spieler, Schwarz (beginnt) und Weiß, setzen Steine auf die
Schnittpunkte eines 9x9-Bretts (Optionen -size=13 oder -size=19). Weiß
erhält 7,5 Punkte Komi (Option -komi=K, halbe Punkte erlaubt). Es gibt
keine Vorgabesteine.

Waagerecht oder senkrecht verbundene Steine bilden Gruppen, angrenzende
freie Schnittpunkte sind Freiheiten. Ohne Freiheiten wird eine Gruppe
gefangen: ein Zug, der gegnerische Gruppen ohne Freiheit lässt, nimmt sie
vom Brett. Selbstmord ist verboten, wenn die eigene Gruppe nach dem
Schlagen keine Freiheit hat. Positionelles Superko verbietet jede frühere
Brettstellung der Partie; Passen ist immer erlaubt.

Zweimal Passen öffnet die Auswertung. Jeder Spieler kann:
    mark D4    die ganze Gruppe auf D4 als tot markieren (oder wieder
               als lebend)
    done       den Stand bestätigen, einmal (neue Markierungen löschen
               Bestätigungen)
    resume     die Markierungen aufheben und weiterspielen; es zieht,
               wer nicht zuletzt gepasst hat
Bestätigen beide denselben Stand, werden die toten Steine entfernt, und es
gilt die Flächenzählung: lebende Steine plus ausschließlich eigenfarbig
umschlossene leere Punkte, dazu das Komi für Weiß. Gefangene zählen nicht
zusätzlich; gemeinsame Gebiete bleiben neutral. Ergebnisse lauten etwa
W+2.5. Aufgeben (resign) geht jederzeit, auch in der Auswertung. Nach einer
Partie startet "newround" von beiden Spielern ein neues Brett mit denselben
Spielern, Farben, Größe und Komi.

Notation: ein Punkt, Spaltenbuchstabe und Zeilennummer (D4; die Spalten
überspringen I), oder pass, resign, mark D4, done, resume. Per Mail:
    go move 101 alice secret D4
oder antworte auf eine Brett-Mail nur mit: D4

Im Diagramm ist X Schwarz, O Weiß, (X) der letzte Zug, + ein Sternpunkt,
x/o in der Auswertung als tot markierte Steine. Beispiel:

{diagram}
"""
