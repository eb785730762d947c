"""Games started in the browser (seed 003), through the test client: /new and its
form, a same-device board acting for the side to act, a friend's invitation (join,
rejoin, a full room, a closed one, link previewers), games against the computer,
the invitation mail and its limit, expiry, and bad input answered with a sentence."""

import random
import re
import threading
from datetime import timedelta
from html import unescape

import pytest
from sqlmodel import select

from pbm import create_app
from pbm.db import reading
from pbm.games import get_game
from pbm.models import Board, MoveRecord, Player, Room, utcnow
from pbm.service import computer, rooms

from .conftest import body

HOST = "host@players.test"


def page(response) -> str:
    return unescape(response.get_data(as_text=True))


def error_of(response) -> str:
    return page(response).split("data-error>", 1)[1].split("</p>", 1)[0]


def start(client, **fields):
    fields = {"game": "go", "mode": "same-device", **fields}
    response = client.post("/new", data=fields)
    assert response.status_code == 303, error_of(response)
    play = response.headers["Location"]
    assert re.fullmatch(r"/play/[a-z0-9]{20}", play)
    return play


def board_of(server, play: str) -> Board:
    token = play.rsplit("/", 1)[1]
    with reading(server.engine) as session:
        return session.exec(select(Board).where((Board.token0 == token) | (Board.token1 == token))).one()


def players_of(server, board: Board) -> tuple[Player, Player]:
    with reading(server.engine) as session:
        return session.get(Player, board.seat0_id), session.get(Player, board.seat1_id)


def move(client, play: str, text: str):
    """Send ``text`` from the play page's own form, as a browser would."""
    shown = client.get(play).get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', shown).group(1)
    number = re.search(r'name="number" value="(\d+)"', shown).group(1)
    return client.post(play, data={"csrf": csrf, "move": text, "number": number})


def buttons(shown: str) -> list[str]:
    """The moves a page's buttons send (the words that are not points; resign's button asks first)."""
    return re.findall(r'name="(?:move|ask)" value="(\w+)"', shown)


def played(client, play: str, text: str) -> None:
    response = move(client, play, text)
    assert response.status_code == 303, page(response)


def seats_logged(server, board_id: int) -> list[tuple[int, str]]:
    with reading(server.engine) as session:
        return [(r.seat, r.text) for r in session.exec(select(MoveRecord).where(
            MoveRecord.board_id == board_id).order_by(MoveRecord.number)).all()]


def invite_of(client, play: str) -> str:
    found = re.findall(r'<a data-invite href="http://pbm\.test(/join/[a-z0-9]{20})">', client.get(play).get_data(
        as_text=True))
    assert len(found) == 1
    return found[0]


# -- the form -----------------------------------------------------------------------


def test_the_new_game_page_offers_go_first_its_sizes_and_three_ways(client):
    shown = page(client.get("/new"))
    games = re.findall(r'data-game-choice="(\w+)"', shown)
    assert games[0] == "go" and sorted(games) == ["dragons", "go", "greatkingdom", "twodragons", "twotigers"]
    sizes = re.search(r'<select id="option-size" name="size">(.*?)</select>', shown, re.S).group(1)
    assert re.findall(r'<option value="(\d+)"', sizes) == ["9", "13", "19"]
    assert re.search(r'<option value="9" selected>9x9</option>', sizes)
    assert 'name="komi"' not in shown and "Komi: 7.5" in shown and "no handicap" in shown
    assert re.findall(r'name="mode" value="([\w-]+)"', shown) == ["same-device", "friend", "computer"]
    assert re.search(r'name="mode" value="same-device" checked', shown)
    assert '<form method="post" action="/new"' in shown and '<button type="submit" data-start>' in shown
    other = page(client.get("/new?game=greatkingdom"))
    assert 'name="size"' in other and 'type="number"' in other and 'value="9"' in other and 'name="margin"' in other
    assert page(client.get("/new?game=twotigers")).count('name="mode"') == 3


def test_without_gnu_go_the_page_says_why_go_has_no_computer(overrides, tmp_path):
    app = create_app({**overrides, "gnugo_path": str(tmp_path / "no-gnugo")})
    client = app.test_client()
    go = page(client.get("/new"))
    assert 'value="computer"' not in go and "data-no-computer" in go
    assert "GNU Go is not installed on this server" in go
    assert 'value="computer"' in page(client.get("/new?game=greatkingdom"))
    refused = client.post("/new", data={"game": "go", "mode": "computer", "size": "9", "side": "0"})
    assert refused.status_code == 400 and "GNU Go is not installed on this server" in error_of(refused)
    app.extensions["pbm"].engine.dispose()


# -- same device ----------------------------------------------------------------------


def test_the_status_page_finds_browser_players_by_the_names_it_shows(client, server):
    play = start(client, size="9", name="Ada", guest_name="Bo")
    board = board_of(server, play)
    for typed in ("Ada", "ada", "Bo"):
        listed = page(client.get(f"/?player={typed}"))
        assert f'>{board.id}</a>' in listed and "Ada vs Bo" in listed, typed
    assert "No boards match these filters." in page(client.get("/?player=Adam"))


