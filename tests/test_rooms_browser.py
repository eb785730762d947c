"""Games started at /new in a real browser (headless Chromium): a same-device Go game
to its end and the browser listing it to resume; a friend game across two browser
profiles (invitation copied, live moves, rejoin from the invitation, a third browser
refused, a new round both agree to); Go 9x9 against GNU Go to its end, its answers
arriving by themselves; the form without JavaScript."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from .browser import HAVE_CHROMIUM, new_browser, start_server, stop_server
from .browser.driving import (act, by_css, click, follow, left_document, open_page, shown_move, start, status,
                              tap, waiter, wait_for_move, wait_shown)
from .browser.fixtures import browsers, desktop, second, site  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed "
                                "(Debian packages chromium, chromium-driver; .ci/run installs them)")


def board_of(site, play_url: str):
    """The board behind a play page's URL, as the database has it now."""
    from sqlmodel import select

    from pbm.db import reading
    from pbm.models import Board

    token = play_url.rsplit("/", 1)[1]
    with reading(site.service.engine) as session:
        return session.exec(select(Board).where((Board.token0 == token) | (Board.token1 == token))).one()


def test_a_same_device_go_game_to_its_end_and_resumed_from_new(site, desktop):
    start(desktop, site.base, "same-device", name="Ada", guest_name="Bo")
    play = desktop.current_url
    assert by_css(desktop, '[data-room-mode="same-device"]').is_displayed()
    assert status(desktop) == "It is Ada's turn (Black)."
    tap(desktop, "D5", 1)
    assert status(desktop) == "It is Bo's turn (White)."  # the same page now plays White
    tap(desktop, "E5", 2)
    act(desktop, "pass", 3)
    act(desktop, "pass", 4)
    assert status(desktop) == "Either player may act now."
    click(desktop, '[data-point="E5"]')  # Black marks White's stone dead
    wait_for_move(desktop, 5)
    act(desktop, "done", 6)  # White agrees,
    act(desktop, "done", 7)  # and Black
    assert status(desktop).startswith("Game won by Ada (Black): area scoring.")
    assert desktop.current_url == play

    desktop.get(f"{site.base}/new")  # the browser remembers the game and offers it
    waiter(desktop).until(lambda d: by_css(d, "[data-saved-games]").is_displayed())
    saved = by_css(desktop, '[data-saved="same-device"] a')
    assert saved.get_attribute("href") == play and saved.text.startswith("Go (size 9), board ")
    assert "Game won by Ada (Black)" in by_css(desktop, '[data-saved="same-device"] li').text
    follow(desktop, '[data-saved="same-device"] a')
    assert desktop.current_url == play and shown_move(desktop) == 7


