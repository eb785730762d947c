"""The Dragons help text (rules, notation, the orientations), for
``Dragons.help_text``, in English and in German."""

HELP = """\
DRAGONS

Two players, O (moves first) and X, share a pool of hexagonal tiles (50;
option -num_tiles=N) and take turns adding one tile next to the tiles on
the board, so that every edge it shares with a tile has that tile's colour.
The server places tile 1 (F0) in the centre. Each tile has two faces:
the front ("shoulders": three O edges and three X edges, each colour one
region) and the back ("tails": colours alternate; a band of each colour
joins two edges, the third edge of each colour is a dead-end tail). The
12 ways to lay a tile, turned clockwise 60 degrees at a time:

{orientations}

Cells: tiles are numbered in the order they are placed; a cell is named
from a neighbouring tile and a direction (n ne se s sw nw), so 7ne is the
cell on the north-east side of tile 7. A cell has one name per tiled
neighbour; all are accepted, the lowest number is shown.

Move: <cell>:<orientation>, for example 7ne:B2 (lenient: 7NE B2, 7ne-b2).

Auto moves: a gap is an empty cell with three or more tiled neighbours.
When a gap fits exactly one orientation, that tile is placed for you, again
and again (the gap with the smallest name first: lowest tile number, then
n ne se s sw nw) until no gap fits exactly one; these auto moves are part
of your move and are listed as (Auto) after it. A gap that nothing fits
stays empty.

Gap moves: while any gap fits two or more orientations, you must fill one
of those gaps (they are marked * on the board).

Winning: a loop of your colour through 6 or more tiles, checked after the
whole move (auto moves included; an auto move can close your opponent's
loop!). If both colours close winning loops, the longer wins; equal loops
draw. When the pool runs out with no winning loop, the game is drawn.

Tantrix scoring (option -tantrix, pool 40): loops do not end the game.
When the pool is empty each player's best dragon (connected region of
their colour) scores 1 point per tile it passes through, doubled if it is
closed (contains a loop). Higher score wins; equal scores draw.

Example: after O's first move 1ne:F5 (playable cells are listed on
"dragons show <board>" and on the web):

{diagram}
"""

# The same in German (the help mail of a player whose language is de).
HELP_DE = """\
DRAGONS

Zwei Spieler, O (beginnt) und X, teilen sich einen Vorrat sechseckiger
Plättchen (50; Option -num_tiles=N) und legen abwechselnd ein Plättchen
neben die Plättchen auf dem Brett, so dass jede Kante, die es mit einem
Plättchen teilt, dessen Farbe hat. Der Server legt Plättchen 1 (F0) in die
Mitte. Jedes Plättchen hat zwei Seiten: die Vorderseite ("Schultern": drei
O-Kanten und drei X-Kanten, jede Farbe eine zusammenhängende Fläche) und
die Rückseite ("Schwänze": die Farben wechseln sich ab; ein Band jeder
Farbe verbindet zwei Kanten, die dritte Kante jeder Farbe ist ein
Sackgassen-Schwanz). Die 12 Arten, ein Plättchen zu legen, jeweils um 60
Grad im Uhrzeigersinn weitergedreht:

{orientations}

Zellen: Plättchen werden in der Reihenfolge des Legens nummeriert; eine
Zelle wird nach einem benachbarten Plättchen und einer Richtung (n ne se s
sw nw) benannt, 7ne ist also die Zelle an der Nordostseite von Plättchen 7.
Eine Zelle hat einen Namen je belegtem Nachbarn; alle werden angenommen,
angezeigt wird der mit der kleinsten Nummer.

Zug: <Zelle>:<Ausrichtung>, zum Beispiel 7ne:B2 (auch 7NE B2, 7ne-b2).

Automatische Züge: eine Lücke ist eine leere Zelle mit drei oder mehr
belegten Nachbarn. Passt in eine Lücke genau eine Ausrichtung, wird dieses
Plättchen für dich gelegt, immer wieder (die Lücke mit dem kleinsten Namen
zuerst: kleinste Plättchennummer, dann n ne se s sw nw), bis keine Lücke
mehr genau eine Ausrichtung zulässt; diese automatischen Züge gehören zu
deinem Zug und stehen danach als (Auto). Eine Lücke, in die nichts passt,
bleibt leer.

Lückenzüge: solange eine Lücke zwei oder mehr Ausrichtungen zulässt, musst
du eine dieser Lücken füllen (sie sind auf dem Brett mit * markiert).

Gewinnen: eine Schleife deiner Farbe durch 6 oder mehr Plättchen, geprüft
nach dem ganzen Zug (automatische Züge eingeschlossen; ein automatischer
Zug kann die Schleife des Gegners schließen!). Schließen beide Farben
Gewinnschleifen, gewinnt die längere; gleich lange ergeben Unentschieden.
Ist der Vorrat ohne Gewinnschleife aufgebraucht, endet die Partie
unentschieden.

Tantrix-Wertung (Option -tantrix, Vorrat 40): Schleifen beenden die Partie
nicht. Ist der Vorrat leer, zählt der beste Drache jedes Spielers
(zusammenhängende Fläche seiner Farbe) 1 Punkt je Plättchen, durch das er
läuft, doppelt, wenn er geschlossen ist (eine Schleife enthält). Die
höhere Wertung gewinnt; gleiche Wertungen ergeben Unentschieden.

Beispiel: nach dem ersten Zug 1ne:F5 von O (die spielbaren Zellen stehen
bei "dragons show <board>" und im Web):

{diagram}
"""