def test_a_same_device_form_sent_twice_says_already_played(client, server):
    """The side that moved is not the side to move when the form comes again."""
    play = start(client, size="9", name="Ada", guest_name="Bo")
    shown = client.get(play).get_data(as_text=True)
    form = {"csrf": re.search(r'name="csrf" value="([0-9a-f]+)"', shown).group(1), "move": "D4",
            "number": re.search(r'name="number" value="(\d+)"', shown).group(1)}
    assert client.post(play, data=form).status_code == 303
    again = client.post(play, data=form)
    assert again.status_code == 200
    assert "Your move D4 was already played (move 1); it was not sent twice." in page(again)
    assert seats_logged(server, board_of(server, play).id) == [(0, "D4")]


def test_same_device_acts_for_the_side_to_act_through_go_scoring_and_a_new_round(client, server):
    play = start(client, size="9", name="Ada", guest_name="Bo")
    board = board_of(server, play)
    ada, bo = players_of(server, board)
    assert (ada.display_name, bo.display_name) == ("Ada", "Bo")
    for seat in (ada, bo):  # anonymous seats: no address, no password, a userid nobody chose
        assert seat.email is None and seat.password_hash is None and re.fullmatch(r"guest-[a-z0-9]{10}", seat.userid)
    with reading(server.engine) as session:
        room = session.get(Room, board.room_id)
    assert room.mode == "same-device" and room.invite is None
    assert board.options == {"size": 9, "komi": 7.5} and board.expire_days == 7
    assert "It is Ada's turn (Black)." in page(client.get(play))
    played(client, play, "D5")
    assert "It is Bo's turn (White)." in page(client.get(play))
    other = f"/play/{board.token1}"  # either link acts for the side to act
    played(client, other, "E5")
    for text in ("pass", "pass", "mark E5", "done", "done"):
        played(client, play, text)
    assert seats_logged(server, board.id) == [(0, "D5"), (1, "E5"), (0, "pass"), (1, "pass"),
                                             (0, "mark E5"), (1, "done"), (0, "done")]
    finished = board_of(server, play)
    assert finished.status == "finished" and "Game won by Ada (Black)" in page(client.get(play))
    began = move(client, play, "newround")  # one screen: one press asks for both sides
    again = board_of(server, play)
    assert again.next_board_id is not None
    with reading(server.engine) as session:
        fresh = session.get(Board, again.next_board_id)
    assert began.status_code == 303 and began.headers["Location"] == f"/play/{fresh.token0}"  # on to the new round
    assert fresh.room_id == board.room_id and (fresh.seat0_id, fresh.seat1_id) == (ada.id, bo.id)
    assert fresh.options == board.options and fresh.status == "active"
    played(client, f"/play/{fresh.token1}", "C3")  # White's link, Black to move: Black plays
    assert seats_logged(server, fresh.id) == [(0, "C3")]
    assert server.rebuild() == []


def test_same_device_the_other_seat_answers_a_request_on_the_same_screen(client, server):
    """The page acts for the side to move, so the one who asks is the one the page
    acts for; the answer buttons act for the other seat and name it, from either link."""
    play = start(client, size="9", name="Ada", guest_name="Bo")
    board = board_of(server, play)
    other = f"/play/{board.token1}"
    played(client, play, "D5")
    played(client, play, "E5")
    played(client, other, "undo")  # Ada (to move) asks to take back D5
    for link in (play, other):
        shown = page(client.get(link))
        assert "Ada asks to take back move 1; Bo may accept or reject." in shown
        assert re.search(r'data-action="accept">Accept as Bo</button>', shown)
        assert re.search(r'data-action="reject">Reject as Bo</button>', shown)
        assert 'data-action="undo"' not in shown and "data-move-form" in shown  # Ada still moves here
    played(client, play, "accept")  # Bo accepts, on the same screen
    assert seats_logged(server, board.id)[-1] == (1, "undo 1")
    assert board_of(server, play).to_move == 0 and "It is Ada's turn (Black)." in page(client.get(play))

    played(client, play, "D5")
    played(client, play, "propose")  # now Bo (to move) offers a draw, and Ada answers
    assert re.search(r'data-action="reject">Reject as Ada</button>', page(client.get(play)))
    played(client, other, "reject")
    fresh = board_of(server, play)
    assert fresh.request_kind is None and fresh.status == "active" and fresh.to_move == 1
    refused = move(client, play, "accept")  # nothing is open: the answer has no one to act for
    assert refused.status_code == 422 and "There is no open request on board" in error_of(refused)
    played(client, play, "propose")
    played(client, play, "E5")  # a move by the one who asked withdraws the offer
    assert board_of(server, play).request_kind is None


@pytest.mark.parametrize("word, logged", [("acc", "undo 1"), ("ACCEP", "undo 1"), ("rej", None)])
def test_same_device_an_abbreviated_answer_acts_for_the_seat_asked(client, server, word, logged):
    """On one screen ``acc`` is ``accept``, as in a mail: Bo answers Ada's request."""
    play = start(client, size="9", name="Ada", guest_name="Bo")
    board = board_of(server, play)
    for text in ("D5", "E5", "undo"):  # Ada, to move, asks to take back D5
        played(client, play, text)
    played(client, play, word)
    assert board_of(server, play).request_kind is None
    assert seats_logged(server, board.id)[2:] == ([(1, logged)] if logged else [])


