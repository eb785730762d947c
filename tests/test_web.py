"""The web side through the test client: pages, the play form and its helper
routes, what each page offers each seat, the player's boards, security headers,
webhook authentication and limits."""

import hashlib
import hmac
import html
import json
import re
import time
import uuid
import xml.etree.ElementTree as ET

import pytest
from sqlmodel import select

from pbm.db import reading
from pbm.games import REGISTRY
from pbm.models import Board, MoveRecord

from .conftest import make_mail

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture
def game(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4", "<script>alert('x')</script> & hi")
    return players


def token(server, seat, board=101):
    with reading(server.engine) as s:
        return s.get(Board, board).token(seat)


def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)


def svg_of(page: str) -> ET.Element:
    """The board picture of a page, parsed (it must be well-formed XML)."""
    return ET.fromstring(re.search(r'<svg xmlns="http://www.w3.org/2000/svg".*?</svg>', page, re.S).group(0))


def hooks(svg: ET.Element, name: str) -> list[str]:
    return [e.get(name) for e in svg.iter() if e.get(name) is not None]


def post_move(client, play_token, move, number=None, comment=""):
    page = client.get(f"/play/{play_token}").get_data(as_text=True)
    data = {"csrf": csrf_of(page), "move": move, "comment": comment}
    if number is not None:
        data["number"] = str(number)
    return client.post(f"/play/{play_token}", data=data)


# -- pages ----------------------------------------------------------------------


def test_status_page_of_a_new_server_says_there_are_no_boards(client):
    assert "No boards yet." in client.get("/").get_data(as_text=True)


def test_status_page_lists_boards_and_filters(client, game):
    page = client.get("/").get_data(as_text=True)
    assert ">101</a>" in page and "alice vs bob" in page and "Great Kingdom" in page
    assert '<td data-label="Turn">bob</td>' in page  # bob is to move; the label heads it on phones
    assert "No boards match these filters." in client.get("/?game=go").get_data(as_text=True)
    assert "No boards match these filters." in client.get("/?player=nobody").get_data(as_text=True)
    assert "alice vs bob" in client.get("/?player=bob").get_data(as_text=True)
    assert '<option value="greatkingdom" >Great Kingdom</option>' in page  # the filter names games as the table
    escaped = client.get("/?player=<b>x</b>").get_data(as_text=True)
    assert "<b>x</b>" not in escaped and "&lt;b&gt;x&lt;/b&gt;" in escaped


def test_status_page_lists_its_boards_a_page_at_a_time_and_says_which(client, server, players, monkeypatch):
    from pbm.web import pages

    monkeypatch.setattr(pages, "STATUS_PAGE_SIZE", 2)  # small enough to reach in a few boards
    for _ in range(5):
        players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "twotigers challenge alice bob")
    first = client.get("/?game=greatkingdom&player=bob").get_data(as_text=True)
    assert re.findall(r'<a href="/games/(\d+)">', first) == ["105", "104"]  # the latest first
    assert "Boards 1 to 2 of 5." in first
    assert '<a href="/?game=greatkingdom&amp;player=bob&amp;page=2" rel="next">Next page</a>' in first
    assert 'rel="prev"' not in first
    last = client.get("/?game=greatkingdom&player=bob&page=3").get_data(as_text=True)
    assert re.findall(r'<a href="/games/(\d+)">', last) == ["101"] and "Boards 5 to 5 of 5." in last
    assert '<a href="/?game=greatkingdom&amp;player=bob&amp;page=2" rel="prev">Previous page</a>' in last
    assert 'rel="next"' not in last
    for asked in ("4", "0", "x"):
        refused = client.get(f"/?game=greatkingdom&page={asked}")
        assert refused.status_code == 400 and "?page= needs a page number from 1 to 3." in html.unescape(
            refused.get_data(as_text=True))
    one_page = client.get("/?game=twotigers").get_data(as_text=True)
    assert re.findall(r'<a href="/games/(\d+)">', one_page) == ["106"] and "Boards 1 to" not in one_page
    assert "Next page" not in one_page


def test_board_page_draws_the_board_and_keeps_the_text(client, server, game):
    page = client.get("/games/101").get_data(as_text=True)
    svg = svg_of(page)
    assert svg.get("class") == "board greatkingdom" and svg.get("data-move-number") == "1"
    assert len(hooks(svg, "data-point")) == 81  # the points are named, but a public page plays nothing:
    assert "data-targets" not in page and "data-move-form" not in page  # no moves for its script to send
    assert re.search(r'<strong data-status>It is bob&#39;s turn \(Orange\).</strong>', page)
    assert "  4  .  .  . (B) .  .  .  .  .  4" in page  # the mails' diagram, under "as text"
    assert "<script>alert" not in page and "(a comment for the players)" in page  # its text: players only
    players_page = client.get(f"/play/{token(server, 1)}").get_data(as_text=True)
    assert "<script>alert" not in players_page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; hi" in players_page
    start = client.get("/games/101?move=0").get_data(as_text=True)
    assert "Position after move 0 of 1." in start and svg_of(start).get("data-move-number") == "0"
    assert 'data-history-step="next" aria-keyshortcuts="ArrowRight">Next</a>' in start
    assert 'href="/games/101" data-history-step="last"' in start
    assert '<span class="off">Previous</span>' in start
    assert 'type="range" id="move-slider" name="move" min="0" max="1" value="0"' in start
    assert client.get("/games/101?move=5").status_code == 400
    assert client.get("/games/101?move=abc").status_code == 400
    assert client.get("/games/999").status_code == 404
    assert client.get(f"/games/{10**12}").status_code == 404


