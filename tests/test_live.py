"""Live pages: the in-process events, the server-sent event streams of a real
server (a move wakes every open page within 2 s, 50 pages at once, a page that
was away catches up, a second tab takes a seat over), the cap on streams, and
a commit in one process wakes a stream served by another (PostgreSQL's
NOTIFY, datagrams between the processes of a SQLite file). Streams
name the board's version, which every change a page shows raises
(``test_live_changes.py`` goes through each kind of change)."""

from __future__ import annotations

import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from pbm.service import events

from .browser import ALICE, BOB, Site, start_server, stop_server
from .conftest import make_mail


# -- the events, in one process ---------------------------------------------------


def later(seconds: float, work) -> threading.Timer:
    timer = threading.Timer(seconds, work)
    timer.start()
    return timer


def test_a_published_version_wakes_a_waiting_page_and_old_versions_do_not():
    events.publish({9001: 4})
    assert events.wait_for_change(9001, 4, 0.05) is None
    later(0.05, lambda: events.publish({9001: 5}))
    assert events.wait_for_change(9001, 4, 5) == 5
    events.publish({9001: 3})  # late news of an older commit: the version stays
    assert events.wait(9001, 4, 0.05) == events.Change("change", 5)
    assert events.wait(9001, 5, 0.05) is None
    assert events.wait(9001, 7, 0.05) is None  # the page read a newer version from the database


def test_a_tab_taking_the_seat_replaces_the_waiting_one():
    events.take_seat("9002:0", "tab-one")
    assert events.wait(9002, 0, 0.05, "9002:0", "tab-one") is None
    later(0.05, lambda: events.take_seat("9002:0", "tab-two"))
    assert events.wait(9002, 0, 5, "9002:0", "tab-one") == events.Change("replaced")
    assert events.wait(9002, 0, 0.05, "9002:0", "tab-two") is None
    assert events.holder("9002:0") == "tab-two"


def test_a_reset_tells_every_stream_to_check_again():
    later(0.05, events.reset_streams)
    assert events.wait(9003, 0, 5) == events.Change("resync")


def test_notices_from_postgresql_are_read_and_bad_ones_dropped(caplog):
    events.receive(events.CHANNEL, '{"9004": 2}')
    assert events.wait(9004, 1, 0) == events.Change("change", 2)
    events.receive(events.SEAT_CHANNEL, '{"seat": "9004:1", "tab": "abc"}')
    assert events.holder("9004:1") == "abc"
    events.receive(events.CHANNEL, "not json")
    events.receive(events.CHANNEL, '["a list"]')
    events.receive(events.SEAT_CHANNEL, '{"seat": "x"}')
    assert len([r for r in caplog.records if "dropped a malformed" in r.message]) == 3


def test_a_players_mark_rises_with_any_of_their_boards_and_wakes_their_list():
    alice, bob, carol = 97001, 97002, 97003
    events.publish({9101: 3}, {9101: (alice, bob)})
    mark = events.player_mark(alice)
    assert events.wait(9100, 0, 0.05, player=alice, mark=mark) is None
    events.publish({9101: 3}, {9101: (alice, bob)})  # the same notice again (a process hears its own)
    events.publish({9103: 8}, {9103: (bob, carol)})  # a board alice does not sit at
    assert events.wait(9100, 0, 0.05, player=alice, mark=mark) is None
    later(0.05, lambda: events.publish({9102: 1}, {9102: (carol, alice)}))  # a new board of hers
    woke = events.wait(9100, 0, 5, player=alice, mark=mark)
    assert woke is not None and woke.kind == "boards" and woke.version > mark
    mark = woke.version
    events.receive(events.CHANNEL, '{"9101": 4}')  # a move on one of her boards, heard from PostgreSQL
    assert events.wait(9100, 0, 0, player=alice, mark=mark).kind == "boards"
    assert events.wait(9100, 0, 0) is None  # a page that does not follow the list is not woken