def test_a_friend_answers_a_request_on_their_own_page(app, client, server):
    play = start(client, mode="friend", game="greatkingdom", size="5", name="Ada")
    board = board_of(server, play)
    guest = app.test_client()
    guest.get(invite_of(client, play))
    mine = f"/play/{board.token1}"
    played(client, play, "B2")
    played(client, play, "undo")
    assert 'data-action="accept"' not in page(client.get(play))
    shown = page(guest.get(mine))
    assert re.search(r'data-action="accept">Accept</button>', shown)  # their own seat: no name needed
    played(guest, mine, "accept")
    assert seats_logged(server, board.id) == [(0, "B2"), (1, "undo 1")]


def test_a_same_device_page_is_remembered_by_the_browser_script(client, server):
    play = start(client, game="greatkingdom", size="5", mode="same-device")
    shown = client.get(play).get_data(as_text=True)
    panel = re.search(r'<section class="room"[^>]*>', shown, re.S).group(0)
    assert 'data-room-mode="same-device"' in panel and f'data-room-href="{play}"' in panel
    assert 'data-room-title="Great Kingdom (size 5, margin 3)"' in panel
    assert re.search(r'<script src="/static/rooms\.js\?v=[0-9a-f]{12}" defer></script>', shown)
    assert '<section class="saved-games" data-saved-games hidden' in client.get("/new").get_data(as_text=True)
    script = client.get("/static/rooms.js").get_data(as_text=True)
    assert 'localStorage.setItem("pbm.rooms." + mode' in script


# -- with a friend --------------------------------------------------------------------


def test_a_friend_joins_rejoins_and_a_third_browser_finds_the_room_full(app, client, server):
    play = start(client, mode="friend", size="13", name="Ada")
    board = board_of(server, play)
    invite = invite_of(client, play)
    assert "Nobody has opened the invitation yet." in page(client.get(play))
    guest = app.test_client()
    joined = guest.get(invite)
    assert joined.status_code == 303 and joined.headers["Location"] == f"/play/{board.token1}"
    cookie = joined.headers["Set-Cookie"]
    assert cookie.startswith("pbm_seat=") and f"Path={invite}" in cookie and "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert guest.get(invite).headers["Location"] == f"/play/{board.token1}"  # the same browser: its seat
    third = app.test_client().get(invite)
    assert third.status_code == 409 and "The room is full" in page(third) and "data-room-full" in page(third)
    assert client.get(invite).headers["Location"] == f"/play/{board.token0}"  # the host's cookie too
    host_page = page(client.get(play))
    assert "Your friend has joined. Opening the invitation again in this browser brings you back" in host_page
    assert "Nobody has opened" not in host_page and "the first browser that opens it takes" not in host_page
    assert re.search(r"Go board \d+</a>\s+against Guest:", host_page)  # "Your boards" names the seat too
    assert "data-invite" not in guest.get(f"/play/{board.token1}").get_data(as_text=True)
    played(client, play, "D4")
    with pytest.raises(AssertionError):  # the host's page does not act for White
        played(client, play, "E5")
    played(guest, f"/play/{board.token1}", "E5")
    played(client, play, "resign")
    played(guest, f"/play/{board.token1}", "newround")
    assert board_of(server, play).next_board_id is None  # both must agree
    played(client, play, "newround")
    with reading(server.engine) as session:
        fresh = session.get(Board, board_of(server, play).next_board_id)
    assert fresh.room_id == board.room_id and fresh.options["size"] == 13
    assert guest.get(invite).headers["Location"] == f"/play/{fresh.token1}"  # back in the latest round
    assert client.get(invite).headers["Location"] == f"/play/{fresh.token0}"
    assert app.test_client().get(invite).status_code == 409


def test_link_previews_and_head_requests_do_not_take_the_seat(app, client, server):
    invite = invite_of(client, start(client, mode="friend"))
    preview = app.test_client().get(invite, headers={"User-Agent": "Slackbot-LinkExpanding 1.0"})
    assert preview.status_code == 200 and "take the second seat" in page(preview)
    for agent in ("Mozilla/5.0 (compatible; Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/))",
                  "Viber/13.3.0.2 CFNetwork/1333.0.4 Darwin/21.5.0"):  # Google Chat's and Viber's previews
        assert app.test_client().get(invite, headers={"User-Agent": agent}).status_code == 200, agent
    assert preview.headers["X-Robots-Tag"] == "noindex, nofollow" and preview.headers["Cache-Control"] == "private, no-store"
    assert app.test_client().head(invite).status_code == 200
    phone = "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile"
    assert app.test_client().get(invite, headers={"User-Agent": phone}).status_code == 303  # the first real browser
    # (a person's phone, though its name ends in "bot") takes it


def test_the_invitation_is_mailed_to_the_host_at_most_three_times_an_hour(client, server, outbox):
    play = start(client, mode="friend", email="Host@Players.test")
    board = board_of(server, play)
    invite = invite_of(client, play)
    mail = outbox.to(HOST)[-1]
    assert mail["Subject"] == f"Go Board {board.id}: your invitation link"
    assert mail["Auto-Submitted"] == "auto-generated"
    text = body(mail)
    assert f"http://pbm.test{invite}" in text and f"http://pbm.test/play/{board.token0}" in text
    start(client, mode="friend", email=HOST)
    start(client, mode="friend", email=HOST)
    refused = client.post("/new", data={"game": "go", "mode": "friend", "email": HOST})
    assert refused.status_code == 400
    assert error_of(refused) == (f"{HOST} was sent 3 invitations in the last hour, the most it gets; leave the "
                                 "address empty and copy the link instead.")
    assert len(outbox.to(HOST)) == 3
    start(client, mode="friend")  # without an address it still starts
    start(client, mode="same-device", email=HOST)  # the address only serves a friend room
    assert len(outbox.to(HOST)) == 3


