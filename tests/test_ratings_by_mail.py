"""Ratings and challenge control by mail (issue 13): a finished game moves both
players' Glicko-2 ratings in the transaction that ends it; the final board mail
says how; `<game> standings` (or `ratings`) and `/standings/<game>` list them;
declined and cancelled games are not rated; a rebuild changes no rating;
`<game> accept|reject|limit` decide which challenges a player takes."""

import threading
import time
from contextlib import contextmanager

import pytest
import sqlalchemy as sa
from freezegun import freeze_time
from glicko2.math.algorithm import update_rating
from glicko2.math.conversions import mu_to_rating, phi_to_rd, rating_to_mu, rd_to_phi
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, Rating, RatingChange
from pbm.service import computer

from .browser import HAVE_CHROMIUM, PHONE, axe_source, axe_violations, fits_width
from .browser.fixtures import browsers, desktop, phone, site  # noqa: F401 (fixtures)
from .conftest import body, make_mail

ALICE, BOB, CAROL = "alice@players.test", "bob@players.test", "carol@players.test"
T0 = "2026-11-01 12:00:00"


def flat(mail) -> str:
    return " ".join(body(mail).split())


def latest_to(outbox, address):
    return outbox.to(address)[-1]


def reply(mailer, outbox, sender, text):
    """Answer the sender's latest board mail with ``text`` (replying is playing)."""
    tag = latest_to(outbox, sender)["Reply-To"].addresses[0].addr_spec
    return mailer.send(sender, "Re: your board", text, to=tag)


def play_and_resign(mailer, outbox, challenger, loser):
    """A Great Kingdom game challenged by ``challenger`` (first to move) that ``loser`` resigns."""
    result = mailer.send(challenger, f"greatkingdom challenge {challenger.split('@')[0]} "
                                     f"{(BOB if challenger == ALICE else ALICE).split('@')[0]}")
    assert result.status == "applied", result.error
    assert reply(mailer, outbox, loser, "resign").status == "applied"


def ratings_of(server, game="greatkingdom") -> dict[str, tuple]:
    from pbm.models import Player
    with reading(server.engine) as session:
        rows = session.exec(select(Rating, Player.userid).join(Player, Player.id == Rating.player_id)
                            .where(Rating.game == game)).all()
        return {userid: (r.rating, r.deviation, r.volatility, r.games, r.wins, r.losses, r.draws)
                for r, userid in rows}


def changes(server) -> list[tuple]:
    with reading(server.engine) as session:
        return [(c.board_id, c.player_id, c.rating_before, c.rating_after, c.games)
                for c in session.exec(select(RatingChange).order_by(RatingChange.id)).all()]


def test_the_rating_maths_is_glickmans_worked_example():
    """The library (glicko2-py) reproduces the example of Glickman's Glicko-2 paper:
    1500 ± 200 beats 1400 ± 30, loses to 1550 ± 100 and to 1700 ± 300."""
    games = [(rating_to_mu(r), rd_to_phi(d), s) for r, d, s in ((1400, 30, 1), (1550, 100, 0), (1700, 300, 0))]
    after = update_rating(rating_to_mu(1500), rd_to_phi(200), 0.06, games, 0.5)
    assert round(mu_to_rating(after.mu), 2) == 1464.05  # the paper rounds mid-way: 1464.06
    assert round(phi_to_rd(after.phi), 2) == 151.52
    assert after.sigma == pytest.approx(0.05999, abs=1e-5)  # the paper truncates 0.0599960


def test_a_resigned_game_moves_both_ratings_and_the_final_mail_says_how(server, players, outbox):
    play_and_resign(players, outbox, ALICE, BOB)
    for address in (ALICE, BOB):
        final = latest_to(outbox, address)
        assert final["Subject"] == "Great Kingdom Board 101 game over"
        text = body(final)
        assert "Ratings in Great Kingdom (? = provisional, fewer than 20 rated games):" in text
        # Two new players (1500 ± 350): the winner gains what the loser loses.
        assert "    alice 1500? -> 1662? (+162)" in text
        assert "    bob 1500? -> 1338? (-162)" in text
    alice, bob = ratings_of(server)["alice"], ratings_of(server)["bob"]
    assert alice[3:] == (1, 1, 0, 0) and bob[3:] == (1, 0, 1, 0)
    assert round(alice[1]) == round(bob[1]) == 290  # both are surer of their rating than before