def test_board_as_text_json_and_live_part(client, game, server):
    text = client.get("/games/101.txt")
    assert text.mimetype == "text/plain"
    assert "Great Kingdom Board 101: alice (Blue) vs bob (Orange)" in text.get_data(as_text=True)
    data = client.get("/games/101.json").json
    assert data["board"] == 101 and data["to_move"] == "bob" and data["move"] == 1
    with reading(server.engine) as s:  # each move with the time its log entry was made
        made = s.exec(select(MoveRecord.created_at).where(MoveRecord.number == 1)).one()
    assert [(m["number"], m["at"]) for m in data["moves"]] == [(1, made.isoformat())]
    assert client.get("/games/101.json?move=0").json["state"]["turn"] == 0
    fragment = client.get("/games/101/live?move=0").get_data(as_text=True)
    assert "<html" not in fragment and svg_of(fragment).get("data-move-number") == "0"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_game_renders_on_every_page(name, players, client, server):
    from pbm.games import get_game

    players.send(ALICE, f"{name} challenge alice bob")
    game = get_game(name)
    first = game.legal_moves(game.initial_state(game.parse_options({})))[-1]
    assert players.send(ALICE, f"{name} move 101 alice alicepw {game.format_move(first)}").status == "applied"
    bob = token(server, 1)
    for path in ("/", "/games/101", "/games/101?move=0", "/games/101.txt", "/games/101.json", "/games/101/live",
                 f"/play/{bob}", f"/play/{bob}/live", f"/play/{token(server, 0)}"):
        assert client.get(path).status_code == 200, path
    play = client.get(f"/play/{bob}").get_data(as_text=True)
    svg = svg_of(play)
    assert svg.get("data-move-number") == "1"
    assert hooks(svg, "data-cell" if name == "dragons" else "data-point")
    assert 'data-targets=\'{"' in play and "data-move-form" in play
    waiting_page = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    waiting = svg_of(waiting_page)
    assert hooks(waiting, "data-cell") == [] and "data-targets" not in waiting_page
    assert hooks(waiting, "data-point") == hooks(svg, "data-point")  # named on every picture (none in Dragons)


# -- the play page ----------------------------------------------------------------


def test_play_page_form_makes_a_move_and_then_offers_no_form(client, server, game, outbox):
    bob = token(server, 1)
    page = client.get(f"/play/{bob}").get_data(as_text=True)
    assert "autofocus" not in page
    before = len(outbox.all())
    response = post_move(client, bob, "f6", 2, "from the web")
    assert response.status_code == 303 and response.headers["Location"] == f"/play/{bob}"
    mails = outbox.all()[before:]
    assert len(mails) == 2 and all(m["Subject"] == "Great Kingdom Board 101 alice" for m in mails)
    moves = client.get("/games/101.json").json["moves"]
    assert (moves[1]["move"], moves[1]["player"], moves[1]["commented"]) == ("F6", "bob", True)
    assert "from the web" not in client.get("/games/101.json").get_data(as_text=True)  # for the players only
    after = client.get(f"/play/{bob}").get_data(as_text=True)
    assert "data-move-form" not in after and "It is your opponent's move" in after
    assert '<button type="submit" name="ask" value="resign" data-action="resign">' in after  # asks once more
    assert 'data-action="pass"' not in after  # passing is for the seat to move


def test_resign_without_the_script_asks_once_more_on_a_page_of_its_own(client, server, game):
    import re

    bob = token(server, 1)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get(f"/play/{bob}").get_data(as_text=True))[1]
    asked = client.post(f"/play/{bob}", data={"csrf": csrf, "number": "2", "ask": "resign"})
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Resign this game? It cannot be taken back." in page
    assert '<button type="submit" name="move" value="resign">Yes, resign</button>' in page
    assert client.get("/games/101.json").json["status"] == "active"  # nothing was sent yet
    resigned = client.post(f"/play/{bob}", data={"csrf": csrf, "number": "2", "move": "resign"})
    assert resigned.status_code == 303
    assert "Orange resigned" in client.get(f"/play/{bob}").get_data(as_text=True)


def test_play_page_explains_an_illegal_move_and_keeps_what_was_typed(client, server, game):
    bob = token(server, 1)
    empty = post_move(client, bob, "  ", 2)
    assert empty.status_code == 400 and "Write a move in the box first." in empty.get_data(as_text=True)
    response = post_move(client, bob, "E5", 2, "my <b>comment</b>")
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "E5 holds the neutral castle" in page
    assert 'name="move" value="E5"' in page
    assert ">my &lt;b&gt;comment&lt;/b&gt;</textarea>" in page
    not_yours = post_move(client, token(server, 0), "A1")
    assert not_yours.status_code == 422 and "It is not your turn" in not_yours.get_data(as_text=True)
    assert client.get("/games/101.json").json["move"] == 1


def test_a_form_sent_twice_says_already_played(client, server, game):
    bob = token(server, 1)
    page = client.get(f"/play/{bob}").get_data(as_text=True)
    form = {"csrf": csrf_of(page), "move": "f6", "number": "2", "comment": ""}
    assert client.post(f"/play/{bob}", data=form).status_code == 303
    again = client.post(f"/play/{bob}", data=form)
    text = again.get_data(as_text=True)
    assert again.status_code == 200
    assert "Your move F6 was already played (move 2); it was not sent twice." in text
    assert "the board changed since you looked" not in text
    assert client.get("/games/101.json").json["move"] == 2
    stale = client.post(f"/play/{bob}", data={**form, "move": "g7"})  # a different move, too late
    assert stale.status_code == 422 and "the board changed since you looked" in stale.get_data(as_text=True)


def test_a_form_with_an_abbreviated_word_move_sent_twice_says_already_played(client, server, game):
    """``pas`` is ``pass``: sent again, it is the move already played, not a stale form."""
    bob = token(server, 1)
    form = {"csrf": csrf_of(client.get(f"/play/{bob}").get_data(as_text=True)), "move": "pas", "number": "2"}
    assert client.post(f"/play/{bob}", data=form).status_code == 303
    again = client.post(f"/play/{bob}", data=form)
    assert again.status_code == 200
    assert "Your move pass was already played (move 2); it was not sent twice." in again.get_data(as_text=True)
    assert client.get("/games/101.json").json["move"] == 2