def test_a_room_nobody_joined_closes_at_expiry_and_its_seats_get_no_mail(app, client, server, outbox):
    play = start(client, mode="friend")
    invite = invite_of(client, play)
    played(client, play, "E5")
    later = utcnow() + timedelta(days=5)
    assert server.send_reminders(now=later) == 1  # reminded, but nobody has an address
    assert server.expire_boards(now=later) == 0
    assert server.expire_boards(now=utcnow() + timedelta(days=7, minutes=1)) == 1
    board = board_of(server, play)
    assert board.status == "finished" and board.outcome["kind"] == "cancellation"
    closed = app.test_client().get(invite)
    assert closed.status_code == 410 and "This room has closed" in page(closed)
    assert outbox.all() == []


def test_the_host_of_a_room_that_closed_before_anyone_joined_is_sent_to_a_new_game(app, client, server):
    play = start(client, mode="friend")
    invite = invite_of(client, play)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get(play).get_data(as_text=True)).group(1)
    played(client, play, "resign")
    host_page = " ".join(page(client.get(play)).split())
    assert ('This room has closed: the game ended before anyone took the invitation. <a href="/new">Start a new '
            'game</a>.') in host_page
    assert "data-invite" not in host_page and 'data-action="newround"' not in host_page
    refused = client.post(play, data={"csrf": csrf, "move": "newround", "number": "2"})  # an old form: told
    assert refused.status_code == 422  # as any move the rules refuse
    assert "Nobody took the invitation of board 101 before its game ended, so it gets no new round" in page(refused)
    assert app.test_client().get(invite).status_code == 410


def test_unknown_and_malformed_invitations_are_404(client):
    for path in ("/join/aaaaaaaaaaaaaaaaaaaa", "/join/short", "/join/" + "x" * 300, "/join/ABCDEFGHIJKLMNOPQRST"):
        response = client.get(path)
        assert response.status_code == 404 and "This invitation is not valid" in page(response)


# -- against the computer -----------------------------------------------------------------


@pytest.fixture
def quick(overrides):
    """An application whose computer thinks briefly."""
    app = create_app({**overrides, "computer_seconds": 0.05})
    yield app
    assert computer.wait_idle(60)
    app.extensions["pbm"].engine.dispose()


@pytest.mark.parametrize("side", ["0", "1"])
def test_against_the_computer_the_person_takes_the_side_chosen(quick, side):
    client, server = quick.test_client(), quick.extensions["pbm"]
    play = start(client, game="greatkingdom", size="5", mode="computer", side=side, name="Ada")
    board = board_of(server, play)
    ada, other = players_of(server, board)
    if side == "1":
        ada, other = other, ada
    assert ada.display_name == "Ada" and other.userid == "computer"
    assert computer.wait_idle(60)
    if side == "1":  # the computer moved first, by itself
        assert [seat for seat, _ in seats_logged(server, board.id)] == [0]
    shown = page(client.get(play))
    assert "It is Ada's turn (" in shown and "You play against the computer" in shown
    with reading(server.engine) as session:
        fresh = session.get(Board, board.id)
    from pbm.games import get_game
    game = get_game("greatkingdom")
    state = game.from_json(fresh.state)
    played(client, play, game.format_move(game.legal_moves(state)[0]))
    assert computer.wait_idle(60)
    assert [seat for seat, _ in seats_logged(server, board.id)][-2:] == ([0, 1] if side == "0" else [1, 0])


def test_against_the_computer_a_take_back_is_granted_at_once_and_a_draw_refused(quick):
    client, server = quick.test_client(), quick.extensions["pbm"]
    play = start(client, game="greatkingdom", size="5", mode="computer", side="0", name="Ada")
    board = board_of(server, play)
    shown = page(client.get(play))
    assert "It takes back your last move (and its reply) whenever you ask; it agrees to no draws." in shown
    assert buttons(shown) == ["pass", "resign"]  # nothing of hers to take back
    played(client, play, "B2")
    assert computer.wait_idle(60)
    shown = page(client.get(play))
    assert buttons(shown) == ["pass", "undo", "resign"]
    assert 'data-action="undo">Take back my move</button>' in shown
    played(client, play, "undo")
    assert computer.wait_idle(60)
    logged = seats_logged(server, board.id)
    assert logged[0] == (0, "B2") and logged[1][0] == 1 and logged[2:] == [(1, "undo 1")]
    fresh = board_of(server, play)
    assert fresh.to_move == 0 and fresh.request_kind is None and "It is Ada's turn" in page(client.get(play))
    refused = move(client, play, "propose")
    assert refused.status_code == 422 and error_of(refused) == "The computer agrees to no draws; play on, or resign."
    assert server.rebuild() == []


