"""Every change a page shows reaches open pages: each kind of change (a move, an
undo request and its answer, a draw offer and its answer, a queued and a submitted
move, a chat, a vacation starting and ending, Go's scoring marks, a vote for a new
round, expiry) raises the board's version and tells the live pages so, in this
process and, on PostgreSQL, by NOTIFY to every other web process; and the page
part the script fetches then shows the change."""

from __future__ import annotations

import json
from datetime import timedelta
from html import unescape

import pytest
from freezegun import freeze_time

from pbm.db import reading
from pbm.models import Board, utcnow
from pbm.service import events

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture(autouse=True)
def fresh_events():
    events.clear()  # boards of earlier tests' databases had the same numbers
    yield
    events.clear()


def board_row(server, board_id: int = 101) -> Board:
    with reading(server.engine) as session:
        return session.get(Board, board_id)


class OpenPages:
    """What the open pages of some boards learn: the version each page knows, the
    events published in this process, and on PostgreSQL the notices that another
    web process's listener would hear (a LISTEN connection of its own)."""

    def __init__(self, server, database_url: str, *board_ids: int):
        self.server = server
        self.known = {board_id: board_row(server, board_id).version for board_id in board_ids}
        self.heard: dict[str, int] = {}  # board id -> the latest version a notice named
        self.listening = None
        if database_url.startswith("postgresql"):
            import psycopg

            self.listening = psycopg.connect(events.conninfo_of(database_url), autocommit=True)
            self.listening.execute(f"LISTEN {events.CHANNEL}")

    def told(self, board_id: int = 101) -> int:
        """The board's version rose since the last look, and open pages were told the
        new version; returns it."""
        version = board_row(self.server, board_id).version
        assert version > self.known[board_id], "the change did not raise the board's version"
        assert events.wait(board_id, self.known[board_id], 0) == events.Change("change", version)
        if self.listening is not None:  # one notice per commit names every board it changed
            for note in self.listening.notifies(timeout=0 if self.heard.get(str(board_id)) == version else 2.0):
                self.heard.update(json.loads(note.payload))
                if self.heard.get(str(board_id)) == version:
                    break
            assert self.heard.get(str(board_id)) == version, self.heard
        self.known[board_id] = version
        return version

    def quiet(self, board_id: int = 101) -> None:
        """Nothing changed on the board: same version, no event."""
        assert board_row(self.server, board_id).version == self.known[board_id]
        assert events.wait(board_id, self.known[board_id], 0) is None

    def close(self) -> None:
        if self.listening is not None:
            self.listening.close()


@pytest.fixture
def pages(server, database_url):
    opened = []

    def open_(*board_ids: int) -> OpenPages:
        opened.append(OpenPages(server, database_url, *board_ids))
        return opened[-1]

    yield open_
    for each in opened:
        each.close()


def part(client, server, seat: int | None, board_id: int = 101) -> str:
    """The live part of a page as the script fetches it: the seat's play page, or the
    public board page (seat None); whitespace folded."""
    if seat is None:
        url = f"/games/{board_id}/live"
    else:
        url = f"/play/{board_row(server, board_id).token(seat)}/live"
    response = client.get(url)
    assert response.status_code == 200
    return " ".join(unescape(response.get_data(as_text=True)).split())


def actions(shown: str) -> list[str]:
    import re

    return re.findall(r'data-action="(\w+)"', shown)


def send(players, sender: str, line: str, text: str = "") -> None:
    result = players.send(sender, line, text)
    assert result.status == "applied", result.error