def test_an_accept_sent_twice_says_already_played(client, server, game):
    """An accepted take-back or draw is logged as ``undo N`` or ``draw``: the same
    Accept form sent again is that answer, not a board that changed meanwhile."""
    bob = token(server, 1)
    assert post_move(client, bob, "F6", 2).status_code == 303
    assert post_move(client, token(server, 0), "undo").status_code == 303  # alice asks to take back D4
    form = {"csrf": csrf_of(client.get(f"/play/{bob}").get_data(as_text=True)), "move": "accept", "number": "3"}
    assert client.post(f"/play/{bob}", data=form).status_code == 303
    again = client.post(f"/play/{bob}", data=form)
    text = html.unescape(again.get_data(as_text=True))
    assert again.status_code == 200
    assert "Your move accept was already played (move 3); it was not sent twice." in text
    assert "the board changed since you looked" not in text
    assert client.get("/games/101.json").json["move"] == 3
    assert post_move(client, bob, "propose").status_code == 303  # bob to move: he offers a draw
    form = {"csrf": csrf_of(client.get(f"/play/{token(server, 0)}").get_data(as_text=True)), "move": "acc",
            "number": "4"}
    assert client.post(f"/play/{token(server, 0)}", data=form).status_code == 303
    again = client.post(f"/play/{token(server, 0)}", data=form)
    assert again.status_code == 200
    assert "Your move accept was already played (move 4); it was not sent twice." in html.unescape(
        again.get_data(as_text=True))


def test_the_form_takes_a_move_as_written_in_a_mail_with_its_number(client, server, game):
    """``F6#2`` in the box is the move F6 asserted to be move 2, as by mail."""
    bob = token(server, 1)
    stale = post_move(client, bob, "F6#1")
    assert stale.status_code == 422 and "You sent move #1, but the next move on board 101 is #2" in html.unescape(
        stale.get_data(as_text=True))
    assert client.get("/games/101.json").json["move"] == 1
    assert post_move(client, bob, "F6 #2").status_code == 303
    assert client.get("/games/101.json").json["move"] == 2


def test_play_page_refuses_cross_site_posts_and_accepts_origin_null(client, server, game):
    bob = token(server, 1)
    assert client.post(f"/play/{bob}", data={"move": "F6"}).status_code == 403  # no token
    csrf = csrf_of(client.get(f"/play/{bob}").get_data(as_text=True))
    evil = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "F6"},
                       headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
    assert client.post(f"/play/{bob}", data={"csrf": "0" * 64, "move": "F6"}).status_code == 403
    assert client.post(f"/play/{bob}", data={"csrf": "\u00e9", "move": "F6"}).status_code == 403  # not ASCII
    assert client.post("/play/notatoken", data={"csrf": "\u00e9", "move": "F6"}).status_code == 404
    assert client.get("/games/101.json").json["move"] == 1
    head = client.head(f"/play/{bob}")  # a HEAD is the page's headers, not a form
    assert head.status_code == 200 and head.headers["Content-Type"].startswith("text/html")
    # Under Referrer-Policy: no-referrer a browser's own form says "Origin: null".
    ours = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "F6", "number": "2"},
                       headers={"Origin": "null"})
    assert ours.status_code == 303
    assert client.get("/play/notatoken").status_code == 404
    unknown = client.post("/play/notatoken", data={"csrf": csrf, "move": "F6"})  # the link first, then the form
    assert unknown.status_code == 404 and "This private link is not valid." in unknown.get_data(as_text=True)


@pytest.mark.parametrize("header, value", [("Origin", "http://[x"), ("Referer", "http://[::1/new")])
def test_a_form_whose_origin_is_no_url_is_refused_as_another_sites(client, server, game, header, value):
    bob = token(server, 1)
    csrf = csrf_of(client.get(f"/play/{bob}").get_data(as_text=True))
    refused = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "F6"}, headers={header: value})
    assert refused.status_code == 403 and "text/html" in refused.content_type
    new_game = client.post("/new", data={"game": "go", "mode": "same-device"}, headers={header: value})
    assert new_game.status_code == 403
    assert client.get("/games/101.json").json["move"] == 1 and client.get("/games/102.json").status_code == 404


@pytest.mark.parametrize("host", ["x" * 64 + ".test", "x..y", "."])
def test_a_host_header_that_is_no_host_name_is_refused_in_plain_text(client, game, host):
    # Routing cannot read such a Host (its IDNA form fails), so no page's links can be
    # built: the refusal is a plain sentence, never a failed error page.
    for path in ("/", "/new", "/games/101", "/play/abc", "/no/such/page"):
        answer = client.get(path, headers={"Host": host})
        assert answer.status_code == 400, path
        assert answer.mimetype == "text/plain", path
        assert answer.get_data(as_text=True) == "The request could not be read; go back and try again.\n", path


def test_a_failure_on_a_request_whose_host_is_no_host_name_is_a_plain_503(app, client):
    @app.before_request
    def fail():  # whatever fails before the routing's own refusal
        raise RuntimeError("a failure of the server's own")

    answer = client.get("/", headers={"Host": "x..y"})
    assert answer.status_code == 503 and answer.mimetype == "text/plain"
    assert answer.get_data(as_text=True) == "The server failed; try again later.\n"


@pytest.mark.parametrize("path", ["/play/{bob}", "/play/{bob}/live", "/join/{bob}"])
def test_a_failure_on_a_private_page_logs_its_address_without_the_secret(app, client, server, game, caplog, path):
    """The log says where the server failed, but not the private link's secret: a play
    page's token is also its seat's reply tag, as the access log knows (gunicorn.conf)."""
    bob = token(server, 1)

    @app.before_request
    def fail():
        raise RuntimeError("a failure of the server's own")

    answer = client.get(path.format(bob=bob))
    assert answer.status_code == 503
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert path.format(bob="...") in logged
    assert bob not in logged and bob not in caplog.text


def test_a_malformed_move_number_in_the_form_is_refused_not_ignored(client, server, game):
    bob = token(server, 1)
    for number in ("abc", "-1", "9" * 50, "2.0"):
        response = post_move(client, bob, "F6", number)
        text = html.unescape(response.get_data(as_text=True))
        assert response.status_code == 400, number
        assert f"The form's move number \"{number[:20]}\" is not a number; reload the page and try again." in text
    assert client.get("/games/101.json").json["move"] == 1
    assert post_move(client, bob, "F6", " 2 ").status_code == 303