def test_standings_by_mail_and_on_the_page_sorted_by_rating(server, players, outbox, client):
    assert players.send(CAROL, "signup carol carolpw").status == "applied"
    play_and_resign(players, outbox, ALICE, BOB)  # alice beats bob,
    play_and_resign(players, outbox, BOB, ALICE)  # bob beats alice,
    play_and_resign(players, outbox, ALICE, BOB)  # alice beats bob
    assert ratings_of(server)["alice"][0] > ratings_of(server)["bob"][0]
    for verb in ("standings", "ratings", "stand"):
        assert players.send(CAROL, f"greatkingdom {verb}").status == "applied"
        table = latest_to(outbox, CAROL)
        assert table["Subject"] == "Great Kingdom standings"
        lines = body(table).splitlines()
        alice = next(line for line in lines if " alice " in line)
        bob = next(line for line in lines if " bob " in line)
        assert lines.index(alice) < lines.index(bob)  # higher rating first
        assert alice.split()[0] == "1" and bob.split()[0] == "2"
        assert alice.split()[3:] == ["±", alice.split()[4], "3", "2", "1", "0"]  # games won lost drawn
        assert bob.split()[5:] == ["3", "1", "2", "0"]
        assert alice.split()[2].endswith("?")  # provisional: 3 games
        assert "carol" not in body(table)  # no rated game yet
        assert "http://pbm.test/standings/greatkingdom" in body(table)
    rating = ratings_of(server)["alice"]
    assert f"{rating[0]:.0f}? ± {rating[1]:.0f}" in body(table)

    page = client.get("/standings/greatkingdom")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "<h1>Great Kingdom standings</h1>" in html
    assert html.index('data-player="alice"') < html.index('data-player="bob"')
    assert f"<td data-label=\"Rating\">{rating[0]:.0f}?</td>" in html
    assert f"<td data-label=\"Deviation\">± {rating[1]:.0f}</td>" in html
    assert 'href="/standings/greatkingdom"' in client.get("/").get_data(as_text=True)  # linked from status
    empty = client.get("/standings/go").get_data(as_text=True)
    assert "No rated Go games yet." in empty


def test_a_game_name_in_capitals_finds_its_standings(players, outbox, client):
    """Game names are read without regard to case in mail; the page's address too."""
    page = client.get("/standings/GreatKingdom")
    assert page.status_code == 308 and page.headers["Location"].endswith("/standings/greatkingdom")


def test_an_unknown_game_has_no_standings(players, outbox, client):
    missing = client.get("/standings/chess")
    assert missing.status_code == 404
    assert "There is no game called &#34;chess&#34;; the games are dragons, go, greatkingdom" in \
        missing.get_data(as_text=True)
    refused = players.send(ALICE, "chess standings")
    assert refused.status == "rejected" and "\"chess\" is neither a command nor a game" in refused.error


def test_a_rating_is_provisional_for_its_first_20_games(server, players, outbox):
    with freeze_time(T0) as clock:
        for number in range(20):
            clock.tick(600)  # ten minutes a game keeps under the limit of new boards an hour
            play_and_resign(players, outbox, ALICE, BOB)
            text = body(latest_to(outbox, ALICE))
            movement = next(line for line in text.splitlines() if line.startswith("    alice "))
            before, after = movement.split()[1], movement.split()[3]
            assert before.endswith("?")  # at most 19 games before this one
            assert after.endswith("?") == (number < 19), movement
    assert ratings_of(server)["alice"][3:] == (20, 20, 0, 0)
    players.send(ALICE, "greatkingdom standings")
    alice = next(line for line in body(latest_to(outbox, ALICE)).splitlines() if " alice " in line)
    assert not alice.split()[2].endswith("?")
    bob = next(line for line in body(latest_to(outbox, ALICE)).splitlines() if " bob " in line)
    assert not bob.split()[2].endswith("?")