def test_every_change_a_page_shows_raises_the_version_and_tells_open_pages(players, server, client, pages):
    send(players, ALICE, "go challenge alice bob -size=9")
    page = pages(101)
    send(players, ALICE, "go move 101 alice alicepw E5")
    page.told()

    send(players, ALICE, "go move 101 alice alicepw undo")  # a take-back request: no new move
    page.told()
    assert board_row(server).move_count == 1
    assert "alice asks to take back move 1; bob may accept or reject." in part(client, server, None)
    assert actions(part(client, server, 1))[-3:] == ["accept", "reject", "resign"]
    send(players, BOB, "go move 101 bob bobpw reject")
    page.told()
    assert "asks to take back" not in part(client, server, 1) and "accept" not in actions(part(client, server, 1))

    send(players, ALICE, "go move 101 alice alicepw undo")
    page.told()
    send(players, BOB, "go move 101 bob bobpw accept")  # the answer that takes back
    page.told()
    assert "It is alice's turn" in part(client, server, None)

    send(players, ALICE, "go move 101 alice alicepw E5")
    page.told()
    send(players, BOB, "go move 101 bob bobpw propose")  # a draw offer
    page.told()
    assert "bob offers a draw; alice may accept or reject." in part(client, server, 0)
    send(players, ALICE, "go move 101 alice alicepw reject")
    page.told()
    assert "offers a draw" not in part(client, server, 0)

    send(players, ALICE, "go queue 101 alice alicepw C3")  # a queued move, shown to alice alone
    page.told()
    assert "Your queued move C3 is played the moment your turn comes." in part(client, server, 0)
    assert "queued move" not in part(client, server, 1) and "queued move" not in part(client, server, None)
    send(players, BOB, "go move 101 bob bobpw D4")  # alice's queued C3 follows at once
    page.told()
    assert board_row(server).move_count == 5 and "queued move" not in part(client, server, 0)

    send(players, BOB, "go submit 101 bob bobpw G7")  # a submitted move, shown to bob alone
    page.told()
    assert "You submitted G7; it is played when you send confirm by mail." in part(client, server, 1)
    assert "submitted" not in part(client, server, 0)
    send(players, BOB, "go confirm 101 bob bobpw")
    page.told()
    assert "You submitted" not in part(client, server, 1) and board_row(server).move_count == 6

    send(players, ALICE, "go chat 101 alice alicepw", "Well played.\n")  # a chat: no new move
    page.told()
    assert "<strong>alice</strong> (after move 6): Well played." in part(client, server, 1)
    assert "1 chat, for the players and the watchers." in part(client, server, None)

    send(players, BOB, "vacation bob bobpw 3")  # a vacation starting and ending
    page.told()
    assert "bob is on vacation until" in part(client, server, None)
    send(players, BOB, "vacation bob bobpw off")
    page.told()
    assert "on vacation" not in part(client, server, None)

    send(players, ALICE, "go move 101 alice alicepw pass")
    page.told()
    send(players, BOB, "go move 101 bob bobpw pass")
    page.told()
    send(players, ALICE, "go move 101 alice alicepw mark G7")  # Go's scoring marks
    page.told()
    assert "Scoring" in part(client, server, None)

    send(players, BOB, "go move 101 bob bobpw propose")
    page.told()
    send(players, ALICE, "go move 101 alice alicepw accept")  # the draw agreed: the game ends
    page.told()
    assert "Game drawn" in part(client, server, None)
    send(players, ALICE, "go move 101 alice alicepw newround")  # one vote for a new round
    page.told()
    assert "You asked for a new round; it starts when your opponent asks too." in part(client, server, 0)
    send(players, BOB, "go move 101 bob bobpw newround")
    page.told()
    assert 'The new round is <a href="/games/102">board 102</a>.' in part(client, server, None)


def test_a_refused_request_changes_nothing_pages_show(players, server, pages):
    send(players, ALICE, "go challenge alice bob -size=9")
    page = pages(101)
    assert players.send(ALICE, "go move 101 alice alicepw undo").status == "rejected"  # no move to take back
    assert players.send(BOB, "go move 101 bob bobpw accept").status == "rejected"  # nothing to accept
    page.quiet()


def test_a_vacation_tells_the_pages_of_every_running_board_and_its_end_by_the_clock(players, server, pages,
                                                                                     database_url):
    from pbm.scheduler import sweep

    send(players, ALICE, "greatkingdom challenge alice bob")
    send(players, ALICE, "twotigers challenge alice bob")
    send(players, ALICE, "greatkingdom challenge alice bob")
    send(players, ALICE, "greatkingdom resign 103 alice alicepw")  # over: no deadlines to hold
    page = pages(101, 102, 103)
    with freeze_time(utcnow()):
        send(players, BOB, "vacation bob bobpw 2")
    page.told(101), page.told(102)  # (outside the frozen clock: the notices are waited for)
    page.quiet(103)
    with freeze_time(utcnow() + timedelta(days=3)):  # the days run out: the scheduler ends it
        sweep(server)
    page.told(101), page.told(102)
    page.quiet(103)


def test_expiry_tells_the_pages(players, server, pages):
    send(players, ALICE, "greatkingdom challenge alice bob")
    send(players, ALICE, "greatkingdom move 101 alice alicepw D4")
    page = pages(101)
    assert server.expire_boards(now=utcnow() + timedelta(days=8)) == 1
    page.told()


