"""Playing in a real browser (headless Chromium): every game by pointer and by
keyboard, Two Tigers' leap chain, a Dragons cell and orientation, Go's scoring
by taps, the opponent's move arriving live, a second tab taking over, and a page
finding its server again. One server and a few browsers serve the module."""

from __future__ import annotations

import time

import pytest

from .browser import (ALICE, HAVE_CHROMIUM, Site, axe_source, axe_violations, console_errors, make_mail, start_server,
                      stop_server)
from .browser.driving import (by_css, click, explanation, focus_board, keys, open_page, shown_move, status,
                              waiter, wait_for_move)
from .browser.fixtures import browsers, desktop, phone, second, site  # noqa: F401 (fixtures)
from .conftest import wait_until

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed "
                                "(Debian packages chromium, chromium-driver; .ci/run installs them)")


# -- playing by pointer and keyboard --------------------------------------------


def test_go_by_click_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go")
    open_page(desktop, board.play_url(0))
    click(desktop, '[data-point="D5"]')  # one click plays (interface.md)
    wait_for_move(desktop, 1)
    assert status(desktop) == "It is bob's turn (White)."
    assert desktop.find_elements("css selector", "[data-move-form]") == []  # no form for who just moved

    open_page(desktop, board.play_url(1))
    focus_board(desktop)
    keys(desktop, Keys.HOME)  # the cursor starts in the centre, E5
    assert "cursor" in by_css(desktop, '[data-point="E5"]').get_attribute("class").split()
    keys(desktop, Keys.ARROW_LEFT)  # D5 holds Black's stone: Enter explains, sends nothing
    announced = desktop.execute_script("return document.querySelector('body > p[aria-live=polite]').textContent")
    assert announced == "D5, a black stone, not playable now"  # what a screen reader says of the cursor
    keys(desktop, Keys.ENTER)
    assert explanation(desktop) == "D5 is already occupied; choose an empty point."
    keys(desktop, Keys.ARROW_UP, Keys.ARROW_RIGHT, Keys.SPACE)  # Space plays E6 as Enter does
    wait_for_move(desktop, 2)
    assert site.moves(board) == ["D5", "E6"]


def board_has_focus(driver) -> bool:
    return driver.execute_script("return document.activeElement.hasAttribute('data-board-frame')")


def test_the_board_takes_the_keyboard_focus_when_it_is_yours_to_play(site, desktop, second):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go")
    open_page(second, board.play_url(1))  # bob waits: nothing to play, the keys page through the history
    assert second.execute_script("return document.activeElement === document.body")
    open_page(desktop, board.play_url(0))
    waiter(desktop).until(board_has_focus, "alice's board to take the focus")
    keys(desktop, Keys.HOME, Keys.ARROW_UP, Keys.ENTER)  # no click first: E6 played
    wait_for_move(desktop, 1)
    wait_for_move(second, 1)  # alice's move arrives on bob's open page, and with it bob's turn
    waiter(second).until(board_has_focus, "bob's board to take the focus when his turn came")
    announced = second.execute_script("return document.querySelector('body > p[aria-live=polite]').textContent")
    assert "last move E6" in announced and announced.endswith("It is bob's turn (White).")  # for a screen reader
    keys(second, Keys.HOME, Keys.ENTER)
    wait_for_move(second, 2)
    assert site.moves(board) == ["E6", "E5"]