def test_go_against_gnu_go_answers_on_the_page(quick):
    from pbm.players import available
    server = quick.extensions["pbm"]
    if not available(server.settings.gnugo_path):
        pytest.skip("GNU Go is not installed (Debian package gnugo)")
    client = quick.test_client()
    play = start(client, mode="computer", side="0", size="9")
    played(client, play, "E5")
    assert computer.wait_idle(60)
    moves = seats_logged(server, board_of(server, play).id)
    assert moves[0] == (0, "E5") and moves[1][0] == 1
    assert f"computer: {moves[1][1]}" in page(client.get(play))
    played(client, play, "undo")  # both taken back: GNU Go is told only the moves that stand
    played(client, play, moves[1][1])  # where its reply was
    assert computer.wait_idle(60)
    again = seats_logged(server, board_of(server, play).id)
    assert again[3] == (0, moves[1][1]) and again[4][0] == 1 and len(again) == 5


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("fields, sentence", [
    ({"game": "chess"}, "There is no game called \"chess\" here; choose one of "),
    ({"game": ""}, "There is no game called \"\" here"),
    ({"size": "12"}, "The option \"Board size\" must be 9, 13 or 19, not \"12\"."),
    ({"size": "nine"}, "The option \"Board size\" must be 9, 13 or 19, not \"nine\"."),
    ({"size": "9" * 5000}, "The option \"Board size\" must be 9, 13 or 19, not \"99999999999999999999...\"."),
    ({"komi": "0.5"}, "In games started here Go is played with komi 7.5; it cannot be chosen."),
    ({"handicap": "2"}, "The form holds a field that is none of the game's options"),
    ({"<b>": "1"}, "The form holds a field that is none of the game's options"),
    ({"mode": "hotseat"}, "Choose how to play: on the same device, with a friend, or against the computer."),
    ({"mode": ""}, "Choose how to play"),
    ({"mode": "computer", "side": "2"}, "Choose your side: 0 to move first (Black) or 1 to move second (White)."),
    ({"name": "x" * 25}, "A name may have at most 24 characters"),
    ({"name": "a\x07b"}, "A name may have at most 24 characters"),  # (a NUL: refused first, see test_web)
    ({"guest_name": "Computer"}, "That name is the server's own player's; choose another."),
    ({"name": "Reminder"}, "Reminder is a word board mails use in their subjects; choose another name."),
    # "Go Board 101 game over" in a watcher's subject while the game runs; "either player" while both may act
    ({"guest_name": "Game  over"}, "Game over is a word board mails use in their subjects; choose another name."),
    ({"name": "EITHER player"}, "EITHER player is a word board mails use in their subjects; choose another name."),
    ({"name": "x", "guest_name": "X"}, "The two players need different names (both are x)"),
    ({"name": "Guest"}, "The two players need different names (both are Guest)"),
    ({"mode": "friend", "email": "not an address"}, "\"not an address\" is not a usable email address"),
    ({"game": "greatkingdom", "size": "4"}, "The option \"Board size, odd\" must be an odd number from 5 to 19, not 4."),
    ({"game": "dragons", "tantrix": "perhaps"},
     "The option \"Score the best dragon as in Tantrix\" must be yes or no, not \"perhaps\"."),
    ({"game": "dragons", "num_tiles": "1"}, "The option \"Tiles in the pool\" must be a number from 2 to 200, not 1."),
])
def test_bad_input_is_a_400_with_a_sentence_and_starts_nothing(client, server, fields, sentence):
    response = client.post("/new", data={"game": "go", "mode": "same-device", **fields})
    assert response.status_code == 400
    assert error_of(response).startswith(sentence)
    assert '<form method="post" action="/new"' in page(response)  # the form again, to mend
    with reading(server.engine) as session:
        assert session.exec(select(Board)).first() is None and session.exec(select(Room)).first() is None


@pytest.mark.parametrize("fields", [{"name": "Alice"}, {"guest_name": " bob "}, {"mode": "friend", "guest_name": "BOB"}])
def test_a_browser_seat_may_not_go_by_a_registered_players_userid(client, server, players, fields):
    response = client.post("/new", data={"game": "go", "mode": "same-device", **fields})
    assert response.status_code == 400
    named = " ".join((fields.get("name") or fields["guest_name"]).split())
    assert error_of(response) == (f"{named} is the userid of a player with an account here; choose another name, "
                                  "so nobody takes you for them.")
    with reading(server.engine) as session:
        assert session.exec(select(Board)).first() is None
    start(client, name="Alicia", mode="computer", guest_name="alice")  # no guest seat against the computer


def test_unnamed_seats_are_named_in_each_readers_language(client, server):
    """A German host leaves both names empty: the English friend reads Host and Guest,
    the German host Gastgeber and Gast (the words are not stored in the host's language)."""
    play = client.post("/new", data={"game": "go", "mode": "same-device"}, headers={"Accept-Language": "de"})
    play = play.headers["Location"]
    assert "Gastgeber (Schwarz) gegen Gast (Weiß)" in page(client.get(play, headers={"Accept-Language": "de"}))
    english = page(client.get(play, headers={"Accept-Language": "en"}))
    assert "Host (Black) vs Guest (White)" in english and "It is Host's turn (Black)." in english
    assert "Host vs Guest" in page(client.get("/", headers={"Accept-Language": "en"}))
    alone = client.post("/new", data={"game": "go", "mode": "computer"}, headers={"Accept-Language": "de"})
    shown = page(client.get(alone.headers["Location"], headers={"Accept-Language": "de"}))
    assert "Spieler (Schwarz) gegen computer (Weiß). Du spielst Spieler (Schwarz)." in shown


def test_a_fixed_option_is_named_in_the_readers_language(client, server):
    response = client.post("/new", data={"game": "go", "mode": "same-device", "komi": "0.5"},
                           headers={"Accept-Language": "de"})
    assert response.status_code == 400
    assert error_of(response) == "In hier begonnenen Partien wird Go mit Komi 7,5 gespielt; das lässt sich nicht wählen."


