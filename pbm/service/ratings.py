"""Ratings: one Glicko-2 rating per player per game, moved when a rated game ends.

``game_over`` is called by ``boards.append`` in the transaction that ends a
board, so a game's result and its rating changes commit together. Each change
is kept as a ``RatingChange`` row whose unique key (board, player) makes a second
count of one game impossible; ``Rating`` holds the current values. ``pbm db
rebuild`` replays move logs only and leaves both alone.

Each rated game is one Glicko-2 rating period for its two players (as OGS
updates after every game), both updated from their ratings before the game;
no time-based widening of the deviation between games. The maths is the
``glicko2-py`` package's ``update_rating`` (Glickman's 2012 algorithm).
"""

from __future__ import annotations

from dataclasses import dataclass

from glicko2.math.algorithm import update_rating
from glicko2.math.conversions import mu_to_rating, phi_to_rd, rating_to_mu, rd_to_phi
from sqlalchemy import func
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, select

from ..games import Outcome
from ..models import Board, Player, Rating, RatingChange
from .unit import Unit

INITIAL_RATING = 1500.0
INITIAL_DEVIATION = 350.0
INITIAL_VOLATILITY = 0.06
TAU = 0.5  # Glicko-2's system constant: how fast volatility may change (Glickman: 0.3 to 1.2)
PROVISIONAL_GAMES = 20  # a rating is provisional ("?") until this many rated games of the game
UNRATED_ENDINGS = ("cancellation", "expiry")  # declined, expired before both moved, scoring unfinished
MAX_STANDINGS = 200  # players a standings mail or page lists (the highest rated)


def is_rated(board: Board, outcome: Outcome) -> bool:
    """Whether this ending moves ratings: a game between players (not one started in
    the browser, whose seats are anonymous) that someone won or that was drawn."""
    return board.room_id is None and outcome.kind not in UNRATED_ENDINGS


def game_over(unit: Unit, board: Board, outcome: Outcome) -> None:
    """Rate the board that has just ended with ``outcome`` (nothing when it is unrated
    or was rated before). The two players' rating rows are locked, in id order."""
    if not is_rated(board, outcome) or unit.session.exec(
            select(RatingChange.id).where(RatingChange.board_id == board.id)).first() is not None:
        return
    ratings = _locked(unit, board.game, (board.seat0_id, board.seat1_id))
    scores = (0.5, 0.5) if outcome.winner is None else (1.0 - outcome.winner, float(outcome.winner))
    before = [(r.rating, r.deviation) for r in ratings]
    for seat, rating in enumerate(ratings):
        score, (opponent_rating, opponent_deviation) = scores[seat], before[1 - seat]
        mu, phi, sigma = update_rating(
            rating_to_mu(rating.rating), rd_to_phi(rating.deviation), rating.volatility,
            [(rating_to_mu(opponent_rating), rd_to_phi(opponent_deviation), score)], TAU)
        unit.session.add(RatingChange(
            board_id=board.id, player_id=rating.player_id, game=board.game, score=score,
            rating_before=rating.rating, deviation_before=rating.deviation, rating_after=mu_to_rating(mu),
            deviation_after=phi_to_rd(phi), volatility_after=sigma, games=rating.games + 1, created_at=unit.now))
        rating.rating, rating.deviation, rating.volatility = mu_to_rating(mu), phi_to_rd(phi), sigma
        rating.games += 1
        rating.wins += score == 1.0
        rating.losses += score == 0.0
        rating.draws += score == 0.5
        rating.updated_at = unit.now
        unit.session.add(rating)
    unit.session.flush()


def _locked(unit: Unit, game: str, player_ids: tuple[int, int]) -> list[Rating]:
    """Both players' ratings in ``game`` (made at the initial values when missing),
    locked for this transaction, in seat order. Rows are created with ON CONFLICT
    DO NOTHING so two games ending at once cannot both insert one; rows are always
    written and locked in player id order, so two such games wait, never deadlock."""
    session = unit.session
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    session.execute(insert(Rating).values([
        {"player_id": player_id, "game": game, "rating": INITIAL_RATING, "deviation": INITIAL_DEVIATION,
         "volatility": INITIAL_VOLATILITY, "games": 0, "wins": 0, "losses": 0, "draws": 0,
         "updated_at": unit.now} for player_id in sorted(player_ids)]).on_conflict_do_nothing())
    rows = session.exec(select(Rating).where(Rating.game == game, Rating.player_id.in_(player_ids))
                        .order_by(Rating.player_id).with_for_update().execution_options(populate_existing=True)).all()
    by_player = {row.player_id: row for row in rows}
    return [by_player[player_id] for player_id in player_ids]


def shown(rating: float, games: int) -> str:
    """A rating as players read it: whole points, ``?`` while provisional."""
    return f"{rating:.0f}{'?' if games < PROVISIONAL_GAMES else ''}"


@dataclass(frozen=True)
class Movement:
    """How one player's rating moved in one game, for the final board mail."""

    userid: str
    change: RatingChange

    def line(self) -> str:
        """``alice 1500? -> 1562? (+62)``"""
        c = self.change
        difference = round(c.rating_after) - round(c.rating_before)
        return (f"{self.userid} {shown(c.rating_before, c.games - 1)} -> {shown(c.rating_after, c.games)} "
                f"({difference:+d})")


def movements(session: Session, board: Board, players: tuple[Player, Player]) -> list[Movement]:
    """The rating changes a finished board caused, in seat order (none when unrated)."""
    changes = {c.player_id: c for c in session.exec(
        select(RatingChange).where(RatingChange.board_id == board.id)).all()}
    return [Movement(p.userid, changes[p.id]) for p in players if p.id in changes]


@dataclass(frozen=True)
class Standing:
    """One line of a game's rating table."""

    rank: int
    userid: str
    rating: Rating

    @property
    def provisional(self) -> bool:
        return self.rating.games < PROVISIONAL_GAMES

    @property
    def shown(self) -> str:
        return shown(self.rating.rating, self.rating.games)

    @property
    def deviation(self) -> str:
        return f"{self.rating.deviation:.0f}"


def standings(session: Session, game: str) -> tuple[list[Standing], int]:
    """The game's rated players, highest rating first (at most MAX_STANDINGS), and
    how many there are in all."""
    query = (select(Rating, Player.userid).join(Player, Player.id == Rating.player_id)
             .where(Rating.game == game, Rating.games > 0))
    rows = session.exec(query.order_by(Rating.rating.desc(), Player.userid).limit(MAX_STANDINGS)).all()
    total = len(rows) if len(rows) < MAX_STANDINGS else session.exec(
        select(func.count()).select_from(Rating).where(Rating.game == game, Rating.games > 0)).one()
    return [Standing(rank, userid, rating) for rank, (rating, userid) in enumerate(rows, 1)], total
