"""The web side: pages, private play form, webhook authentication and limits."""

import hashlib
import hmac
import re
import time
import uuid

import pytest

from .conftest import make_mail

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture
def game(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4", "<script>alert('x')</script> & hi")
    return players


def token(server, seat):
    from pbm.db import reading
    from pbm.models import Board
    with reading(server.engine) as s:
        return s.get(Board, 101).token(seat)


def test_status_page_lists_boards_and_filters(client, game):
    page = client.get("/").get_data(as_text=True)
    assert ">101</a>" in page and "alice vs bob" in page and "Great Kingdom" in page
    assert "<td>bob</td>" in page  # bob is to move
    assert "No boards yet." in client.get("/?game=go").get_data(as_text=True)
    assert "alice vs bob" in client.get("/?player=bob").get_data(as_text=True)
    escaped = client.get("/?player=<b>x</b>").get_data(as_text=True)
    assert "<b>x</b>" not in escaped and "&lt;b&gt;x&lt;/b&gt;" in escaped


def test_board_page_escapes_comments_and_shows_history(client, game):
    page = client.get("/games/101").get_data(as_text=True)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; hi" in page
    assert "  4  .  .  . (B) .  .  .  .  .  4" in page
    start = client.get("/games/101?move=0").get_data(as_text=True)
    assert "Position after move 0 of 1." in start and "(B)" not in start
    assert client.get("/games/101?move=5").status_code == 400
    assert client.get("/games/101?move=abc").status_code == 400
    assert client.get("/games/999").status_code == 404


def test_board_as_text_and_json(client, game):
    text = client.get("/games/101.txt")
    assert text.mimetype == "text/plain"
    assert "Great Kingdom Board 101: alice (Blue) vs bob (Orange)" in text.get_data(as_text=True)
    data = client.get("/games/101.json").json
    assert data["board"] == 101 and data["to_move"] == "bob" and data["move"] == 1
    assert data["moves"][0]["move"] == "D4" and data["moves"][0]["player"] == "alice"
    assert data["state"]["turn"] == 1
    assert client.get("/games/101.json?move=0").json["state"]["turn"] == 0
    assert client.get("/games/999.json").status_code == 404


def test_play_page_form_makes_a_move(client, server, game, outbox):
    bob = token(server, 1)
    page = client.get(f"/play/{bob}").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
    before = len(outbox.all())
    response = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "f6", "number": "2",
                                                 "comment": "from the web"},
                           headers={"Origin": "http://localhost"})
    assert response.status_code == 303
    mails = outbox.all()[before:]
    assert len(mails) == 2 and all(m["Subject"] == "Great Kingdom Board 101 alice" for m in mails)
    assert client.get("/games/101.json").json["moves"][1] == {
        **client.get("/games/101.json").json["moves"][1], "move": "F6", "player": "bob",
        "comment": "from the web"}


def test_play_page_explains_an_illegal_move(client, server, game):
    bob = token(server, 1)
    page = client.get(f"/play/{bob}").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
    empty = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "  ", "number": "2"})
    assert empty.status_code == 400 and "Write a move in the box first." in empty.get_data(as_text=True)
    response = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "E5", "number": "2"})
    assert response.status_code == 422
    assert "E5 holds the neutral castle" in response.get_data(as_text=True)
    alice = token(server, 0)
    page = client.get(f"/play/{alice}").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
    response = client.post(f"/play/{alice}", data={"csrf": csrf, "move": "A1"})
    assert response.status_code == 422 and "It is not your turn" in response.get_data(as_text=True)
    assert client.get("/games/101.json").json["move"] == 1


def test_play_page_refuses_cross_site_posts(client, server, game):
    bob = token(server, 1)
    assert client.post(f"/play/{bob}", data={"move": "F6"}).status_code == 403  # no token
    page = client.get(f"/play/{bob}").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
    evil = client.post(f"/play/{bob}", data={"csrf": csrf, "move": "F6"},
                       headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403
    assert client.post(f"/play/{bob}", data={"csrf": "0" * 64, "move": "F6"}).status_code == 403
    assert client.get("/games/101.json").json["move"] == 1
    assert client.get("/play/notatoken").status_code == 404


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json == {"status": "ok", "database": "ok"}


# -- the webhook ---------------------------------------------------------------


def test_webhook_takes_the_raw_message_in_a_form_field_and_big_bodies(client, players):
    big = "x" * 2_000_000  # over Flask's default 500 kB form field cap, under 10 MB
    raw = make_mail(ALICE, "help", big)
    response = client.post("/inbound/email", data={"email": raw.decode()})
    assert response.status_code == 200  # read, and answered: its text is too long to be a command
    assert response.json["status"] == "rejected" and "too large to read" in response.json["error"]


def test_webhook_refuses_more_than_ten_megabytes(client, players):
    raw = make_mail(ALICE, "help", "y" * (10 * 1024 * 1024 + 10))
    response = client.post("/inbound/email", data=raw, content_type="message/rfc822")
    assert response.status_code == 413
    assert response.json["status"] == "error"


def test_webhook_400_for_a_request_without_a_message(client):
    assert client.post("/inbound/email", data={"foo": "bar"}).status_code == 400
    assert client.post("/inbound/email", data=b"", content_type="message/rfc822").status_code == 400
    no_sender = client.post("/inbound/email", data=b"Subject: help\n\nhi\n", content_type="message/rfc822")
    assert no_sender.status_code == 400 and "no sender" in no_sender.json["error"]


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


def mailgun_fields(key=b"mg-key", **changes):
    timestamp, token_ = str(int(time.time())), changes.pop("token", uuid.uuid4().hex * 2)
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
    stale = mailgun_fields(timestamp="1000000000")
    assert secret_client.post("/inbound/email", data=stale, auth=auth).status_code == 403
    auto = mailgun_fields(**{"Message-Id": "<mg-2@players.test>",
                             "message-headers": '[["Auto-Submitted", "auto-replied"]]'})
    answer = secret_client.post("/inbound/email", data=auto, auth=auth)
    assert answer.json["status"] == "ignored", answer.json
    assert outbox.new() == []


@pytest.mark.parametrize("name", ["go", "greatkingdom", "twodragons", "twotigers", "dragons"])
def test_every_game_renders_on_every_page(name, players, client, server):
    from pbm.games import get_game

    players.send(ALICE, f"{name} challenge alice bob")
    game = get_game(name)
    first = game.legal_moves(game.initial_state(game.parse_options({})))[-1]
    assert players.send(ALICE, f"{name} move 101 alice alicepw {game.format_move(first)}").status == "applied"
    for path in ("/", "/games/101", "/games/101?move=0", "/games/101.txt", "/games/101.json",
                 f"/play/{token(server, 1)}"):
        response = client.get(path)
        assert response.status_code == 200, path
    assert game.title in client.get("/").get_data(as_text=True)
    assert client.get("/games/101.json").json["moves"][0]["move"] == game.format_move(first)