def test_great_kingdom_with_confirmation_on_by_click_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("greatkingdom")
    open_page(desktop, board.play_url(0))
    setting = by_css(desktop, '[data-setting="confirm"]')
    assert setting.is_displayed() and not setting.is_selected()  # off on a desktop: one click plays
    setting.click()  # remembered in this browser: a tap selects, a second places
    try:
        click(desktop, '[data-point="C3"]')
        assert by_css(desktop, '[data-point="C3"]').get_attribute("class").split().count("selected") == 1
        assert by_css(desktop, '[data-action="play"]').text == "Play C3"
        assert shown_move(desktop) == 0  # nothing sent yet
        click(desktop, '[data-point="C3"]')
        wait_for_move(desktop, 1)
        open_page(desktop, board.play_url(1))
        assert by_css(desktop, '[data-setting="confirm"]').is_selected()
        focus_board(desktop)
        keys(desktop, Keys.HOME, Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ENTER)  # E3 selected
        assert by_css(desktop, '[data-action="play"]').text == "Play E3"
        keys(desktop, Keys.ENTER)
        wait_for_move(desktop, 2)
    finally:
        open_page(desktop, board.play_url(0))
        by_css(desktop, '[data-setting="confirm"]').click()
    assert site.moves(board) == ["C3", "E3"]


def test_two_dragons_by_click_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("twodragons")
    open_page(desktop, board.play_url(0))
    point = by_css(desktop, "[data-point].target").get_attribute("data-point")
    click(desktop, f'[data-point="{point}"]')
    wait_for_move(desktop, 1)
    open_page(desktop, board.play_url(1))
    focus_board(desktop)
    keys(desktop, Keys.HOME)
    centre = by_css(desktop, "[data-point].cursor").get_attribute("data-point")
    keys(desktop, Keys.ENTER)
    wait_for_move(desktop, 2)
    assert site.moves(board) == [point, centre]