@pytest.mark.parametrize("fields, german, english", [
    ({"guest_name": "Gastgeber"}, "beide heißen Gastgeber", "both are Gastgeber"),  # beside an unnamed host
    ({"name": "gast", "mode": "same-device"}, "beide heißen gast", "both are gast"),  # beside an unnamed guest
    ({"guest_name": "Host"}, "beide heißen Gastgeber", "both are Host"),  # the word is the unnamed seat's
])
def test_two_seats_that_one_language_would_name_alike_are_refused(client, server, fields, german, english):
    """An unnamed seat is named in each reader's language, so a typed name clashes with
    it where one language would show both seats by the same word."""
    fields = {"game": "go", "mode": "friend", **fields}
    for accept, said in (("de", german), ("en", english)):
        refused = client.post("/new", data=fields, headers={"Accept-Language": accept})
        assert refused.status_code == 400 and said in error_of(refused)
    with reading(server.engine) as session:
        assert session.exec(select(Board)).first() is None
    shown = page(client.get(start(client, mode="friend", name="Gastgeberin"), headers={"Accept-Language": "de"}))
    assert "Gastgeberin (Schwarz) gegen Gast (Weiß)" in shown  # a name near the word is not the word


def test_a_same_device_page_speaks_to_both_sides(client, server):
    shown = page(client.get(start(client, name="Ada", guest_name="Grace")))
    assert "Ada (Black) vs Grace (White)" in shown and "You play" not in shown
    assert "Comment (kept with the move in the list of moves)" in shown and "Comment for your opponent" not in shown
    friend = page(client.get(start(client, mode="friend", name="Ada", guest_name="Grace")))
    assert "You play Ada (Black)." in friend and "Comment for your opponent" in friend


def test_the_form_keeps_what_was_typed_and_escapes_names(client, server):
    response = client.post("/new", data={"game": "go", "mode": "friend", "size": "12", "name": "<b>Ada</b>"})
    shown = response.get_data(as_text=True)
    assert 'value="&lt;b&gt;Ada&lt;/b&gt;"' in shown and re.search(r'name="mode" value="friend" checked', shown)
    play = start(client, name="<b>Ada</b>")
    shown = client.get(play).get_data(as_text=True)
    assert "&lt;b&gt;Ada&lt;/b&gt; (Black)" in shown and "<b>Ada</b>" not in shown


def test_unknown_game_page_and_cross_site_posts(app, client):
    assert client.get("/new?game=chess").status_code == 404
    cross = client.post("/new", data={"game": "go", "mode": "same-device"}, headers={"Origin": "https://evil.test"})
    assert cross.status_code == 403
    # A sandboxed frame of any site posts with "Origin: null": only a key the form page made lets it pass.
    framed = client.post("/new", data={"game": "go", "mode": "same-device"}, headers={"Origin": "null"})
    assert framed.status_code == 403
    key = re.search(r'name="form_key" value="([^"]+)"', page(client.get("/new"))).group(1)
    # Another site may fetch the form page too, but its key is for its own cookie: a
    # visitor's browser posting it (with or without a key cookie of its own) is refused.
    visitor = app.test_client()
    for cookie in ("none yet", "its own"):
        stolen = visitor.post("/new", data={"game": "go", "mode": "same-device", "form_key": key},
                              headers={"Origin": "null"})
        assert stolen.status_code == 403, cookie
        visitor.get("/new")  # the visitor's browser gets a key cookie of its own
    own = client.post("/new", data={"game": "go", "mode": "same-device", "form_key": key}, headers={"Origin": "null"})
    assert own.status_code == 303


def test_new_and_join_pages_carry_no_inline_script(app, client):
    invite = invite_of(client, start(client, mode="friend"))
    app.test_client().get(invite)
    for response in (client.get("/new"), client.get("/new?game=dragons"), app.test_client().get(invite),
                     client.post("/new", data={"game": "go", "mode": "x"})):
        shown = response.get_data(as_text=True)
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert not re.search(r"<script(?![^>]*\bsrc=)", shown)
        assert not re.search(r"\son[a-z]+=", shown) and " style=" not in shown


def test_a_browser_seat_cannot_be_challenged_by_its_userid(client, server, players, outbox):
    """A guest seat has no address to mail a board to: by mail it is nobody at all."""
    board = board_of(server, start(client, mode="friend"))
    guest = players_of(server, board)[1]
    result = players.send("alice@players.test", f"go challenge alice {guest.userid}")
    assert result.status == "rejected"
    assert result.error == (f"There is no player called {guest.userid}; name them by email address "
                            "to invite them.")


def test_the_status_page_names_browser_seats_as_they_chose(client, server):
    board = board_of(server, start(client, name="Ada", guest_name="Grace"))
    guests = players_of(server, board)
    listing = page(client.get("/"))
    assert "Ada" in listing and "Grace" in listing
    assert all(p.userid not in listing for p in guests)


def test_one_address_starts_a_bounded_number_of_games_an_hour(overrides):
    app = create_app({**overrides, "new_games_per_hour": 2})
    client, other = app.test_client(), app.test_client()
    start(client)
    for _ in range(3):  # a form refused for its contents counts for nothing
        assert client.post("/new", data={"game": "go", "mode": "nonsense"}).status_code == 400
    start(client, mode="friend")
    refused = client.post("/new", data={"game": "go", "mode": "same-device"})
    assert refused.status_code == 429
    assert "This address has started 2 games in the last hour, the most allowed" in page(refused)
    with reading(app.extensions["pbm"].engine) as session:
        assert len(session.exec(select(Room)).all()) == 2
    other.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    start(other)  # another address is not held back
    app.extensions["pbm"].engine.dispose()