def test_the_players_notice_is_read_in_any_order_and_bad_ones_dropped(caplog):
    dave = 97004
    mark = events.player_mark(dave)
    events.receive(events.CHANNEL, '{"9104": 2}')  # the version first, who sits there after
    assert events.player_mark(dave) == mark
    events.receive(events.PLAYERS_CHANNEL, '{"9104": [97004, 97005]}')
    assert events.player_mark(dave) == mark + 2
    events.receive(events.PLAYERS_CHANNEL, '{"9105": 3}')
    events.receive(events.PLAYERS_CHANNEL, '{"x": [1, 2]}')
    assert len([r for r in caplog.records if "dropped a malformed" in r.message]) == 2


def test_the_notices_of_a_big_commit_fit_postgresqls_payload_limit():
    versions = {2_000_000_000 + i: 2_000_000_000 for i in range(400)}
    seated = {board_id: (2_000_000_001, 2_000_000_002) for board_id in versions}
    notices = events.notices(versions, seated)
    assert all(len(payload.encode()) < 8000 for _channel, payload in notices)
    heard = {}
    for channel, payload in notices:
        heard.setdefault(channel, {}).update(json.loads(payload))
    assert heard[events.CHANNEL] == {str(k): v for k, v in versions.items()}
    assert heard[events.PLAYERS_CHANNEL] == {str(k): list(v) for k, v in seated.items()}


# -- streams from a real server ----------------------------------------------------


class EventStream:
    """One server-sent event stream, read by a thread over its own HTTP connection."""

    def __init__(self, base: str, path: str):
        parts = urlsplit(base)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream"})
        self.socket = self.connection.sock
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.events: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        name, data = None, None
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                elif line == "" and name:
                    self.events.put((name, data))
                    name, data = None, None
        except (OSError, ValueError, http.client.HTTPException):  # the test hung up
            pass
        finally:
            self.response.close()

    def next_event(self, timeout: float) -> tuple[str, dict] | None:
        """The next named event, or None if none comes within ``timeout`` seconds
        (comments and the retry line are not events)."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Hang up: the reader sees the end of the stream and stops."""
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.reader.join(5)
        self.connection.close()