def test_two_tigers_step_by_click_keyboard_and_a_leap_chain(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("twotigers")
    open_page(desktop, board.play_url(0))
    click(desktop, '[data-point="b3"]')  # a pile, then where its top goat goes
    assert "chain" in by_css(desktop, '[data-point="b3"]').get_attribute("class").split()
    click(desktop, '[data-point="c1"]')  # not a line from b3: the server's sentence, nothing sent
    assert explanation(desktop) == "b3 is not adjacent to c1 on this board."
    click(desktop, '[data-point="b4"]')
    wait_for_move(desktop, 1)
    open_page(desktop, board.play_url(1))
    focus_board(desktop)
    keys(desktop, Keys.HOME, Keys.ARROW_DOWN, Keys.ENTER, Keys.ARROW_LEFT, Keys.ENTER)  # tiger c2 to b2
    wait_for_move(desktop, 2)
    assert site.moves(board) == ["b3-b4", "c2-b2"]

    site.play(board, "b4-c3")  # now the tiger on b2 can leap b4, then d2, then on to d4
    open_page(desktop, board.play_url(1))
    for point in ("b2", "b4", "d2"):
        click(desktop, f'[data-point="{point}"]')
    assert by_css(desktop, '[data-point="d4"]').get_attribute("class").split().count("target") == 1
    assert by_css(desktop, '[data-action="play"]').text == "Play b2-b4-d2"
    click(desktop, '[data-action="play"]')  # stop here although the chain could go on
    wait_for_move(desktop, 4)
    assert site.moves(board)[-1] == "b2-b4-d2"


def test_dragons_cell_then_orientation_by_click_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("dragons")
    open_page(desktop, board.play_url(0))
    cell = by_css(desktop, "[data-cell]").get_attribute("data-cell")
    click(desktop, f'[data-cell="{cell}"]')
    waiter(desktop).until(lambda d: d.find_elements("css selector", "[data-orientation]"))
    orientation = by_css(desktop, "[data-orientation]").get_attribute("data-orientation")
    click(desktop, f'[data-orientation="{orientation}"]')
    wait_for_move(desktop, 1)
    assert site.moves(board)[0] == f"{cell}:{orientation}"

    open_page(desktop, board.play_url(1))
    cells = [e.get_attribute("data-cell") for e in desktop.find_elements("css selector", "[data-cell]")]
    assert len(cells) == len(set(cells))
    listed = desktop.find_elements("css selector", ".playable tbody tr")
    assert len(listed) == len(cells)  # each playable cell listed once
    focus_board(desktop)
    keys(desktop, Keys.HOME, Keys.ENTER)  # the cell at the cursor: its orientations, the first one focused
    waiter(desktop).until(lambda d: d.switch_to.active_element.get_attribute("class") == "orientation-choice")
    chosen = desktop.switch_to.active_element.get_attribute("value")
    keys(desktop, Keys.ENTER)
    wait_for_move(desktop, 2)
    assert site.moves(board)[1] == chosen


def test_go_scoring_by_taps_to_an_agreed_result(site, desktop, second):
    board = site.board("go", moves=["C3", "G7", "C4", "G6", "D3"])
    open_page(second, board.play_url(1))
    click(second, '[data-action="pass"]')
    wait_for_move(second, 6)
    open_page(desktop, board.play_url(0))
    click(desktop, '[data-action="pass"]')
    wait_for_move(desktop, 7)
    assert "Either player may act now." == status(desktop)
    click(desktop, '[data-point="G6"]')  # marks White's group dead, at once (no confirm for marks)
    wait_for_move(desktop, 8)
    assert desktop.find_elements("css selector", "svg.board .dead-marks")
    click(desktop, '[data-action="done"]')
    wait_for_move(desktop, 9)
    wait_for_move(second, 9, timeout=2)  # the other page follows by itself
    click(second, '[data-action="done"]')
    wait_for_move(second, 10)
    assert status(second).startswith("Game won by alice (Black): area scoring.")
    assert site.moves(board)[5:] == ["pass", "pass", "mark G6", "done", "done"]
    assert by_css(second, '[data-action="newround"]').is_displayed()


# -- live, takeover, reconnecting --------------------------------------------------


def test_a_move_in_one_browser_shows_in_the_other_within_two_seconds(site, desktop, second):
    board = site.board("greatkingdom", moves=["C3"])
    open_page(desktop, board.play_url(0))  # alice waits for bob
    assert desktop.find_elements("css selector", "[data-move-form]") == []
    click(desktop, '[data-point="E5"]')  # every picture names its points; a waiting page plays nothing
    assert by_css(desktop, '[data-point="E5"]').get_attribute("class") is None  # not selected, not a target
    open_page(second, board.play_url(1))
    started = time.monotonic()
    click(second, '[data-point="G7"]')
    wait_for_move(desktop, 2, timeout=2)
    seen_after = time.monotonic() - started
    print(f"\nthe opponent's move showed after {seen_after * 1000:.0f} ms")
    assert status(desktop) == "It is alice's turn (Blue)."
    click(desktop, '[data-point="D4"]')  # the new part of the page plays like the old one
    wait_for_move(desktop, 3)
    wait_for_move(second, 3, timeout=2)
    assert site.moves(board) == ["C3", "G7", "D4"]


def test_your_boards_and_the_watcher_count_follow_changes_without_a_reload(site, desktop, second):
    """Bob's play page lists his boards; a board begun by mail and a move on his board
    show in the list as they happen. The public board page counts its watchers as
    carol starts and stops watching. Neither page is loaded again."""
    board = site.board("greatkingdom")
    open_page(desktop, board.play_url(1))
    desktop.execute_script("window.pbmSamePage = true;")  # gone if the page were loaded again

    def turn(driver, board_id: int) -> str:
        return by_css(driver, f'#my-boards [data-my-board="{board_id}"] strong').text

    assert turn(desktop, board.id) == "alice's turn"
    other = site.mail(ALICE, "twotigers challenge alice bob")["board"]  # a new board of his
    waiter(desktop, 2).until(lambda d: turn(d, other) == "alice's turn", "the new board in bob's list")
    assert site.mail(ALICE, f"greatkingdom move {board.id} alice alicepw D4")["status"] == "applied"
    waiter(desktop, 2).until(lambda d: turn(d, board.id) == "your turn", "bob's turn in his list")

    open_page(second, board.url)
    second.execute_script("window.pbmSamePage = true;")
    assert second.find_elements("css selector", "[data-watchers]") == []
    carol = "carol@players.test"
    assert site.service.handle_raw(make_mail(carol, "signup carol carolpw")).status == "applied"
    assert site.mail(carol, f"greatkingdom subscribe {board.id} carol carolpw")["status"] == "applied"
    waiter(second, 2).until(lambda d: by_css(d, "[data-watchers]").text == "Watched by 1", "the watcher counted")
    assert site.mail(carol, f"greatkingdom unsubscribe {board.id} carol carolpw")["status"] == "applied"
    waiter(second, 2).until(lambda d: d.find_elements("css selector", "[data-watchers]") == [], "no watcher")
    assert desktop.execute_script("return window.pbmSamePage") is True
    assert second.execute_script("return window.pbmSamePage") is True


def test_a_second_tab_takes_the_seat_over(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("twotigers")
    open_page(desktop, board.play_url(0))
    first = desktop.current_window_handle
    assert not by_css(desktop, "[data-takeover]").is_displayed()
    desktop.switch_to.new_window("tab")
    open_page(desktop, board.play_url(0))
    try:
        desktop.switch_to.window(first)
        waiter(desktop, 5).until(lambda d: by_css(d, "[data-takeover]").is_displayed())
        assert "open in another tab" in by_css(desktop, "[data-takeover]").text
        # The dimmed board, move form and buttons take no click, nor the keyboard (inert):
        # Tab goes from the notice's button past them, and axe finds no dimmed text to read.
        announced = desktop.execute_script("return document.querySelector('body > p[aria-live=polite]').textContent")
        assert "open in another tab" in announced  # for a screen reader
        desktop.execute_script("document.querySelector('[data-take-back]').focus()")
        keys(desktop, Keys.TAB)
        assert desktop.execute_script("return !document.activeElement.closest('.board-frame, .move-form, .actions')")
        assert axe_violations(desktop, axe_source()) == []
    finally:
        for handle in desktop.window_handles:
            if handle != first:
                desktop.switch_to.window(handle)
                desktop.close()
        desktop.switch_to.window(first)


def test_a_page_reconnects_after_the_server_was_away_and_catches_up(tmp_path, second):
    """The server stops; a move is made meanwhile; the server comes back on the same
    port; the open page finds it by itself and shows the move."""
    from urllib.parse import urlsplit

    from pbm.config import load_settings
    from pbm.service import Service

    process, base = start_server(tmp_path)
    service = Service(load_settings({"instance_path": str(tmp_path / "instance"), "maildir": str(tmp_path / "m"),
                                     "server_address": "pbm@pbm.test", "secret_key": "browser-test-key"}))
    try:
        site = Site(base, service)
        board = site.board("twodragons")
        open_page(second, board.play_url(1))
        stop_server(process)
        site.play(board, "E5")
        process, _ = start_server(tmp_path, port=urlsplit(base).port)
        wait_for_move(second, 1, timeout=20)  # the page retries with a growing pause, at most 2 s
        assert second.find_elements("css selector", "[data-move-form]")
        # While the server was away the browser logged the broken and refused stream.
        assert all("/events?" in error for error in console_errors(second))
        # Away long enough for six tries (the pause has grown as far as it goes), the
        # server comes back; a move made then shows as soon as any other (it waited up
        # to 15 s for the page's next try).
        stop_server(process)
        refused: list[str] = []

        def tried_six_times() -> bool:
            refused.extend(console_errors(second))
            return len(refused) >= 6

        wait_until(tried_six_times, "six tries to reconnect")
        process, _ = start_server(tmp_path, port=urlsplit(base).port)
        site.play(board, "C3")
        wait_for_move(second, 2, timeout=5)
        assert all("/events?" in error for error in refused + console_errors(second))
    finally:
        second.get("about:blank")  # leave the page before its server stops for good
        service.engine.dispose()
        stop_server(process)
