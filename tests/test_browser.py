"""The pages in a real browser (headless Chromium): every game played by pointer
and by keyboard, Two Tigers' leap chain, a Dragons cell and orientation, Go's
scoring by taps, the opponent's move arriving live, a second tab taking over,
history, phones (390 px), no console errors, axe-core, and the pages without
JavaScript. One server and three browsers serve the whole module."""

from __future__ import annotations

import time

import pytest

from .browser import (DESKTOP, HAVE_CHROMIUM, PHONE, Site, axe_source, axe_violations, console_errors,
                      fits_width, new_browser, screenshot, start_server, stop_server)

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed "
                                "(Debian packages chromium, chromium-driver; .ci/run installs them)")

GAMES = ("go", "greatkingdom", "twodragons", "twotigers", "dragons")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from pbm.config import load_settings
    from pbm.service import Service

    directory = tmp_path_factory.mktemp("browser")
    process, base = start_server(directory)
    service = Service(load_settings({"instance_path": str(directory / "instance"),
                                     "maildir": str(directory / "maildir"), "server_address": "pbm@pbm.test",
                                     "secret_key": "browser-test-key"}))
    yield Site(base, service)
    service.engine.dispose()
    stop_server(process)


@pytest.fixture(scope="module")
def browsers():
    opened = {}

    def get(name: str):
        if name not in opened:
            opened[name] = new_browser(PHONE, phone=True) if name == "phone" else new_browser(DESKTOP)
        return opened[name]

    yield get
    for driver in opened.values():
        driver.quit()


@pytest.fixture
def desktop(browsers):
    driver = browsers("desktop")
    yield driver
    assert console_errors(driver) == []


@pytest.fixture
def second(browsers):
    driver = browsers("second")
    yield driver
    assert console_errors(driver) == []


@pytest.fixture
def phone(browsers):
    driver = browsers("phone")
    yield driver
    assert console_errors(driver) == []


# -- helpers ---------------------------------------------------------------------


def by_css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, selector)


def waiter(driver, timeout: float = 10):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))


def open_page(driver, url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    driver.get(url)
    waiter(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "svg.board")))


def shown_move(driver) -> int:
    return int(by_css(driver, "svg.board").get_attribute("data-move-number"))


def wait_for_move(driver, number: int, timeout: float = 10) -> None:
    from selenium.common.exceptions import WebDriverException

    def shows(d) -> bool:
        try:
            return shown_move(d) == number
        except WebDriverException as error:  # the page is being replaced
            if LEFT not in str(error):
                raise
            return False

    waiter(driver, timeout).until(shows, f"the board to show move {number}")