def webhook(base: str, sender: str, subject: str, text: str = "") -> dict:
    request = urllib.request.Request(base + "/inbound/email", data=make_mail(sender, subject, text),
                                     headers={"Content-Type": "message/rfc822"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A server on SQLite, and a service beside it to set boards up."""
    from pbm.config import load_settings
    from pbm.service import Service

    directory = tmp_path_factory.mktemp("live")
    process, base = start_server(directory)
    service = Service(load_settings({"instance_path": str(directory / "instance"),
                                     "maildir": str(directory / "maildir"), "server_address": "pbm@pbm.test"}))
    yield Site(base, service)
    service.engine.dispose()
    stop_server(process)


def test_a_move_reaches_an_open_page_within_two_seconds_and_a_late_page_catches_up(live):
    board = live.board("greatkingdom")
    before = live.version(board)
    stream = EventStream(live.base, f"/games/{board.id}/events?known={before}")
    try:
        assert stream.status == 200
        assert stream.response.getheader("Content-Type").startswith("text/event-stream")
        assert stream.response.getheader("Cache-Control") == "no-store"
        assert stream.next_event(0.3) is None  # nothing new yet
        started = time.monotonic()
        assert webhook(live.base, ALICE, f"greatkingdom move {board.id} alice alicepw D4")["status"] == "applied"
        after = live.version(board)
        assert after > before and stream.next_event(2.0) == ("change", {"version": after})
        print(f"\nthe stream had the move {1000 * (time.monotonic() - started):.0f} ms after the mail was sent")
    finally:
        stream.close()
    late = EventStream(live.base, f"/games/{board.id}/events?known={before}")  # a page that was away
    try:
        assert late.next_event(1.0) == ("change", {"version": after})
    finally:
        late.close()


def test_a_draw_offer_and_its_answer_reach_an_open_page_without_a_move(live):
    board = live.board("greatkingdom", moves=["D4"])
    known = live.version(board)
    stream = EventStream(live.base, f"/play/{board.tokens[0]}/events?known={known}&tab=tab-alice-01&claim=1")
    try:
        assert stream.next_event(0.3) is None
        assert webhook(live.base, BOB, f"greatkingdom move {board.id} bob bobpw propose")["status"] == "applied"
        offered = live.version(board)
        assert offered > known and stream.next_event(2.0) == ("change", {"version": offered})
        assert webhook(live.base, ALICE, f"greatkingdom move {board.id} alice alicepw reject")["status"] == "applied"
        answered = live.version(board)
        assert answered > offered and stream.next_event(2.0) == ("change", {"version": answered})
        assert live.moves(board) == ["D4"]  # no move was made: the count alone would not have told the page
    finally:
        stream.close()


def boards_mark(url: str) -> str:
    """The digest of the "Your boards" list a play page shows (what its script sends)."""
    import re

    with urllib.request.urlopen(url, timeout=10) as page:
        return re.search(r'data-boards-mark="([0-9a-f]+)"', page.read().decode())[1]


def test_a_play_page_hears_when_its_list_of_boards_changes_and_only_then(live):
    board = live.board("greatkingdom")
    token, known = board.tokens[0], live.version(board)
    shown = boards_mark(board.play_url(0))
    stream = EventStream(live.base, f"/play/{token}/events?known={known}&tab=tab-list-001&claim=1&boards={shown}")
    try:
        assert stream.status == 200 and stream.next_event(0.3) is None  # the list shown is the list
        assert webhook(live.base, ALICE, "twotigers challenge alice bob")["status"] == "applied"  # a new board
        name, data = stream.next_event(2.0)
        assert name == "boards" and data["mark"] != shown and data["mark"] == boards_mark(board.play_url(0))
        shown = data["mark"]
        other = webhook(live.base, ALICE, "greatkingdom challenge alice bob")["board"]
        assert stream.next_event(2.0) == ("boards", {"mark": boards_mark(board.play_url(0))})
        assert webhook(live.base, ALICE, f"greatkingdom move {other} alice alicepw D4")["status"] == "applied"
        moved = stream.next_event(2.0)  # whose turn it is on another board
        assert moved == ("boards", {"mark": boards_mark(board.play_url(0))}) and moved[1]["mark"] != shown
        chat = webhook(live.base, BOB, f"greatkingdom chat {other} bob bobpw", "Good luck!\n")
        assert chat["status"] == "applied"  # a change of one of her boards that the list does not show
        assert stream.next_event(0.5) is None
    finally:
        stream.close()
    late = EventStream(live.base, f"/play/{token}/events?known={known}&tab=tab-list-001&boards={shown}")
    try:  # a page that was away is sent the list's digest at once
        assert late.status == 200 and late.next_event(1.0) == ("boards", {"mark": boards_mark(board.play_url(0))})
    finally:
        late.close()


def stream_when_a_slot_is_free(base: str, path: str, within: float = 15.0) -> EventStream:
    """A stream opened once the server has a slot for it: a stream the tests before
    closed holds its slot until its next heartbeat (at most 8 s), and the server
    refuses (503) while all its slots are held."""
    deadline = time.monotonic() + within
    while True:
        stream = EventStream(base, path)
        if stream.status != 503 or time.monotonic() > deadline:
            return stream
        stream.close()
        time.sleep(0.2)  # polling for the condition (a free slot), bounded by the deadline


def test_fifty_open_pages_all_see_the_move_and_pages_still_load(live):
    board = live.board("greatkingdom")
    streams = [stream_when_a_slot_is_free(live.base, f"/games/{board.id}/events?known={live.version(board)}")
               for _ in range(50)]
    try:
        assert [s.status for s in streams] == [200] * 50
        started = time.monotonic()
        with urllib.request.urlopen(board.url, timeout=5) as page:
            assert page.status == 200
        page_seconds = time.monotonic() - started
        assert webhook(live.base, ALICE, f"greatkingdom move {board.id} alice alicepw D4")["status"] == "applied"
        sent = time.monotonic()
        seen = [s.next_event(max(0.01, sent + 2.0 - time.monotonic())) for s in streams]
        assert seen == [("change", {"version": live.version(board)})] * 50
        print(f"\nwith 50 pages open: a board page took {1000 * page_seconds:.0f} ms; all 50 had the "
              f"move {1000 * (time.monotonic() - sent):.0f} ms after the webhook answered")
    finally:
        for s in streams:
            s.close()


def test_a_second_tab_of_a_seat_replaces_the_first(live):
    board = live.board("greatkingdom")
    token, known = board.tokens[0], live.version(board)
    first = EventStream(live.base, f"/play/{token}/events?known={known}&tab=tab-one-123&claim=1")
    second = None
    try:
        assert first.next_event(0.3) is None
        second = EventStream(live.base, f"/play/{token}/events?known={known}&tab=tab-two-456&claim=1")
        assert first.next_event(2.0) == ("replaced", {})
        assert second.next_event(0.3) is None
        back = EventStream(live.base, f"/play/{token}/events?known={known}&tab=tab-one-123")  # it reconnects
        assert back.next_event(1.0) == ("replaced", {})
        back.close()
        other_seat = EventStream(live.base, f"/play/{board.tokens[1]}/events?known={known}&tab=tab-three-789"
                                            "&claim=1")
        assert second.next_event(0.3) is None  # the opponent's seat is another seat
        other_seat.close()
    finally:
        first.close()
        if second:
            second.close()


# -- the cap and the end of a stream, in process -------------------------------------


def test_streams_are_capped_and_end_after_their_time(app, client, players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    app.config.update(PBM_MAX_STREAMS=2, PBM_STREAM_SECONDS=0.3)
    held = [client.get("/games/101/events?known=0", buffered=False) for _ in range(2)]
    try:
        refused = client.get("/games/101/events?known=0")
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "10"
    finally:
        for response in held:
            response.close()
    ending = client.get("/games/101/events?known=0", buffered=False)
    whole = ending.get_data(as_text=True)  # the stream ends by itself
    ending.close()
    assert app.extensions["pbm_streams"].open == 0
    assert whole.startswith("retry: 1000\n\n") and whole.endswith("event: again\ndata: {}\n\n")
    assert client.get("/games/999/events").status_code == 404
    assert client.get("/play/notatoken/events").status_code == 404


def test_one_client_may_hold_a_quarter_of_the_streams(app, client, players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    app.config.update(PBM_MAX_STREAMS=8)
    one, other = {"REMOTE_ADDR": "198.51.100.7"}, {"REMOTE_ADDR": "203.0.113.9"}
    held = [client.get("/games/101/events?known=0", buffered=False, environ_base=one) for _ in range(2)]
    try:
        refused = client.get("/games/101/events?known=0", environ_base=one)
        assert refused.status_code == 503  # this client has its share
        held.append(client.get("/games/101/events?known=0", buffered=False, environ_base=other))
        assert held[-1].status_code == 200  # another still gets one
    finally:
        for response in held:
            response.close()
    assert app.extensions["pbm_streams"].open == 0 and app.extensions["pbm_streams"].by_client == {}


# -- between processes: LISTEN/NOTIFY on PostgreSQL, datagrams on SQLite ---------------


def ingest(database_url: str, directory, raw: bytes) -> None:
    """One mail handled by ``pbm ingest``: another process than the server."""
    env = {**os.environ, "PBM_DATABASE_URL": database_url, "PBM_INSTANCE_PATH": str(directory / "ingest"),
           "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-m", "pbm.cli", "ingest"], input=raw, env=env, capture_output=True)
    assert done.returncode == 0 and done.stdout.startswith(b"applied"), done


@contextmanager
def served(database_url: str, tmp_path):
    """A real server on the database, and a service beside it to set boards up: the Site."""
    from pbm.config import load_settings
    from pbm.service import Service

    process, base = start_server(tmp_path, database_url)
    service = Service(load_settings({"database_url": database_url, "instance_path": str(tmp_path / "setup"),
                                     "server_address": "pbm@pbm.test"}))
    try:
        yield Site(base, service)
    finally:
        service.engine.dispose()
        stop_server(process)


def test_a_commit_in_one_process_wakes_a_stream_in_another(database_url, tmp_path):
    """The move comes from ``pbm ingest`` and reaches the server's stream through the
    server's listener: NOTIFY on PostgreSQL, a datagram beside the SQLite file."""
    with served(database_url, tmp_path) as site:
        board = site.board("greatkingdom")
        before = site.version(board)
        stream = EventStream(site.base, f"/games/{board.id}/events?known={before}")
        try:
            assert stream.next_event(0.5) is None
            started = time.monotonic()
            ingest(database_url, tmp_path, make_mail(ALICE, f"greatkingdom move {board.id} alice alicepw D4"))
            assert stream.next_event(2.0) == ("change", {"version": site.version(board)}) and site.version(board) > before
            print(f"\n{database_url.split(':')[0]}: the stream had the move "
                  f"{1000 * (time.monotonic() - started):.0f} ms after the mail was handed over")
        finally:
            stream.close()


def test_a_new_board_made_in_another_process_reaches_the_players_list(database_url, tmp_path):
    """The list of boards a play page shows follows a board begun elsewhere, by ``pbm
    ingest`` (NOTIFY pbm_players on PostgreSQL, a datagram on SQLite)."""
    with served(database_url, tmp_path) as site:
        board = site.board("greatkingdom")
        shown = boards_mark(board.play_url(1))
        stream = EventStream(site.base, f"/play/{board.tokens[1]}/events?known={site.version(board)}&boards={shown}")
        try:
            assert stream.next_event(0.5) is None
            ingest(database_url, tmp_path, make_mail(ALICE, "go challenge alice bob"))
            assert stream.next_event(2.0) == ("boards", {"mark": boards_mark(board.play_url(1))})
        finally:
            stream.close()


def test_a_seat_takeover_reaches_another_server_process(database_url, tmp_path):
    """Two servers on one database: NOTIFY pbm_seat on PostgreSQL, a datagram on SQLite."""
    from pbm.config import load_settings
    from pbm.service import Service

    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, base_one = start_server(tmp_path / "one", database_url)
    two, base_two = start_server(tmp_path / "two", database_url)
    service = Service(load_settings({"database_url": database_url, "instance_path": str(tmp_path / "setup"),
                                     "server_address": "pbm@pbm.test"}))
    try:
        site = Site(base_one, service)
        board = site.board("greatkingdom")
        known = site.version(board)
        first = EventStream(base_one, f"/play/{board.tokens[0]}/events?known={known}&tab=tab-on-one&claim=1")
        assert first.next_event(0.5) is None
        second = EventStream(base_two, f"/play/{board.tokens[0]}/events?known={known}&tab=tab-on-two&claim=1")
        assert first.next_event(2.0) == ("replaced", {})
        first.close()
        second.close()
    finally:
        service.engine.dispose()
        stop_server(one)
        stop_server(two)


def test_the_listener_thread_hears_a_commit_of_another_process(database_url, tmp_path):
    """LISTEN on PostgreSQL; on SQLite a datagram socket beside the database file."""
    from pbm.config import load_settings
    from pbm.service import Service

    service = Service(load_settings({"database_url": database_url, "instance_path": str(tmp_path),
                                     "server_address": "pbm@pbm.test"}))
    events.clear()  # boards of earlier tests' databases had the same numbers
    if database_url.startswith("postgresql"):
        listener = events.start_listener(database_url)
    else:
        listener = events.start_sqlite_listener(events.live_directory(service.engine))
    try:
        assert listener.listening.wait(10)
        site = Site("http://unused", service)
        board = site.board("greatkingdom")
        before = site.version(board)
        ingest(database_url, tmp_path, make_mail(ALICE, f"greatkingdom move {board.id} alice alicepw D4"))
        assert events.wait_for_change(board.id, before, 2.0) == site.version(board) > before
    finally:
        events.stop_listener()
        service.engine.dispose()