def test_a_friend_joining_tells_the_hosts_page(app, client, server, pages):
    import re

    response = client.post("/new", data={"game": "greatkingdom", "mode": "friend", "name": "Ada"})
    host = response.headers["Location"]
    invite = re.search(r'data-invite href="http://pbm\.test(/join/\w+)"', client.get(host).get_data(as_text=True))[1]
    page = pages(101)
    assert "Nobody has opened the invitation yet." in " ".join(client.get(host + "/live").get_data(as_text=True).split())
    assert app.test_client().get(invite).status_code == 303
    page.told()
    assert "Your friend has joined." in client.get(host + "/live").get_data(as_text=True)
    assert app.test_client().get(invite).status_code == 409  # a full room changes nothing
    page.quiet()


CAROL = "carol@players.test"


def test_watching_a_board_and_leaving_it_tell_its_pages_and_the_count_follows(players, server, client, pages):
    send(players, ALICE, "greatkingdom challenge alice bob")
    send(players, CAROL, "signup carol carolpw")
    page = pages(101)
    assert "Watched by" not in part(client, server, None)
    send(players, CAROL, "greatkingdom subscribe 101 carol carolpw")
    page.told()
    assert 'data-watchers="1">Watched by 1</p>' in part(client, server, None)
    assert "Comment for your opponent and the board's 1 watcher" in part(client, server, 0)
    send(players, CAROL, "greatkingdom unsubscribe 101 carol carolpw")
    page.told()
    assert "Watched by" not in part(client, server, None) and "watcher" not in part(client, server, 0)
    assert players.send(CAROL, "greatkingdom unsubscribe 101 carol carolpw").status == "rejected"
    page.quiet()


def test_leaving_every_board_of_a_game_tells_the_running_boards_it_brought(players, server, client, pages):
    send(players, CAROL, "signup carol carolpw")
    send(players, CAROL, "greatkingdom subscribe carol carolpw all")
    for game in ("greatkingdom", "greatkingdom", "twotigers", "greatkingdom"):  # boards 101 to 104
        send(players, ALICE, f"{game} challenge alice bob")
    send(players, ALICE, "greatkingdom resign 104 alice alicepw")  # over: its page is not live
    send(players, CAROL, "greatkingdom unsubscribe 102 carol carolpw")  # left out already
    assert 'data-watchers="1">Watched by 1</p>' in part(client, server, None, 101)
    page = pages(101, 102, 103, 104)
    result = players.send(CAROL, "greatkingdom unsubscribe carol carolpw all")
    assert result.status == "applied" and result.board is None  # the answer is about no one board
    page.told(101)
    page.quiet(102), page.quiet(103), page.quiet(104)
    assert "Watched by" not in part(client, server, None, 101)


def test_a_watcher_signing_off_tells_the_pages_of_the_boards_watched(players, server, client, pages):
    send(players, CAROL, "signup carol carolpw")
    send(players, ALICE, "greatkingdom challenge alice bob")
    send(players, CAROL, "greatkingdom subscribe 101 carol carolpw")
    send(players, CAROL, "twotigers subscribe carol carolpw all")
    send(players, ALICE, "twotigers challenge alice bob")
    page = pages(101, 102)
    send(players, CAROL, "signoff carol carolpw")
    page.told(101), page.told(102)
    assert "Watched by" not in part(client, server, None, 101) + part(client, server, None, 102)


def test_the_list_of_a_players_boards_follows_every_board_of_theirs(players, server, client):
    from pbm.web.play import boards_mark

    send(players, ALICE, "greatkingdom challenge alice bob")
    token, alice = board_row(server).token0, board_row(server).seat0_id

    def listed() -> str:
        response = client.get(f"/play/{token}/boards")
        assert response.status_code == 200
        return " ".join(unescape(response.get_data(as_text=True)).split())

    def digest() -> str:
        with reading(server.engine) as session:
            return boards_mark(session, alice)

    page = client.get(f"/play/{token}").get_data(as_text=True)
    shown, mark = digest(), events.player_mark(alice)
    assert f'data-boards-live="/play/{token}/boards" data-boards-mark="{shown}"' in page
    send(players, BOB, "twotigers challenge bob alice")  # a board someone else began
    assert events.player_mark(alice) > mark and digest() != shown
    assert "Two Tigers board 102</a> against bob: <strong>bob's turn</strong>" in listed()
    shown, mark = digest(), events.player_mark(alice)
    send(players, BOB, "twotigers chat 102 bob bobpw", "Hello!\n")  # a change the list does not show
    assert events.player_mark(alice) > mark and digest() == shown
    send(players, ALICE, "twotigers move 102 alice alicepw decline")  # the challenged player declines
    assert "Two Tigers board 102</a> against bob: <strong>finished</strong>" in listed() and digest() != shown
    assert client.get("/play/notatoken/boards").status_code == 404