def test_a_move_too_long_to_be_one_is_refused_without_echoing_it(client, server, game):
    bob = token(server, 1)
    response = post_move(client, bob, "A" * 100_000, 2)
    text = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    assert '"AAAAAAAAAAAAAAAAAAAA..." is too long to be a move (100000 characters).' in text
    assert "A" * 101 not in text.split('name="move" value="', 1)[0]  # the sentence; the box keeps what was typed
    explained = client.get(f"/play/{bob}/explain?move={'A' * 5000}").json["error"]
    assert explained == '"AAAAAAAAAAAAAAAAAAAA..." is too long to be a move (5000 characters).'
    assert client.get("/games/101.json").json["move"] == 1


def test_explain_says_why_a_move_cannot_be_played(client, server, game):
    bob, alice = token(server, 1), token(server, 0)
    assert client.get(f"/play/{bob}/explain?move=D4").json == {
        "error": "D4 already holds a castle; choose an empty point."}
    assert client.get(f"/play/{bob}/explain?move=F6").json == {"error": None}
    assert client.get(f"/play/{alice}/explain?move=F6").json["error"].startswith("It is not your turn")
    assert "off the board" in client.get(f"/play/{bob}/explain?move=Z99").json["error"]
    assert client.get(f"/play/{bob}/explain").json["error"].startswith("Choose a point")
    assert client.get("/play/nope/explain?move=F6").status_code == 404


def test_go_targets_buttons_and_scoring_marks(players, client, server):
    players.send(ALICE, "go challenge alice bob")
    for seat, move in ((0, "C3"), (1, "G7"), (0, "pass")):
        assert server.play_by_token(token(server, seat), move).status == "applied"
    page = client.get(f"/play/{token(server, 1)}").get_data(as_text=True)
    targets = json.loads(html.unescape(re.search(r"data-targets='([^']*)'", page).group(1)))
    assert targets["mode"] == "point" and targets["confirm"] is True
    assert "C3" not in targets["moves"] and targets["moves"]["D4"] == "D4"
    assert targets["holds"] == {"C3": "a black stone", "G7": "a white stone"}  # what the keyboard cursor says
    assert re.findall(r'data-action="(\w+)"', page) == ["play", "pass", "undo", "propose", "resign"]
    assert server.play_by_token(token(server, 1), "pass").status == "applied"  # scoring opens
    scoring = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    targets = json.loads(html.unescape(re.search(r"data-targets='([^']*)'", scoring).group(1)))
    assert targets["moves"]["C3"] == "mark C3" and targets["moves"]["G7"] == "mark G7" and "D4" not in targets["moves"]
    assert targets["confirm"] is False and targets["prefix"] == "mark "
    assert re.findall(r'data-action="(\w+)"', scoring) == ["play", "done", "resume", "undo", "propose", "resign"]
    assert server.play_by_token(token(server, 0), "done").status == "applied"
    confirmed = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    assert re.findall(r'data-action="(\w+)"', confirmed) == ["play", "resume", "undo", "propose", "resign"]  # once
    assert server.play_by_token(token(server, 0), "done").status == "rejected"
    assert server.play_by_token(token(server, 1), "done").status == "applied"
    over = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    assert re.findall(r'data-action="(\w+)"', over) == ["newround"] and "data-targets" not in over
    assert server.play_by_token(token(server, 0), "newround").status == "applied"
    asked = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    assert "data-action" not in asked and "You asked for a new round" in asked
    opponent = client.get(f"/play/{token(server, 1)}").get_data(as_text=True)
    assert re.findall(r'data-action="(\w+)"', opponent) == ["newround"]
    assert "alice asked for a new round; it starts when you ask too." in opponent
    assert server.play_by_token(token(server, 1), "newround").status == "applied"
    assert f'href="/play/{token(server, 0, board=102)}">board 102</a>' in client.get(
        f"/play/{token(server, 0)}").get_data(as_text=True)


def test_requests_have_buttons_undo_only_once_a_move_stands(client, server, game):
    """alice played D4: she may ask to take it back or offer a draw; bob, who has not
    moved, may only offer a draw. Once alice asks, bob's page answers it."""
    actions = lambda seat: re.findall(r'data-action="(\w+)"', client.get(f"/play/{token(server, seat)}").get_data(
        as_text=True))
    assert actions(0) == ["undo", "propose", "resign"]
    assert actions(1)[-2:] == ["propose", "resign"] and "undo" not in actions(1)
    assert post_move(client, token(server, 0), "undo", 2).status_code == 303
    assert actions(0) == ["resign"]  # her request is open: nothing more to ask
    assert actions(1)[-3:] == ["accept", "reject", "resign"]
    page = client.get(f"/play/{token(server, 1)}").get_data(as_text=True)
    assert "alice asks to take back move 1; bob may accept or reject." in page
    assert post_move(client, token(server, 1), "accept", 2).status_code == 303
    assert actions(0)[-2:] == ["propose", "resign"] and "undo" not in actions(0)  # D4 is taken back
    board_page = client.get("/games/101").get_data(as_text=True)
    assert svg_of(board_page).get("data-move-number") == "0"  # the position stands on no move
    assert "D4 (taken back)" in html.unescape(board_page)
    assert svg_of(client.get("/games/101?move=1").get_data(as_text=True)).get("data-move-number") == "1"


def test_against_the_computer_nothing_is_asked(players, client, server):
    players.send(ALICE, "greatkingdom challenge alice computer")
    page = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    assert "undo" not in re.findall(r'data-action="(\w+)"', page)
    assert "propose" not in re.findall(r'data-action="(\w+)"', page)