def test_a_friend_game_across_two_browsers_rejoin_and_a_third_refused(site, desktop, second, browsers):
    start(desktop, site.base, "friend", name="Ada")
    host_page = desktop.current_url
    invite = by_css(desktop, "[data-invite]").get_attribute("href")
    assert invite.startswith(f"{site.base}/join/")
    desktop.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": site.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    click(desktop, "[data-copy-invite]")
    waiter(desktop).until(lambda d: by_css(d, "[data-copied]").text == "Copied.")
    copied = desktop.execute_async_script(
        "const done = arguments[0]; navigator.clipboard.readText().then(done, e => done('failed: ' + e))")
    assert copied == invite

    second.get(invite)  # the friend's browser takes White
    waiter(second).until(lambda d: d.find_elements("css selector", "svg.board"))
    guest_page = second.current_url
    assert guest_page.startswith(f"{site.base}/play/") and guest_page != host_page
    assert "You play Guest (White)." in by_css(second, ".players").text
    assert second.find_elements("css selector", "[data-invite]") == []

    tap(desktop, "D5", 1)
    wait_for_move(second, 1, timeout=2)  # live, without reloading
    tap(second, "E5", 2)
    wait_for_move(desktop, 2, timeout=2)

    second.get(invite)  # the same browser opening the invitation again: its own seat
    waiter(second).until(lambda d: d.current_url == guest_page)
    wait_for_move(second, 2)
    third = browsers("third")
    third.get(invite)
    waiter(third).until(lambda d: d.find_elements("css selector", "[data-room-full]"))
    assert by_css(third, "h1").text == "The room is full"

    act(desktop, "resign", 3)
    wait_for_move(second, 3, timeout=2)
    assert status(second).startswith("Game won by Guest (White)")
    act(second, "newround", 3)
    act(desktop, "newround", 0)  # the second vote begins the new round: the form goes on to its board
    assert desktop.current_url != host_page and status(desktop) == "It is Ada's turn (Black)."
    waiter(second).until(lambda d: d.find_elements("css selector", ".live a[href*='/play/']"))  # a link to it
    second.get(invite)  # the invitation now leads to the new round, White again
    waiter(second).until(lambda d: d.current_url != guest_page and d.find_elements("css selector", "svg.board"))
    assert shown_move(second) == 0 and "You play Guest (White)." in by_css(second, ".players").text
    assert status(second) == "It is Ada's turn (Black)."

    tap(desktop, "C3", 1)  # the host's list of games on /new says how the latest round stands now
    desktop.get(f"{site.base}/new")
    waiter(desktop).until(lambda d: "It is Guest's turn (White)." in by_css(d, '[data-saved="friend"] li').text)
    desktop.get(f"{site.base}/language/de?next=/new")
    try:
        waiter(desktop).until(lambda d: "Gast ist am Zug (Weiß)." in by_css(d, '[data-saved="friend"] li').text)
        assert by_css(desktop, '[data-saved="friend"] a').text.startswith("Go (Größe 9), Brett ")
    finally:
        desktop.get(f"{site.base}/language/en?next=/new")  # the browser serves the next tests too


def test_forgetting_a_remembered_game_by_keyboard_keeps_the_focus_in_the_list(site, desktop):
    """Forget rebuilds the list of games this browser remembers: the keyboard's place is
    the next game's Forget button, and with the last game gone the game choice (the
    list hides), never the page's top."""
    from selenium.webdriver.common.keys import Keys

    from .browser.driving import keys

    desktop.get(f"{site.base}/new")
    desktop.execute_script("localStorage.clear()")
    for name in ("Ann", "Ben"):
        start(desktop, site.base, "same-device", game="twotigers", name=name)
    desktop.get(f"{site.base}/new?game=twotigers")
    waiter(desktop).until(lambda d: len(d.find_elements("css selector", "[data-saved] li")) == 2)
    desktop.execute_script("document.querySelector('[data-saved] li button').focus()")
    keys(desktop, Keys.ENTER)
    waiter(desktop).until(lambda d: len(d.find_elements("css selector", "[data-saved] li")) == 1)
    assert desktop.execute_script("return document.activeElement === document.querySelector('[data-saved] button')")
    assert desktop.execute_script("return getComputedStyle(document.activeElement).outlineStyle") == "solid"
    keys(desktop, Keys.ENTER)
    waiter(desktop).until(lambda d: not by_css(d, "[data-saved-games]").is_displayed())
    assert desktop.execute_script("return document.activeElement.getAttribute('data-game-choice')") == "twotigers"


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """A server whose GNU Go starts only once the file ``gate`` exists, so the test
    decides when the computer answers; a service on its database beside it."""
    from pbm.config import load_settings
    from pbm.players import available
    from pbm.service import Service

    if not available("/usr/games/gnugo"):
        pytest.skip("GNU Go is not installed (Debian package gnugo)")
    directory = tmp_path_factory.mktemp("gated")
    gate, engine = directory / "gate", directory / "gnugo"
    engine.write_text(f'#!/bin/sh\nwhile [ ! -e "{gate}" ]; do sleep 0.02; done\nexec /usr/games/gnugo "$@"\n')
    engine.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PBM_GNUGO_PATH", str(engine))
        process, base = start_server(directory)
    service = Service(load_settings({"instance_path": str(directory / "instance"), "secret_key": "browser-test-key"}))
    yield SimpleNamespace(base=base, gate=gate, service=service)
    service.engine.dispose()
    stop_server(process)


