"""Pages in a real browser (headless Chromium): history by buttons, keys and
slider; every control reachable by Tab with a visible focus; every page at
390 px without sideways scrolling and 19x19 Go played by tap; axe-core finding
no serious or critical violation; screenshots for the README; the pages
without JavaScript."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbm.games import REGISTRY

from .browser import (ALICE, DESKTOP, HAVE_CHROMIUM, PHONE, axe_source, axe_violations, fits_width, new_browser,
                      screenshot)
from .browser.driving import (by_css, click, focus_board, follow, keys, open_page, shown_move, status, wait_for_move,
                              waiter)
from .browser.fixtures import browsers, desktop, phone, second, site  # noqa: F401 (fixtures)
from .conftest import make_mail

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed "
                                "(Debian packages chromium, chromium-driver; .ci/run installs them)")

GAMES = tuple(sorted(REGISTRY))


def test_history_buttons_keys_and_slider(site, desktop):
    from selenium.webdriver.common.keys import Keys

    board = site.board("go", moves=["D4", "E5", "C3"])
    open_page(desktop, board.url)
    assert shown_move(desktop) == 3
    click(desktop, '[data-history-step="first"]')
    wait_for_move(desktop, 0)
    keys(desktop, Keys.ARROW_RIGHT, Keys.END)  # the page's own keys (scrolling): no history step
    focus_board(desktop)
    keys(desktop, Keys.ARROW_RIGHT)  # the board's keys page through the history
    wait_for_move(desktop, 1)
    assert desktop.current_url.endswith("?move=1")
    keys(desktop, Keys.END)
    wait_for_move(desktop, 3)
    slider = by_css(desktop, "[data-history-slider]")
    slider.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)  # keys move the slider; Enter shows its move
    assert by_css(desktop, "[data-history-output]").text == "1 of 3" and shown_move(desktop) == 3
    slider.send_keys(Keys.ENTER)
    wait_for_move(desktop, 1)
    assert desktop.current_url.endswith("?move=1")
    waiter(desktop).until(lambda d: d.execute_script(
        "return document.activeElement.matches('[data-history-slider]')"), "the slider to have the focus again")
    by_css(desktop, "[data-history-slider]").send_keys(Keys.ARROW_RIGHT, Keys.ENTER)
    wait_for_move(desktop, 2)
    assert desktop.current_url.endswith("?move=2")
    click(desktop, '[data-history-step="last"]')
    wait_for_move(desktop, 3)
    assert desktop.current_url == board.url  # the page itself, without a stray "?"


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
    assert by_css(phone, '[data-setting="confirm"]').is_selected()  # on a touch screen a finger misses:
    click(phone, '[data-point="K10"]')  # the first tap selects
    assert shown_move(phone) == 4
    scrolled = phone.execute_script("return window.scrollY")
    assert scrolled > 0  # the board is below the page's top on a phone
    click(phone, '[data-point="K10"]')
    wait_for_move(phone, 5)
    assert site.moves(go19)[-1] == "K10"
    waiter(phone).until(lambda d: d.execute_script("return window.scrollY") == scrolled,
                        "the page to come back where the player was")


SCROLLED = "const f = document.querySelector('[data-board-frame]'); return [f.scrollLeft, f.scrollTop]"


def zoom_in_to_r3(phone):
    """Zoom the open page's board in twice and scroll R3 into view; returns the test
    that the board is zoomed in that far (to wait for after the page comes back)."""
    frame_width = phone.execute_script("return document.querySelector('[data-board-frame]').clientWidth")
    waiter(phone).until(lambda d: by_css(d, "[data-zoom]").is_displayed(), "the zoom buttons (the script)")
    click(phone, '[data-zoom-step="1"]')
    click(phone, '[data-zoom-step="1"]')

    def zoomed_in(driver) -> bool:
        return driver.execute_script("return document.querySelector('svg.board').clientWidth") >= 1.9 * frame_width

    waiter(phone).until(zoomed_in, "the board zoomed in")
    phone.execute_script("document.querySelector('[data-point=\"R3\"]').scrollIntoView({block: 'center'})")
    return zoomed_in


def test_a_zoomed_in_board_stays_zoomed_in_where_it_was_after_a_move_on_a_phone(site, phone):
    """The move is sent by the page's form, so the page comes back: it comes back zoomed
    in as far as it was, the board scrolled inside its frame to the same place (a phone
    player on 19x19 would otherwise zoom in and find the corner again for every move)."""
    board = site.board("go", "-size=19", moves=["Q16", "D4"])
    open_page(phone, board.play_url(0))
    zoomed_in = zoom_in_to_r3(phone)
    click(phone, '[data-point="R3"]')  # the first tap selects
    kept = phone.execute_script(SCROLLED)
    assert kept[0] > 0  # scrolled to the right inside the frame
    click(phone, '[data-point="R3"]')
    wait_for_move(phone, 3)
    waiter(phone).until(zoomed_in, "the board zoomed in again")
    assert [abs(now - then) <= 1 for now, then in zip(phone.execute_script(SCROLLED), kept)] == [True, True]
    assert fits_width(phone)[0] <= PHONE[0]


def test_a_zoomed_in_board_stays_zoomed_in_while_the_history_steps_on_a_phone(site, phone):
    """Each step through the history loads the position's page: it comes back zoomed in
    as far, showing the same part of the board."""
    board = site.board("go", "-size=19", moves=["Q16", "D4", "R3", "C17"])
    open_page(phone, board.url)
    zoomed_in = zoom_in_to_r3(phone)
    kept = phone.execute_script(SCROLLED)
    assert kept[0] > 0
    phone.execute_script("document.querySelector('[data-history-step=\"previous\"]').scrollIntoView()")
    click(phone, '[data-history-step="previous"]')
    wait_for_move(phone, 3)
    waiter(phone).until(zoomed_in, "the board zoomed in again")
    assert [abs(now - then) <= 1 for now, then in zip(phone.execute_script(SCROLLED), kept)] == [True, True]


def test_a_chat_holding_a_long_link_fits_a_phone(site, phone):
    """A chat's words come from a mail: a link (or any word) longer than the screen is
    wide breaks inside the chat rather than widening the page."""
    board = site.board("go", moves=["D4"])
    link = "https://example.com/" + "alongpathsegment" * 8
    assert site.mail(ALICE, f"go chat {board.id} alice alicepw", f"look at {link}")["status"] == "applied"
    open_page(phone, board.play_url(1))
    assert link in by_css(phone, ".chats").text
    scroll_width, inner_width = fits_width(phone)
    assert inner_width == PHONE[0] and scroll_width <= inner_width


def watchers_link(site, board) -> str:
    """The one-click unsubscribe link of a watcher's mails of ``board`` (carol watches it)."""
    from pbm.db import reading
    from pbm.models import Player
    from pbm.service.unsubscribe import link

    for subject in ("signup carol carolpw", f"go subscribe {board.id} carol carolpw"):
        assert site.service.handle_raw(make_mail("carol@players.test", subject)).status == "applied"
    with reading(site.service.engine) as session:
        carol = session.exec(select(Player).where(Player.userid == "carol")).one()
    return link(site.service.settings, carol.id, board.id).replace(site.service.settings.base_url, site.base)


def test_pages_pass_axe_and_screenshots_at_desktop_width(site, desktop):
    boards = example_boards(site)
    source = axe_source()
    pages = {"status": site.base + "/", "go-board": boards["go"].url, "unsubscribe": watchers_link(site, boards["go"])}
    pages.update({name: boards[name].play_url(0) for name in GAMES})
    for name, url in pages.items():
        desktop.get(url)
        violations = axe_violations(desktop, source)
        assert violations == [], (name, violations)
        if name == "unsubscribe":
            assert by_css(desktop, "main form button").text == "Stop the mails of this board"
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
        # Resign asks once more, on a page of its own; "No" goes back, "Yes" resigns
        driver.get(board.play_url(1))
        follow(driver, '[data-action="resign"]')
        assert "Resign this game? It cannot be taken back." in by_css(driver, "[data-confirm-resign]").text
        follow(driver, "[data-confirm-resign] a")
        assert not driver.find_elements("css selector", "[data-confirm-resign]") and shown_move(driver) == 1
        follow(driver, '[data-action="resign"]')
        follow(driver, "[data-confirm-resign] button")
        assert status(driver) == "Game won by alice (Black): White resigned."
    finally:
        driver.quit()