def test_two_tigers_targets_are_paths_with_their_prefixes(players, client, server):
    players.send(ALICE, "twotigers challenge alice bob")
    for move in ("b3-b4", "c2-b2", "b4-c3"):
        seat = 0 if move != "c2-b2" else 1
        assert server.play_by_token(token(server, seat), move).status == "applied"
    page = client.get(f"/play/{token(server, 1)}").get_data(as_text=True)
    targets = re.search(r"data-targets='([^']*)'", page).group(1)
    assert '"mode": "path"' in targets
    for path in (["b2", "b4"], ["b2", "b4", "d2"], ["b2", "b4", "d2", "d4"]):
        assert str(path).replace("'", '"') in targets


def test_dragons_orientations_and_cells_listed_once(players, client, server):
    from pbm.games import get_game

    players.send(ALICE, "dragons challenge alice bob")
    alice = token(server, 0)
    page = client.get(f"/play/{alice}").get_data(as_text=True)
    cells = hooks(svg_of(page), "data-cell")
    dragons = get_game("dragons")
    playable = dragons.playable(dragons.initial_state({}))
    assert sorted(cells) == sorted(name for name, _ in playable)
    assert len(re.findall(r"<tr><td><a href=\"\?cell=", page)) == len(playable)  # the one list of cells
    assert "Playable cells and the orientations" not in page  # not a second time in the diagram
    cell, fits = playable[0]
    fragment = client.get(f"/play/{alice}/orientations?cell={cell}")
    assert fragment.status_code == 200
    html = fragment.get_data(as_text=True)
    assert re.findall(r'data-orientation="(\w+)"', html) == fits
    assert f'name="move" value="{cell}:{fits[0]}"' in html and 'name="csrf"' in html
    without_script = client.get(f"/play/{alice}?cell={cell}").get_data(as_text=True)  # the same, by link
    assert re.findall(r'data-orientation="(\w+)"', without_script) == fits
    wrong = client.get(f"/play/{alice}/orientations?cell=99n")
    assert wrong.status_code == 422 and 'class="message error"' in wrong.get_data(as_text=True)
    assert players.send(ALICE, f"dragons move 101 alice alicepw {cell}:{fits[0]}").status == "applied"
    bob = token(server, 1)
    for asked, sentence in ((cell, f"{cell} names tile 2&#39;s cell, which is taken."),
                            ("zzz", "&#34;zzz&#34; is not a cell name"), ("1n:F2", "&#34;1n:F2&#34; is not a cell name"),
                            ("", "Name a cell: a tile number and a direction, like 7ne."),
                            ("1nnn", "1nnn is not next to any tile")):
        fragment = client.get(f"/play/{bob}/orientations", query_string={"cell": asked})
        assert fragment.status_code == 422 and sentence in fragment.get_data(as_text=True), asked
        assert "F0" not in fragment.get_data(as_text=True)
        if asked:  # the page without script says the same of a cell link
            assert sentence in client.get(f"/play/{bob}", query_string={"cell": asked}).get_data(as_text=True)
    not_yours = client.get(f"/play/{alice}/orientations", query_string={"cell": "1s"}).get_data(as_text=True)
    assert "It is not your turn: it is bob&#39;s turn" in not_yours
    players.send(ALICE, "go challenge alice bob")
    assert client.get(f"/play/{token(server, 0, board=102)}/orientations?cell=1n").status_code == 404


def test_a_players_boards_most_urgent_first_with_their_own_links(players, client, server):
    players.send("carol@players.test", "signup carol carolpw")
    players.send(ALICE, "go challenge alice bob")              # 101: alice to move
    players.send(ALICE, "greatkingdom challenge bob alice")    # 102: bob to move
    players.send(ALICE, "twotigers challenge alice bob --nagtime=1 --expiretime=2")  # 103: sooner deadline
    players.send("carol@players.test", "go challenge carol bob")  # 104: not alice's
    page = client.get(f"/play/{token(server, 0)}").get_data(as_text=True)
    listed = re.findall(r'<a href="/play/(\w+)"\s*(?:aria-current="page")?>([\w ]+) board (\d+)</a>', page)
    assert [int(board) for _, _, board in listed] == [103, 101, 102]
    assert [t for t, _, _ in listed] == [token(server, 0, 103), token(server, 0, 101), token(server, 1, 102)]
    assert token(server, 1, 101) not in page and token(server, 0, 104) not in page
    assert "your turn" in page and "bob&#39;s turn" in page


# -- what every page carries ----------------------------------------------------------


def test_security_headers_and_no_inline_script(client, server, game):
    bob = token(server, 1)
    for path in ("/", "/games/101", f"/play/{bob}", f"/play/{bob}/live", "/nope"):
        response = client.get(path)
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        page = response.get_data(as_text=True)
        assert not re.search(r"<script(?![^>]*\bsrc=)", page), path
        assert not re.search(r"\son[a-z]+=", page) and " style=" not in page, path
    assert client.get(f"/play/{bob}").headers["Cache-Control"] == "private, no-store"
    assert client.get(f"/play/{bob}/explain?move=F6").headers["Cache-Control"] == "private, no-store"
    for path in (f"/play/{bob}", f"/play/{bob}/live", f"/play/{bob}/explain?move=F6"):  # credentials: not indexed
        assert client.get(path).headers["X-Robots-Tag"] == "noindex, nofollow", path
    assert "X-Robots-Tag" not in client.get("/games/101").headers  # public pages may be found
    robots = client.get("/robots.txt")
    assert robots.mimetype == "text/plain" and "Disallow: /play/\nDisallow: /join/\n" in robots.get_data(as_text=True)
    icon = client.get("/favicon.ico")  # a browser showing a board's .txt asks for it: no 404 in its console
    assert icon.status_code == 204 and icon.get_data() == b""
    german = client.get("/games/101", headers={"Accept-Language": "de"})  # one copy per language in a shared cache
    assert set(german.vary) == {"Accept-Language", "Cookie"} and german.headers["Content-Language"] == "de"
    assert "Vary" not in client.get("/games/101.json").headers  # the same in every language
    script = client.get("/static/play.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    assert re.search(r'<script src="/static/play.js\?v=[0-9a-f]{12}" defer>',
                     client.get("/").get_data(as_text=True))