def test_declined_and_cancelled_games_are_not_rated(server, players, outbox):
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob")
        assert reply(players, outbox, BOB, "decline").status == "applied"
        assert "Ratings in" not in body(latest_to(outbox, ALICE))
        players.send(ALICE, "greatkingdom challenge alice bob --nagtime=1 --expiretime=2")  # board 102
        players.send(ALICE, "greatkingdom move 102 alice alicepw D4")  # bob never answers
    with freeze_time("2026-11-03 12:00:01"):
        assert server.expire_boards() == 1
    cancelled = latest_to(outbox, ALICE)
    assert "Game cancelled" in flat(cancelled) and "Ratings in" not in body(cancelled)
    assert ratings_of(server) == {} and changes(server) == []
    players.send(ALICE, "greatkingdom standings")
    assert "No rated Great Kingdom games yet." in body(latest_to(outbox, ALICE))


def test_forfeittime_is_the_expiry_and_a_forfeit_is_rated(server, players, outbox):
    """`--forfeittime=D` is pbmserv's name for `--expiretime=D`; the player who lets a
    started game expire loses it, rated."""
    with freeze_time(T0):
        players.send(ALICE, "greatkingdom challenge alice bob --forfeittime=2 --nagtime=1")
        players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
        players.send(BOB, "greatkingdom move 101 bob bobpw F6")  # alice never answers
    with freeze_time("2026-11-03 11:59:00"):
        assert server.expire_boards() == 0
    with freeze_time("2026-11-03 12:00:01"):
        assert server.expire_boards() == 1
    final = latest_to(outbox, BOB)
    assert "ran out of time" in flat(final)
    assert "bob 1500? -> 1662? (+162)" in body(final) and "alice 1500? -> 1338? (-162)" in body(final)


def test_a_rebuild_changes_no_rating(server, players, outbox):
    play_and_resign(players, outbox, ALICE, BOB)
    play_and_resign(players, outbox, BOB, ALICE)
    before_ratings, before_changes = ratings_of(server), changes(server)
    assert len(before_changes) == 4
    assert server.rebuild() == []
    assert server.rebuild() == []
    assert ratings_of(server) == before_ratings and changes(server) == before_changes


def test_a_game_against_the_computer_is_rated_and_the_computer_has_a_rating(server, players, outbox):
    assert players.send(ALICE, "greatkingdom challenge alice computer").status == "applied"
    assert reply(players, outbox, ALICE, "resign").status == "applied"
    assert computer.wait_idle(60)
    assert "computer 1500? -> 1662? (+162)" in body(latest_to(outbox, ALICE))
    assert ratings_of(server)["computer"][3:] == (1, 1, 0, 0)


def test_reject_refuses_every_challenge_to_that_game_until_accept(server, players, outbox):
    assert players.send(BOB, "greatkingdom reject bob bobpw").status == "applied"
    told = latest_to(outbox, BOB)
    assert told["Subject"] == "Great Kingdom challenges for bob"
    assert "bob takes no challenges to Great Kingdom" in flat(told) and "Once bob takes them again" not in flat(told)
    assert players.send(BOB, "greatkingdom limit bob bobpw 2").status == "applied"  # stored while refusing
    limited = flat(latest_to(outbox, BOB))
    assert "bob takes no challenges to Great Kingdom" in limited
    assert "Once bob takes them again, at most 2 active boards at a time." in limited
    assert players.send(BOB, "greatkingdom limit bob bobpw 0").status == "applied"  # no limit again
    refused = players.send(ALICE, "greatkingdom challenge alice bob")
    assert refused.status == "rejected"
    assert refused.error == "bob does not take challenges to Great Kingdom at the moment; no board was started."
    assert refused.error in flat(latest_to(outbox, ALICE))  # the sentence goes to the challenger
    assert players.send(ALICE, "go challenge alice bob").status == "applied"  # another game: taken
    assert players.send(BOB, "greatkingdom challenge bob alice").status == "applied"  # his own: never held back
    assert players.send(BOB, "greatkingdom accept bob bobpw").status == "applied"
    assert "bob takes challenges to Great Kingdom." in flat(latest_to(outbox, BOB))
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    with reading(server.engine) as session:
        assert [(b.id, b.game) for b in session.exec(select(Board).order_by(Board.id))] == [
            (101, "go"), (102, "greatkingdom"), (103, "greatkingdom")]