def follow(driver, selector):
    """Click something that loads a new page, and wait until that page has loaded
    (a find right after the click could still see the old page)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    old = by_css(driver, "html")
    click(driver, selector)
    waiter(driver).until(lambda d: left_document(old))
    waiter(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")
    waiter(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "svg.board")))


LEFT = "does not belong to the document"  # chromedriver's word for a node of a page being left


def left_document(element) -> bool:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if LEFT in str(error):
            return True
        raise
    return False


def click(driver, selector):
    """Click the element; a click that starts loading another page may be reported by
    chromedriver as the node having left the document: the click was made."""
    from selenium.common.exceptions import WebDriverException
    try:
        by_css(driver, selector).click()
    except WebDriverException as error:
        if LEFT not in str(error):
            raise


def keys(driver, *sequence):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).send_keys(*sequence).perform()


def focus_board(driver):
    driver.execute_script("document.querySelector('[data-board-frame]').focus()")


def status(driver) -> str:
    return by_css(driver, "[data-status]").text


def explanation(driver) -> str:
    waiter(driver).until(lambda d: by_css(d, "[data-explain-text]").text.strip())
    return by_css(driver, "[data-explain-text]").text


# -- playing by pointer and keyboard --------------------------------------------


def test_go_by_click_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go")
    open_page(desktop, board.play_url(0))
    click(desktop, '[data-point="D5"]')  # a tap selects: nothing is sent yet
    assert by_css(desktop, '[data-point="D5"]').get_attribute("class").split().count("selected") == 1
    assert by_css(desktop, '[data-action="play"]').text == "Play D5"
    assert shown_move(desktop) == 0
    click(desktop, '[data-point="D5"]')  # the second tap places the stone
    wait_for_move(desktop, 1)
    assert status(desktop) == "It is bob's turn (White)."
    assert desktop.find_elements("css selector", "[data-move-form]") == []  # no form for who just moved

    open_page(desktop, board.play_url(1))
    focus_board(desktop)
    keys(desktop, Keys.HOME)  # the cursor starts in the centre, E5
    assert "cursor" in by_css(desktop, '[data-point="E5"]').get_attribute("class").split()
    keys(desktop, Keys.ARROW_LEFT)  # D5 holds Black's stone: Enter explains, sends nothing
    keys(desktop, Keys.ENTER)
    assert explanation(desktop) == "D5 is already occupied; choose an empty point."
    keys(desktop, Keys.ARROW_UP, Keys.ARROW_RIGHT, Keys.SPACE)  # E6 selected
    assert by_css(desktop, '[data-action="play"]').text == "Play E6"
    keys(desktop, Keys.ENTER)
    wait_for_move(desktop, 2)
    assert site.moves(board) == ["D5", "E6"]


def test_great_kingdom_with_confirmation_off_and_by_keyboard(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("greatkingdom")
    open_page(desktop, board.play_url(0))
    setting = by_css(desktop, '[data-setting="confirm"]')
    assert setting.is_displayed() and setting.is_selected()
    setting.click()  # remembered in this browser: one tap plays
    try:
        click(desktop, '[data-point="C3"]')
        wait_for_move(desktop, 1)
        open_page(desktop, board.play_url(1))
        assert not by_css(desktop, '[data-setting="confirm"]').is_selected()
        focus_board(desktop)
        keys(desktop, Keys.HOME, Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ENTER)  # E3
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
    click(desktop, '[data-action="play"]')
    wait_for_move(desktop, 1)
    open_page(desktop, board.play_url(1))
    focus_board(desktop)
    keys(desktop, Keys.HOME)
    centre = by_css(desktop, "[data-point].cursor").get_attribute("data-point")
    keys(desktop, Keys.ENTER, Keys.ENTER)
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


# -- live, takeover, history --------------------------------------------------


def test_a_move_in_one_browser_shows_in_the_other_within_two_seconds(site, desktop, second):
    board = site.board("greatkingdom", moves=["C3"])
    open_page(desktop, board.play_url(0))  # alice waits for bob
    assert desktop.find_elements("css selector", "[data-move-form]") == []
    open_page(second, board.play_url(1))
    click(second, '[data-point="G7"]')
    started = time.monotonic()
    click(second, '[data-action="play"]')
    wait_for_move(desktop, 2, timeout=2)
    seen_after = time.monotonic() - started
    print(f"\nthe opponent's move showed after {seen_after * 1000:.0f} ms")
    assert status(desktop) == "It is alice's turn (Blue)."
    click(desktop, '[data-point="D4"]')  # the new part of the page plays like the old one
    click(desktop, '[data-point="D4"]')
    wait_for_move(desktop, 3)
    wait_for_move(second, 3, timeout=2)
    assert site.moves(board) == ["C3", "G7", "D4"]


def test_a_second_tab_takes_the_seat_over(site, desktop):
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
        wait_for_move(second, 1, timeout=20)  # the page retries with a growing pause, at most 15 s
        assert second.find_elements("css selector", "[data-move-form]")
        # While the server was away the browser logged the broken and refused stream.
        assert all("/events?" in error for error in console_errors(second))
    finally:
        second.get("about:blank")  # leave the page before its server stops for good
        service.engine.dispose()
        stop_server(process)


def test_history_buttons_keys_and_slider(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go", moves=["D4", "E5", "C3"])
    open_page(desktop, board.url)
    assert shown_move(desktop) == 3
    click(desktop, '[data-history-step="first"]')
    wait_for_move(desktop, 0)
    keys(desktop, Keys.ARROW_RIGHT)
    wait_for_move(desktop, 1)
    focus_board(desktop)
    keys(desktop, Keys.END)
    wait_for_move(desktop, 3)
    slider = by_css(desktop, "[data-history-slider]")
    slider.send_keys(Keys.ARROW_LEFT)
    wait_for_move(desktop, 2)
    assert desktop.current_url.endswith("?move=2")
    click(desktop, '[data-history-step="last"]')
    wait_for_move(desktop, 3)


def test_keyboard_reaches_every_control_with_visible_focus(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go", moves=["D4", "pass"])
    open_page(desktop, board.play_url(0))
    desktop.execute_script(
        "window.reached = [];"
        "document.addEventListener('focusin', e => { const t = e.target, s = getComputedStyle(t);"
        " window.reached.push([t.getAttribute('data-action') || (t.hasAttribute('data-board-frame') && 'board')"
        " || t.getAttribute('data-zoom-step') || t.getAttribute('data-history-step') || t.name || t.tagName,"
        " s.outlineStyle + ' ' + s.outlineWidth]); });"
        "document.activeElement.blur();")
    keys(desktop, *[Keys.TAB] * 40)
    focused = desktop.execute_script("return window.reached")
    reached, outlines = [name for name, _ in focused], dict(focused)
    for wanted in ("board", "-1", "1", "pass", "resign", "move", "comment", "first", "previous"):
        assert wanted in reached, (wanted, reached)
        assert outlines[wanted].startswith("solid"), (wanted, outlines[wanted])
    focus_board(desktop)
    keys(desktop, Keys.HOME)
    stroke = desktop.execute_script(
        "return getComputedStyle(document.querySelector('[data-point].cursor')).stroke")
    assert stroke not in ("none", "")


# -- phones, accessibility, screenshots, no JavaScript -------------------------


def example_boards(site):
    """One board of each game a few moves in, and a 19x19 Go board."""
    from pbm.games import get_game

    boards = {}
    for name in GAMES:
        game = get_game(name)
        board = site.board(name)
        state = game.initial_state(game.parse_options({}))
        for _ in range(4):
            moves = [m for m in game.legal_moves(state) if game.format_move(m) not in ("pass", "done")]
            move = moves[len(moves) // 3]
            site.play(board, game.format_move(move))
            state = game.apply(state, game.actors(state)[0], move)
        boards[name] = board
    boards["go19"] = site.board("go", "-size=19", moves=["Q16", "D4", "Q4", "D16"])
    return boards


def test_phone_pages_fit_and_nineteen_by_nineteen_plays_by_tap(site, phone):
    boards = example_boards(site)
    pages = [site.base + "/"] + [b.url for b in boards.values()] + [b.play_url(0) for b in boards.values()]
    for url in pages:
        phone.get(url)
        scroll_width, inner_width = fits_width(phone)
        assert inner_width == PHONE[0] and scroll_width <= inner_width, url
    for name in GAMES:
        open_page(phone, boards[name].play_url(0))
        screenshot(phone, f"{name}-phone")

    go19 = boards["go19"]
    open_page(phone, go19.play_url(0))
    frame_width = phone.execute_script("return document.querySelector('[data-board-frame]').clientWidth")
    assert frame_width >= PHONE[0] - 40  # the board fills the width
    click(phone, '[data-zoom-step="1"]')
    click(phone, '[data-zoom-step="1"]')
    assert phone.execute_script("return document.querySelector('svg.board').clientWidth") >= 1.9 * frame_width
    assert fits_width(phone)[0] <= PHONE[0]  # the board scrolls inside its frame, not the page
    phone.execute_script("document.querySelector('[data-point=\"K10\"]').scrollIntoView({block: 'center'})")
    click(phone, '[data-point="K10"]')  # the confirm step stays on a phone
    assert shown_move(phone) == 4
    click(phone, '[data-point="K10"]')
    wait_for_move(phone, 5)
    assert site.moves(go19)[-1] == "K10"


def test_pages_pass_axe_and_screenshots_at_desktop_width(site, desktop):
    boards = example_boards(site)
    source = axe_source()
    pages = {"status": site.base + "/", "go-board": boards["go"].url}
    pages.update({name: boards[name].play_url(0) for name in GAMES})
    for name, url in pages.items():
        desktop.get(url)
        violations = axe_violations(desktop, source)
        assert violations == [], (name, violations)
        if name in GAMES:
            screenshot(desktop, f"{name}-desktop")
    # The check can fail: a button without a name is a critical violation.
    desktop.execute_script("document.querySelector('main').appendChild(document.createElement('button'))")
    assert [v["id"] for v in axe_violations(desktop, source)] == ["button-name"]


def test_pages_work_without_javascript(site):
    driver = new_browser(DESKTOP, javascript=False)
    try:
        board = site.board("go")
        driver.get(board.play_url(0))
        assert not by_css(driver, "[data-settings]").is_displayed()  # the script would show it
        field = by_css(driver, "#move")
        assert field.get_attribute("autofocus") is None
        field.send_keys("Z99")
        follow(driver, "[data-move-form] button[type=submit]")
        assert "Z99 is off the board" in by_css(driver, "[data-error]").text
        assert by_css(driver, "#move").get_attribute("value") == "Z99"  # the typed move stays
        by_css(driver, "#move").clear()
        by_css(driver, "#move").send_keys("e5")
        follow(driver, "[data-move-form] button[type=submit]")
        assert shown_move(driver) == 1 and status(driver) == "It is bob's turn (White)."
        follow(driver, '[data-history-step="first"]')
        assert shown_move(driver) == 0
    finally:
        driver.quit()