def test_hooks_are_drawn_precisely_where_the_game_draws_them(players, client, server):
    from pbm.web.boardpage import precise_hooks
    from pbm.render import board_svg
    from pbm.games import get_game

    for name in ("go", "twotigers", "dragons"):
        game = get_game(name)
        state = game.initial_state(game.parse_options({}))
        raw = ET.fromstring(board_svg(name, state, move_number=0, interactive=True))
        fixed = ET.fromstring(precise_hooks(board_svg(name, state, move_number=0, interactive=True)))
        hook = "data-cell" if name == "dragons" else "data-point"
        assert hooks(fixed, hook) == hooks(raw, hook)
        for element in fixed.iter():
            if element.get("class") in ("points", "cells"):
                assert element.get("transform") == "scale(0.01)"
                centres = [float(e.get("cx") or e.get("points").split(",")[0]) for e in element]
                assert max(centres) > 50  # hundredths of a unit


def test_status_filter_by_a_game_that_does_not_exist_is_400_with_a_sentence(client, game):
    response = client.get("/?game=chess")
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert ("There is no game called &#34;chess&#34; to filter by; the games are dragons, go, greatkingdom, "
            "twodragons, twotigers.") in response.get_data(as_text=True)
    assert client.get("/?game=GreatKingdom").status_code == 200  # names are case-insensitive


def test_text_and_record_refusals_are_plain_sentences(client, game):
    for path, code, sentence in (("/games/101.txt?move=9", 400, "Board 101 has moves 0 to 1."),
                                 ("/games/999.txt", 404, "There is no board 999."),
                                 ("/games/101.sgf", 404, "Board 101 is Great Kingdom, which has no SGF record."),
                                 ("/games/101.json?move=x", 400, None)):
        response = client.get(path)
        assert response.status_code == code, path
        if sentence:
            assert response.mimetype == "text/plain" and response.get_data(as_text=True) == sentence + "\n", path
        else:
            assert response.json == {"status": "error", "error": "?move= needs a move number from 0 to 1."}


def test_readme_documents_every_route_with_its_methods(app):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("\n## HTTP\n"):readme.index("\n## Playing on the web\n")]
    documented = {}
    for row in re.findall(r"^\| (`/.*?) \| ([A-Z, ]+) \| (.+) \|$", section, re.M):
        for route in re.findall(r"`([^`]+)`", row[0]):
            documented[re.sub(r"<[^>]+>", "<>", route)] = set(row[1].split(", "))
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        route = re.sub(r"<[^>]+>", "<>", rule.rule)
        assert route in documented, rule.rule
        assert rule.methods - {"HEAD", "OPTIONS"} <= documented[route], rule.rule


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json == {"status": "ok", "database": "ok"}


def test_healthz_says_when_the_maildir_cannot_be_made_and_the_log_says_where(database_url, tmp_path, caplog):
    """The settings refuse such a Maildir at start (tests/test_config.py); this one breaks
    while the server runs: a file appears where its folder was to be made."""
    from pbm import create_app

    app = create_app({"database_url": database_url, "instance_path": str(tmp_path), "mail_backend": "maildir",
                      "maildir": str(tmp_path / "afile" / "box"), "secret_key": "x"})
    assert app.test_client().get("/healthz").status_code == 200
    (tmp_path / "afile").write_text("not a folder")
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["error"] == ("The Maildir cannot be made (a file stands where a folder must be): "
                                      "no mail can be delivered.")  # no path: the page is public
    assert str(tmp_path / "afile") in caplog.text


# -- the webhook ---------------------------------------------------------------


def test_webhook_takes_the_raw_message_in_a_form_field_and_big_bodies(client, players):
    big = "x" * 2_000_000  # over Flask's default 500 kB form field cap, under 10 MB
    raw = make_mail(ALICE, "help", big)
    response = client.post("/inbound/email", data={"email": raw.decode()})
    assert response.status_code == 200  # read, and answered: its text is too long to be a command
    assert response.json["status"] == "rejected" and "too large to read" in response.json["error"]


def test_webhook_takes_the_raw_message_as_an_uploaded_file(client, players, outbox):
    import io

    raw = make_mail(ALICE, "help")
    response = client.post("/inbound/email", data={"email": (io.BytesIO(raw), "mail.eml")},
                           content_type="multipart/form-data")
    assert response.status_code == 200 and response.json["status"] == "applied"
    assert outbox.new()[-1]["Subject"] == "pbm help"


def test_webhook_refuses_more_than_ten_megabytes(client, players):
    raw = make_mail(ALICE, "help", "y" * (10 * 1024 * 1024 + 10))
    response = client.post("/inbound/email", data=raw, content_type="message/rfc822")
    assert response.status_code == 413
    assert response.json["status"] == "error" and response.json["error"] == "The message is larger than 10 MB."


def test_a_limit_under_a_megabyte_is_said_in_bytes(overrides, players):
    from pbm import create_app

    small = create_app({**overrides, "max_message_bytes": 200_000}).test_client()
    response = small.post("/inbound/email", data=make_mail(ALICE, "help", "y" * 300_000),
                          content_type="message/rfc822")
    assert response.status_code == 413 and response.json["error"] == "The message is larger than 200,000 bytes."


def test_webhook_400_for_a_request_without_a_message(client):
    assert client.post("/inbound/email", data={"foo": "bar"}).status_code == 400
    assert client.post("/inbound/email", data=b"", content_type="message/rfc822").status_code == 400
    no_sender = client.post("/inbound/email", data=b"Subject: help\n\nhi\n", content_type="message/rfc822")
    assert no_sender.status_code == 400 and "no sender" in no_sender.json["error"]


def test_webhook_400_for_an_empty_message_field(client):
    for field in ("email", "body-mime"):
        response = client.post("/inbound/email", data={field: ""})
        assert response.status_code == 400, field
        assert response.json == {"status": "error", "error": "The request holds no message."}