def test_limit_caps_the_active_boards_a_player_is_challenged_to(server, players, outbox):
    assert players.send(BOB, "greatkingdom limit bob bobpw 1").status == "applied"
    assert "bob takes challenges to Great Kingdom, up to 1 active board at a time." in flat(latest_to(outbox, BOB))
    assert "bob plays 0 active Great Kingdom boards now." in flat(latest_to(outbox, BOB))
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    refused = players.send(ALICE, "greatkingdom challenge alice bob")
    assert refused.status == "rejected"
    assert refused.error == ("bob already plays 1 active Great Kingdom board, the most they take at a time; "
                             "no board was started.")
    assert reply(players, outbox, BOB, "resign").status == "applied"  # board 101 is over: room again
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    assert players.send(BOB, "greatkingdom limit bob bobpw 0").status == "applied"  # 0: no limit
    assert "bob takes challenges to Great Kingdom." in flat(latest_to(outbox, BOB))
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    with reading(server.engine) as session:
        assert len(session.exec(select(Board)).all()) == 3


@contextmanager
def slow_board_counts(server):
    """Within the block, every count of a player's active boards pauses 0.3 s after the
    query (a real pause in the database driver's path): the window in which another
    challenge could count the same boards, or take the next lock."""
    def pause(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().lower().startswith("select count") and "board.status" in statement:
            time.sleep(0.3)

    sa.event.listen(server.engine, "after_cursor_execute", pause)
    try:
        yield
    finally:
        sa.event.remove(server.engine, "after_cursor_execute", pause)


def at_once(app, mails: dict[str, tuple[str, str, str]]) -> dict[str, dict]:
    """Post each (sender, subject, body) to the webhook from its own thread, all at the
    same moment; the JSON answers by key."""
    barrier = threading.Barrier(len(mails))
    answers = {}

    def post(key, sender, subject, text):
        raw = make_mail(sender, subject, text)
        client = app.test_client()
        barrier.wait()
        answers[key] = client.post("/inbound/email", data=raw, content_type="message/rfc822").get_json()

    threads = [threading.Thread(target=post, args=(key, *mail)) for key, mail in mails.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_challenges_arriving_at_once_never_pass_the_limit(app, server, players, outbox):
    """Four challenges to bob, who takes one active board, reach the webhook at the same
    moment. Without the lock on bob's row every challenge would count 0 boards and start
    one on PostgreSQL; with it exactly one board starts (SQLite writes one transaction
    at a time: the lane checks the same answer)."""
    challengers = ["carol", "dave", "erin", "fred"]
    for name in challengers:
        assert players.send(f"{name}@players.test", f"signup {name} {name}pw").status == "applied"
    assert players.send(BOB, "greatkingdom limit bob bobpw 1").status == "applied"
    with slow_board_counts(server):
        answers = at_once(app, {name: (f"{name}@players.test", f"greatkingdom challenge {name} bob", "")
                                for name in challengers})
    statuses = sorted(answer["status"] for answer in answers.values())
    assert statuses == ["applied", "rejected", "rejected", "rejected"], answers
    with reading(server.engine) as session:
        assert len(session.exec(select(Board)).all()) == 1
    refused = [name for name, answer in answers.items() if answer["status"] == "rejected"]
    for name in refused:
        assert ("bob already plays 1 active Great Kingdom board, the most they take at a time; no board was "
                "started.") in flat(latest_to(outbox, f"{name}@players.test"))


def test_two_mails_locking_two_players_in_opposite_order_both_go_through(app, server, players, outbox):
    """alice challenges bob, then carol; dave carol, then bob, in one mail each, at the
    same moment: on PostgreSQL each holds one player's row and waits for the other's,
    a deadlock the database breaks by rolling one mail back. That mail is run again
    (as after a version conflict), so both are answered and all four boards start."""
    for name in ("carol", "dave"):
        assert players.send(f"{name}@players.test", f"signup {name} {name}pw").status == "applied"
    for name in ("bob", "carol"):
        assert players.send(f"{name}@players.test", f"greatkingdom limit {name} {name}pw 5").status == "applied"
    with slow_board_counts(server):
        answers = at_once(app, {
            "alice": (ALICE, "multiple", "greatkingdom challenge alice bob\ngreatkingdom challenge alice carol\n"),
            "dave": ("dave@players.test", "multiple",
                     "greatkingdom challenge dave carol\ngreatkingdom challenge dave bob\n")})
    assert [answers[key]["status"] for key in ("alice", "dave")] == ["applied", "applied"], answers
    with reading(server.engine) as session:
        assert len(session.exec(select(Board)).all()) == 4


@pytest.mark.parametrize("line, sentence", [
    ("greatkingdom reject bob wrongpw", "The password for bob is wrong."),
    ("greatkingdom limit bob bobpw many", "\"many\" is not a number of boards from 0 (no limit) to 1000."),
    ("greatkingdom accept bob", "The accept command needs more words than that."),
])
def test_challenge_control_refuses_bad_commands_and_changes_nothing(server, players, outbox, line, sentence):
    refused = players.send(BOB, line)
    assert refused.status == "rejected" and refused.error == sentence
    assert sentence in flat(latest_to(outbox, BOB))
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"


def test_help_lists_standings_and_challenge_control(players, outbox):
    players.send(ALICE, "help")
    text = flat(latest_to(outbox, ALICE))
    assert "<game> standings (or <game> ratings)" in text
    assert "<game> reject <userid> <password> refuse all challenges to it" in text
    assert "<game> limit <userid> <password> <n> at most n active boards of that game (0: no limit)" in text


def test_two_games_ending_at_once_both_count(server, players, outbox):
    """Two of alice's boards end in concurrent transactions: neither rating update is
    lost (the second waits for the first's locked rating rows and builds on them)."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(CAROL, "signup carol carolpw")
    players.send(ALICE, "greatkingdom challenge alice carol")
    with reading(server.engine) as session:
        tokens = [session.get(Board, board_id).token0 for board_id in (101, 102)]  # alice's seats
    results = []
    threads = [threading.Thread(target=lambda t=t: results.append(server.play_by_token(t, "resign")))
               for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.status.value for r in results] == ["applied", "applied"], [r.error for r in results]
    assert ratings_of(server)["alice"][3:] == (2, 0, 2, 0)
    with reading(server.engine) as session:
        alice = [c for c in session.exec(select(RatingChange).order_by(RatingChange.games))
                 if c.score == 0.0]
    assert [c.games for c in alice] == [1, 2]
    assert alice[1].rating_before == alice[0].rating_after  # the second game built on the first
    assert ratings_of(server)["alice"][0] == alice[1].rating_after


@pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed")
def test_the_standings_page_passes_axe_and_fits_a_phone(site, desktop, phone):
    board = site.board("greatkingdom")
    site.play(board, "resign")  # alice resigns: bob 1662?, alice 1338?
    url = site.base + "/standings/greatkingdom"
    desktop.get(url)
    assert [row.get_attribute("data-player") for row in desktop.find_elements("css selector", "tr[data-player]")
            ][:2] == ["bob", "alice"]
    assert axe_violations(desktop, axe_source()) == []
    phone.get(url)
    scroll_width, inner_width = fits_width(phone)
    assert inner_width == PHONE[0] and scroll_width <= inner_width


def test_a_game_started_in_the_browser_is_not_rated(server, client, outbox):
    """Browser seats (/new) are anonymous: their games move no rating."""
    started = client.post("/new", data={"game": "greatkingdom", "mode": "same-device"})
    assert started.status_code == 303
    token = started.headers["Location"].rsplit("/", 1)[1]
    assert server.play_by_token(token, "resign").status.value == "applied"
    with reading(server.engine) as session:
        assert session.exec(select(Board)).one().status == "finished"
    assert ratings_of(server) == {} and changes(server) == []