def test_one_client_address_gets_a_bounded_number_of_invitations_mailed_an_hour(client, outbox):
    """Each address gets at most 3 invitations an hour, but a client could type a new
    address into each of its 20 games an hour (and more with each worker): the client
    address is bounded too, and the game still starts with its link to copy."""
    strangers = [f"stranger{n}@elsewhere.test" for n in range(6)]
    for _ in range(3):  # a form refused for its address counts for nothing
        assert client.post("/new", data={"game": "go", "mode": "friend", "email": "x"}).status_code == 400
    for address in strangers[:-1]:
        start(client, mode="friend", email=address)
    refused = client.post("/new", data={"game": "go", "mode": "friend", "email": strangers[-1]})
    assert refused.status_code == 429
    assert ("This address has had 5 invitations mailed in the last hour, the most "
            "allowed; leave your friend's address empty and send the link yourself.") in page(refused)
    assert outbox.to(strangers[-1]) == [] and all(len(outbox.to(address)) == 1 for address in strangers[:-1])
    start(client, mode="friend")  # without an address it still starts
    other = client.application.test_client()
    other.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    start(other, mode="friend", email=strangers[-1])  # another client address is not held back
    assert len(outbox.to(strangers[-1])) == 1


def test_a_burst_of_simultaneous_forms_starts_no_more_games_than_the_quota(overrides, monkeypatch):
    """Four forms from one address arrive together: each would pass a quota checked
    before any of them was counted. Starting a game here waits (up to 2 s) until all
    four are starting at once, which only happens when nothing holds them apart."""
    app = create_app({**overrides, "new_games_per_hour": 2})
    together = threading.Barrier(4, timeout=2)
    unhurried = rooms.start

    def start_together(*args, **kwargs):
        try:
            together.wait()
        except threading.BrokenBarrierError:
            pass  # held apart: the forms go one at a time
        return unhurried(*args, **kwargs)

    monkeypatch.setattr(rooms, "start", start_together)
    answers = []

    def send_form():
        answers.append(app.test_client().post("/new", data={"game": "go", "mode": "same-device"}).status_code)

    senders = [threading.Thread(target=send_form) for _ in range(4)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    assert sorted(answers) == [303, 303, 429, 429]
    with reading(app.extensions["pbm"].engine) as session:
        assert len(session.exec(select(Room)).all()) == 2
    app.extensions["pbm"].engine.dispose()


def test_new_rounds_count_against_the_same_quota(overrides):
    app = create_app({**overrides, "new_games_per_hour": 2})
    client = app.test_client()
    play = start(client)  # game 1 of the hour
    played(client, play, "resign")
    played(client, play, "newround")  # game 2: the new round (one press on one screen)
    second = board_of(app.extensions["pbm"], play).next_board_id
    with reading(app.extensions["pbm"].engine) as session:
        newer = session.get(Board, second)
    played(client, f"/play/{newer.token0}", "resign")
    refused = move(client, f"/play/{newer.token0}", "newround")
    assert refused.status_code == 429 and "the most allowed" in page(refused)
    with reading(app.extensions["pbm"].engine) as session:
        assert session.get(Board, second).next_board_id is None
    app.extensions["pbm"].engine.dispose()


@pytest.mark.parametrize("word", ["newr", "NEWRO"])
def test_a_new_round_asked_by_an_abbreviation_counts_against_the_same_quota(overrides, word):
    app = create_app({**overrides, "new_games_per_hour": 1})
    client = app.test_client()
    play = start(client)  # the hour's one game
    played(client, play, "resign")
    refused = move(client, play, word)
    assert refused.status_code == 429 and "the most allowed" in page(refused)
    assert board_of(app.extensions["pbm"], play).next_board_id is None
    app.extensions["pbm"].engine.dispose()


@pytest.mark.parametrize("language, sentence", [
    ("en", "This address has started 1 game in the last hour, the most allowed; finish or resume it, or try again "
           "later."),
    ("de", "Von dieser Adresse wurde in der letzten Stunde 1 Partie begonnen, mehr geht nicht; beende sie oder "
           "spiele sie weiter, oder versuche es später noch einmal."),
])
def test_a_quota_of_one_game_an_hour_is_said_in_the_singular(overrides, language, sentence):
    app = create_app({**overrides, "new_games_per_hour": 1})
    client = app.test_client()
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = language
    start(client)
    refused = client.post("/new", data={"game": "go", "mode": "same-device"})
    assert refused.status_code == 429 and sentence in page(refused)
    app.extensions["pbm"].engine.dispose()


def test_browser_seats_go_by_their_chosen_names_in_lists_records_and_refusals(client, server, players, outbox):
    """A guest seat's userid (guest-...) is an internal key: what others read is the name."""
    play = start(client, mode="friend", name="Ada", guest_name="Grace")
    board = board_of(server, play)
    guests = players_of(server, board)
    players.send("alice@players.test", "go list")
    listed = body(outbox.new()[-1])
    assert f"{board.id}  go" in listed and "Ada vs Grace" in " ".join(listed.split())
    assert all(guest.userid not in listed for guest in guests)
    sgf = client.get(f"/games/{board.id}.sgf").get_data(as_text=True)
    assert "PB[Ada]" in sgf and "PW[Grace]" in sgf
    assert server.play_by_token(board.token1, "E5").error == (
        f"It is not your turn on board {board.id}: it is Ada's turn (Black).")


def test_a_second_new_round_request_names_the_other_seat_as_it_chose(app, client, server):
    play = start(client, mode="friend", game="greatkingdom", size="5", name="Ada", guest_name="Grace")
    board = board_of(server, play)
    app.test_client().get(invite_of(client, play))  # Grace takes her seat
    played(client, play, "resign")
    shown = client.get(play).get_data(as_text=True)
    form = {"csrf": re.search(r'name="csrf" value="([0-9a-f]+)"', shown).group(1), "move": "newround",
            "number": re.search(r'name="number" value="(\d+)"', shown).group(1)}
    assert client.post(play, data=form).status_code == 303
    again = client.post(play, data=form)  # the form sent again, say from the browser's history
    assert again.status_code == 422
    assert error_of(again) == (f"You have already asked for a new round of board {board.id}; it starts when Grace "
                               "agrees.")


def test_a_move_the_server_plays_for_a_browser_seat_names_it_as_it_chose(app, client, server, players, outbox):
    """2 Dragons on 9x9: once a side has no point left in sight, the server passes for it
    and tells the board's watchers so, by the names the seats chose."""
    play = start(client, mode="friend", game="twodragons", size="9", name="Ada", guest_name="Grace")
    board = board_of(server, play)
    app.test_client().get(invite_of(client, play))
    watcher = "alice@players.test"
    assert players.send(watcher, f"twodragons subscribe {board.id} alice alicepw").status == "applied"
    game, rng, told = get_game("twodragons"), random.Random(0), None
    for _ in range(120):
        with reading(server.engine) as session:
            now = session.get(Board, board.id)
        state = game.from_json(now.state)
        seat = game.to_move(state)
        point = rng.choice([m for m in game.legal_moves(state) if m != "pass"])
        assert server.play_by_token((now.token0, now.token1)[seat], game.format_move(point)).error is None
        told = next((body(m) for m in outbox.to(watcher) if "had no other move" in body(m)), None)
        if told:
            break
    assert told is not None, "no forced pass happened"
    sentence = re.search(r"(\S+) had no other move: the server played pass for them", told)
    assert sentence.group(1) in ("Ada", "Grace")
    assert "guest-" not in told


def test_a_watchers_chat_names_the_browser_seats_as_they_chose(client, server, players, outbox):
    board = board_of(server, start(client, name="Ada"))  # the guest seat unnamed: Guest
    watcher = "alice@players.test"
    assert players.send(watcher, f"go subscribe {board.id} alice alicepw").status == "applied"
    assert players.send(watcher, f"go chat {board.id} alice alicepw", "hello guests").status == "applied"
    said = body(outbox.to(watcher)[-1])
    assert f"alice writes about board {board.id} (Ada vs Guest):" in said and "guest-" not in said


def test_no_account_takes_a_userid_of_the_browser_seats_kind(players):
    result = players.send("carol@players.test", "signup guest-abc secret")
    assert result.status == "rejected" and result.error.startswith(  # kept, not taken: nobody has it
        "\"guest-abc\" cannot be a userid: the server keeps it for its own use; choose another.")


def test_the_comment_field_says_who_reads_it(client, players):
    """A player who watches every new Go board reads a browser game's comments too, and
    the play page says so where the comment is written."""
    assert "Comment for your opponent</label>" in page(client.get(start(client, mode="friend")))
    assert players.send("alice@players.test", "go subscribe alice alicepw all").status == "applied"
    watched = page(client.get(start(client, mode="friend")))
    assert "Comment for your opponent and the board's 1 watcher</label>" in watched


def test_a_games_summary_for_the_browsers_list_is_how_it_stands_now_in_the_pages_language(client, server):
    play = start(client, size="13", name="Ada", guest_name="Bo")
    board = board_of(server, play)
    played(client, play, "D4")
    assert client.get(f"{play}/summary").json == {
        "board": board.id, "title": "Go (size 13)", "players": "Ada vs Bo", "status": "It is Bo's turn (White).",
        "href": play}
    client.set_cookie("lang", "de")
    german = client.get(f"{play}/summary").json
    assert (german["title"], german["status"]) == ("Go (Größe 13)", "Bo ist am Zug (Weiß).")
    assert client.get("/play/nosuchlink/summary").status_code == 404


def test_the_status_page_says_either_player_may_act_during_gos_scoring(client, server):
    play = start(client, size="9", name="Ada", guest_name="Bo")
    played(client, play, "pass")
    played(client, play, "pass")
    listed = page(client.get("/"))
    assert '<td data-label="Turn">either player may act</td>' in listed and ">active<" not in listed


def test_a_browser_game_cannot_be_declined(client, server):
    play = start(client)
    played(client, play, "D4")
    refused = move(client, play, "decline")
    assert refused.status_code == 422
    assert "A game started in the browser cannot be declined; resign ends it, and a new round can follow." in \
        page(refused)
    assert board_of(server, play).status == "active"


def test_a_new_round_against_the_computer_starts_when_the_person_asks(client, server):
    play = start(client, game="greatkingdom", mode="computer")
    played(client, play, "resign")
    played(client, play, "newround")
    assert board_of(server, play).next_board_id is not None  # the computer agreed at once