def test_webhook_answers_mistakes_with_200_rejected(client, players):
    raw = make_mail(ALICE, "greatkingdom move 555 alice alicepw D4")
    response = client.post("/inbound/email", data=raw, content_type="message/rfc822")
    assert response.status_code == 200
    assert response.json == {"status": "rejected", "board": None, "error": "There is no board 555."}


@pytest.fixture
def secret_client(overrides):
    from pbm import create_app
    app = create_app({**overrides, "inbound_secret": "s3cret",
                      "mailgun_signing_key": "mg-key"})
    yield app.test_client()
    app.extensions["pbm"].engine.dispose()


def test_webhook_shared_secret(secret_client):
    raw = make_mail(ALICE, "help")
    assert secret_client.post("/inbound/email", data=raw, content_type="message/rfc822").status_code == 401
    wrong = secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                               auth=("api", "nope"))
    assert wrong.status_code == 403
    right = secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                               auth=("api", "s3cret"))
    assert right.status_code == 200 and right.json["status"] == "applied"
    signature = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    signed = secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                                headers={"X-PBM-Signature": signature})
    assert signed.json["status"] == "duplicate"
    forged = secret_client.post("/inbound/email", data=raw + b"x", content_type="message/rfc822",
                                headers={"X-PBM-Signature": signature})
    assert forged.status_code == 403
    for odd in ("\u00e9", "sha256=\u00e9" + signature[1:]):  # any text, bytes beyond ASCII too: a 403
        answer = secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                                    headers={"X-PBM-Signature": odd.encode().decode("latin-1")})
        assert answer.status_code == 403 and answer.json["error"] == "The X-PBM-Signature does not match the body."
    assert secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                              auth=("api", "s3cr\u00e9t")).status_code == 403


def mailgun_fields(key=b"mg-key", **changes):
    timestamp = changes.pop("timestamp", str(int(time.time())))
    token_ = changes.pop("token", uuid.uuid4().hex * 2)
    fields = {
        "sender": ALICE, "from": f"Alice <{ALICE}>", "recipient": "pbm@pbm.test",
        "subject": "help", "body-plain": "please", "Message-Id": "<mg-1@players.test>",
        "timestamp": timestamp, "token": token_,
        "signature": hmac.new(key, (timestamp + token_).encode(), hashlib.sha256).hexdigest(),
        "message-headers": '[["Auto-Submitted", "no"]]',
    }
    fields.update(changes)
    return fields


def test_webhook_mailgun_fields_with_signature(secret_client, outbox):
    auth = ("api", "s3cret")
    ok = secret_client.post("/inbound/email", data=mailgun_fields(), auth=auth)
    assert ok.status_code == 200 and ok.json["status"] == "applied"
    assert outbox.new()[-1]["Subject"] == "pbm help"
    forged = secret_client.post("/inbound/email", data=mailgun_fields(key=b"wrong"), auth=auth)
    assert forged.status_code == 403
    odd = secret_client.post("/inbound/email", data=mailgun_fields(signature="\u00e9"), auth=auth)
    assert odd.status_code == 403 and odd.json["error"] == "The Mailgun signature does not match."
    stale = secret_client.post("/inbound/email", data=mailgun_fields(timestamp="1000000000"), auth=auth)  # 2001
    assert stale.status_code == 403 and stale.json["error"] == "The Mailgun signature is too old."
    auto = mailgun_fields(**{"Message-Id": "<mg-2@players.test>",
                             "message-headers": '[["Auto-Submitted", "auto-replied"]]'})
    answer = secret_client.post("/inbound/email", data=auto, auth=auth)
    assert answer.json["status"] == "ignored", answer.json
    assert outbox.new() == []


@pytest.mark.parametrize("changes", [
    {"subject": "help\r\nBcc: v@x.example"},  # Mailgun sends headers decoded: an encoded line break
    {"Message-Id": "<a\r\nb@x>"},
    {"recipient": "pbm@pbm.test\r\nX: y"},
    {"message-headers": '[["X-A", "b\\r\\nc"], ["Bad Name", "x"], ["Subject", "=?utf-8?b?x?="]]'},
    {"message-headers": "[" * 100_000},  # nested beyond the JSON reader's recursion
    {"message-headers": '[["only one"]]'},
])
def test_odd_mailgun_fields_are_read_as_a_mail_not_failed_on(secret_client, outbox, changes):
    answer = secret_client.post("/inbound/email", data=mailgun_fields(**changes), auth=("api", "s3cret"))
    assert answer.status_code == 200 and answer.json["status"] in ("applied", "rejected"), answer.json
    assert all(m["Bcc"] is None for m in outbox.new())


def test_a_mailgun_sender_with_a_line_break_is_refused_and_mails_nobody(secret_client, outbox):
    """The sender field holding a second header line is read as a From of two
    addresses (alice@players.test and v@x.example): one mail, no one to answer."""
    fields = mailgun_fields(sender=ALICE + "\r\nBcc: v@x.example", **{"from": ""})
    answer = secret_client.post("/inbound/email", data=fields, auth=("api", "s3cret"))
    assert answer.status_code == 400 and answer.json["status"] == "malformed"
    assert answer.json["error"] == "The message could not be used: the sender (From:) is not one readable address."
    assert outbox.new() == []


@pytest.mark.parametrize("odd", ["²", "٣", "9" * 40])
def test_odd_numbers_in_the_play_form_and_urls_are_not_errors(client, server, game, odd):
    response = post_move(client, token(server, 1), "F6", number=odd)  # refused with a sentence, not a 500
    assert response.status_code == 400 and "is not a number" in response.get_data(as_text=True)
    assert client.get(f"/games/101?move={odd}").status_code == 400
    assert client.get(f"/games/{'9' * 30}").status_code == 404


def test_processes_starting_together_share_one_web_secret(tmp_path):
    """Workers that start at the same moment must all read the key the first one made."""
    from concurrent.futures import ThreadPoolExecutor

    from pbm.config import load_settings, secret_key

    settings = load_settings({"instance_path": str(tmp_path / "instance")})
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: secret_key(settings), range(32)))
    assert len(keys) == 1 and len(keys.pop()) == 64
    assert sorted(p.name for p in (tmp_path / "instance").iterdir()) == ["secret_key"]