def wait_past(driver, number: int, timeout: float = 20) -> None:
    """Wait until the page shows more than ``number`` moves (the computer may have
    answered before the page came back)."""
    wait_shown(driver, lambda shown: shown > number, f"the board to show more than {number} moves", timeout)


def test_go_against_gnu_go_to_its_end_with_its_answers_arriving_by_themselves(gated, desktop):
    from pbm.games import get_game
    from pbm.players import computer_can_act

    start(desktop, gated.base, "computer", name="Ada", side="0")
    play = desktop.current_url
    assert "You play against the computer" in by_css(desktop, ".room").text
    tap(desktop, "E5", 1)
    assert status(desktop) == "It is computer's turn (White)."
    page = by_css(desktop, "html")
    gated.gate.touch()  # now GNU Go may answer
    wait_for_move(desktop, 2)
    assert not left_document(page)  # no reload: the page took the answer in by itself
    assert status(desktop) == "It is Ada's turn (Black)."

    def ada_to_act(_) -> bool:
        """The game is over, or it is Ada's move, or in the scoring the computer has
        finished (it marks one group per answer until it agrees, so a state where
        neither side has agreed may be followed by another marking)."""
        board = board_of(gated, play)
        state = get_game("go").from_json(board.state)
        return board.status != "active" or state.phase == "play" and state.turn == 0 or (
            state.phase == "scoring" and not computer_can_act("go", state, 1) and 0 not in state.confirmed)

    for _ in range(200):  # Ada passes (in the scoring: agrees) until the game ends
        waiter(desktop, 30).until(ada_to_act, "Ada's turn")
        open_page(desktop, play)
        if status(desktop).startswith("Game "):
            break
        number = shown_move(desktop)
        click(desktop, '[data-action="done"]' if desktop.find_elements("css selector", '[data-action="done"]')
              else '[data-action="pass"]')
        wait_past(desktop, number)
    assert status(desktop).startswith("Game won by computer (White): area scoring."), status(desktop)


def test_the_new_game_form_works_without_javascript(site):
    driver = new_browser(javascript=False)
    try:
        driver.get(f"{site.base}/new?game=greatkingdom")
        assert by_css(driver, '[data-for-mode="computer"]').is_displayed()  # every field shows
        click(driver, 'input[name="mode"][value="same-device"]')
        size = by_css(driver, '[name="size"]')
        size.clear()
        size.send_keys("5")
        follow(driver, "[data-start]")
        assert status(driver) == "It is Host's turn (Blue)."
        by_css(driver, "#move").send_keys("B2")
        follow(driver, ".move-form button[type=submit]")
        assert status(driver) == "It is Guest's turn (Orange)."
    finally:
        driver.quit()


def test_new_game_invitation_and_full_room_pages_pass_axe_and_fit_a_phone(site, desktop, browsers):
    from .browser import PHONE, axe_source, axe_violations, fits_width

    source = axe_source()
    start(desktop, site.base, "friend")
    invite = by_css(desktop, "[data-invite]").get_attribute("href")
    browsers("joiner").get(invite)  # takes the seat: the room is full from now on
    waiter(browsers("joiner")).until(lambda d: d.find_elements("css selector", "svg.board"))
    pages = {"new": f"{site.base}/new", "new-dragons": f"{site.base}/new?game=dragons",
             "host": desktop.current_url, "full": invite}
    viewer, phone = browsers("third"), browsers("phone")  # neither holds a seat of this room
    for name, url in pages.items():
        viewer.get(url)
        assert axe_violations(viewer, source) == [], name
        phone.get(url)
        scroll_width, inner_width = fits_width(phone)
        assert inner_width == PHONE[0] and scroll_width <= inner_width, name
    assert by_css(phone, "h1").text == "The room is full"
    desktop.get(f"{site.base}/new")
    click(desktop, 'input[name="mode"][value="computer"]')  # the script shows the fields of the way chosen
    assert by_css(desktop, '[data-for-mode="computer"]').is_displayed()
    assert not by_css(desktop, '[data-for-mode="friend"]').is_displayed()