def test_a_long_games_page_lists_its_last_moves_and_all_on_request(client, server, game, monkeypatch):
    from pbm.web import boardpage

    monkeypatch.setattr(boardpage, "PAGE_MOVES", 2)  # small enough to reach in a few moves
    for seat, move in ((1, "F6"), (0, "C3"), (1, "G7")):
        assert server.play_by_token(token(server, seat), move).status == "applied"
    page = client.get("/games/101").get_data(as_text=True)
    assert re.findall(r'<a href="\?move=(\d+)">', page) == ["3", "4"]
    assert '<ol class="moves" start="3">' in page
    assert "The last 2 moves of 4:" in page and '<a href="?moves=all">list them all</a>' in page
    everything = client.get("/games/101?moves=all").get_data(as_text=True)
    assert re.findall(r'<a href="\?move=(\d+)">', everything) == ["1", "2", "3", "4"]
    assert "list them all" not in everything
    earlier = client.get("/games/101?move=3").get_data(as_text=True)  # a past position lists up to it
    assert re.findall(r'<a href="\?move=(\d+)">', earlier) == ["2", "3"]
    assert '<a href="?move=3&amp;moves=all">list them all</a>' in earlier


def test_a_nul_character_in_an_address_query_or_form_is_a_400(client, server, game):
    """PostgreSQL's text cannot hold NUL: refused before any query, with a sentence."""
    bob = token(server, 1)
    for url in ("/play/%00", "/play/%00/live", "/play/%00/explain?move=D4", "/?player=%00", f"/play/{bob}?cell=%00",
                "/games/101?move=%00"):
        response = client.get(url)
        assert response.status_code == 400, url
        assert "The request holds a NUL character" in response.get_data(as_text=True), url
    csrf = csrf_of(client.get(f"/play/{bob}").get_data(as_text=True))
    posted = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "F6", "number": "2", "comment": "a\x00b"})
    assert posted.status_code == 400 and client.get("/games/101.json").json["move"] == 1
    assert client.post("/play/%00", data={"csrf": csrf, "move": "F6"}).status_code == 400


@pytest.mark.parametrize("path, form", [("/", "html"), ("/games/101", "html"), ("/play/{bob}", "html"),
                                        ("/new", "html"), ("/standings/greatkingdom", "html"),
                                        ("/games/101.txt", "text"), ("/games/101.json", "json")])
def test_a_query_whose_bytes_are_no_utf8_is_a_400_with_a_sentence(client, server, game, caplog, path, form):
    """A WSGI server may pass the query's raw bytes on (here 0xFF, which no UTF-8 text holds)."""
    url = path.format(bob=token(server, 1))
    response = client.get(url, environ_overrides={"QUERY_STRING": "move=\xff"})
    sentence = "The part of the address after the ? is not UTF-8 text; check the link and try again."
    assert response.status_code == 400, url
    if form == "json":
        assert response.json == {"status": "error", "error": sentence}
    elif form == "text":
        assert response.mimetype == "text/plain" and response.get_data(as_text=True) == sentence + "\n"
    else:
        shown = html.unescape(response.get_data(as_text=True))
        assert response.mimetype == "text/html" and sentence in shown
        assert f'?next={url}"' in shown  # the language switch comes back without the query
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_the_webhook_refuses_a_post_from_a_web_page(client, players):
    # the open webhook of `make run`: any page the user visits could post a form to it
    raw = make_mail(ALICE, "help", "")
    response = client.post("/inbound/email", data={"email": raw.decode()},
                           headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert response.json["error"] == "The webhook takes mail from mail systems, not from web pages."
    assert client.post("/inbound/email", data={"email": raw.decode()}).json["status"] == "applied"


def test_a_page_refuses_a_large_request_before_reading_its_form(client):
    response = client.post("/", data={"x": "y" * 1_000_000})  # a route that takes no POST at all
    assert response.status_code == 413
    move = client.post("/play/abcdefghij0123456789", data={"comment": "y" * 300_000})
    assert move.status_code == 413


def test_status_page_times_say_they_are_utc(client, server, players):
    """Every other page and mail writes its times with UTC; the status page's last
    activity and deadline must too, or a player reads them in their own zone."""
    from freezegun import freeze_time

    with freeze_time("2026-03-29 00:30:00"):  # the night Europe's clocks go forward
        assert players.send("alice@players.test", "twotigers challenge alice bob").status == "applied"
    page = client.get("/?game=twotigers").get_data(as_text=True)
    assert '<td data-label="Last activity">2026-03-29 00:30 UTC</td>' in page
    assert '<td data-label="Deadline">2026-04-05 00:30 UTC</td>' in page


def test_forwarded_headers_count_only_from_the_trusted_proxy():
    """``PBM_TRUSTED_PROXY``'s X-Forwarded-* give the client's address and scheme; the same
    headers from any other peer are dropped before the app sees them, and with no proxy
    set nobody's count."""
    from werkzeug.test import Client
    from werkzeug.wrappers import Request, Response

    from pbm.web.proxied import FromTrustedProxy

    @Request.application
    def echo(request):
        return Response(f"{request.remote_addr} {request.scheme} {request.headers.get('X-Forwarded-For')}")

    forwarded = {"X-Forwarded-For": "198.51.100.7, 203.0.113.5", "X-Forwarded-Proto": "https"}
    for proxy, peer, seen in (("10.0.0.1", "10.0.0.1", "203.0.113.5 https 198.51.100.7, 203.0.113.5"),
                              ("10.0.0.1", "10.0.0.2", "10.0.0.2 http None"),
                              ("", "10.0.0.1", "10.0.0.1 http None")):
        client = Client(FromTrustedProxy(echo, proxy))
        answer = client.get("/", headers=forwarded, environ_base={"REMOTE_ADDR": peer})
        assert answer.get_data(as_text=True) == seen, (proxy, peer)
