"""Requests between the players in a real browser (headless Chromium): a draw
offer and its answer reach the other player's open page without a reload (which
keeps the move and comment being typed, and the focus), and on a same-device
screen the seat that did not ask answers a take-back request."""

from __future__ import annotations

import pytest

from .browser import HAVE_CHROMIUM
from .browser.driving import by_css, follow, open_page, start, status, tap, waiter, wait_for_move
from .browser.fixtures import browsers, desktop, second, site  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed "
                                "(Debian packages chromium, chromium-driver; .ci/run installs them)")

LIVE_SECONDS = 2  # an open page shows a change made elsewhere within 2 seconds


def pending(driver) -> str:
    """The open request's line, or "" when none is shown."""
    found = driver.find_elements("css selector", "[data-pending]")
    return found[0].text if found else ""


def buttons(driver) -> list[str]:
    return [b.get_attribute("data-action") for b in driver.find_elements("css selector", "button[data-action]")]


def stay(driver) -> None:
    """Mark the document shown: ``stayed`` says whether it is still the same one (no reload)."""
    driver.execute_script("window.pbmStayed = true;")


def stayed(driver) -> bool:
    return driver.execute_script("return window.pbmStayed === true;")


def test_a_draw_offer_and_its_answers_reach_the_open_page_without_reloading(site, desktop, second, request):
    board = site.board("greatkingdom", moves=["D4"])
    open_page(desktop, board.play_url(0))  # alice
    open_page(second, board.play_url(1))  # bob, to move, has chosen a point and is typing
    second.execute_script("localStorage.setItem('pbm.confirm', '1')")  # his taps select first (Settings)
    request.addfinalizer(lambda: second.execute_script("localStorage.removeItem('pbm.confirm')"))
    open_page(second, board.play_url(1))
    by_css(second, '[data-point="F5"]').click()  # the first tap selects
    waiter(second).until(lambda d: "selected" in by_css(d, '[data-point="F5"]').get_attribute("class"))
    by_css(second, "#move").send_keys("E5")
    by_css(second, "#comment").click()
    by_css(second, "#comment").send_keys("Let me think")
    stay(second)

    follow(desktop, '[data-action="propose"]')
    assert pending(desktop) == "alice offers a draw; bob may accept or reject."
    waiter(second, LIVE_SECONDS).until(lambda d: pending(d) == "alice offers a draw; bob may accept or reject.",
                                       "the draw offer on bob's open page")
    assert stayed(second) and buttons(second)[-3:] == ["accept", "reject", "resign"]
    assert by_css(second, "#move").get_attribute("value") == "E5"  # what bob typed stays, and his focus
    assert by_css(second, "#comment").get_attribute("value") == "Let me think"
    assert second.execute_script("return document.activeElement.id") == "comment"
    assert "selected" in by_css(second, '[data-point="F5"]').get_attribute("class")  # the position is the same
    assert by_css(second, "[data-selection-text]").text == "F5 selected: tap it again or press Play."

    stay(desktop)
    follow(second, '[data-action="reject"]')
    waiter(desktop, LIVE_SECONDS).until(lambda d: pending(d) == "" and "propose" in buttons(d),
                                        "the rejection on alice's open page")
    assert stayed(desktop) and status(desktop) == "It is bob's turn (Orange)."

    follow(second, '[data-action="propose"]')  # now bob offers, and alice accepts
    waiter(desktop, LIVE_SECONDS).until(lambda d: pending(d) == "bob offers a draw; alice may accept or reject.",
                                        "bob's offer on alice's open page")
    assert stayed(desktop)
    stay(second)
    follow(desktop, '[data-action="accept"]')
    waiter(second, LIVE_SECONDS).until(lambda d: status(d).startswith("Game drawn"), "the draw on bob's open page")
    assert stayed(second) and pending(second) == "" and buttons(second) == ["newround"]
    assert site.moves(board) == ["D4", "draw"]


def test_same_device_one_seat_asks_to_take_back_and_the_other_accepts_on_the_same_screen(site, desktop):
    start(desktop, site.base, "same-device", name="Ada", guest_name="Bo")
    tap(desktop, "D5", 1)
    tap(desktop, "E5", 2)
    assert status(desktop) == "It is Ada's turn (Black)."
    follow(desktop, '[data-action="undo"]')  # Ada, whom the page acts for, asks
    assert pending(desktop) == "Ada asks to take back move 1; Bo may accept or reject."
    assert by_css(desktop, '[data-action="accept"]').text == "Accept as Bo"
    assert by_css(desktop, '[data-action="reject"]').text == "Reject as Bo"
    assert "undo" not in buttons(desktop)

    follow(desktop, '[data-action="accept"]')  # Bo answers on the same screen
    wait_for_move(desktop, 0)  # the position stands on no move again
    assert pending(desktop) == "" and status(desktop) == "It is Ada's turn (Black)."
    for point in ("D5", "E5"):  # both stones are gone: playable again
        assert "target" in by_css(desktop, f'[data-point="{point}"]').get_attribute("class")
    assert "(taken back)" in by_css(desktop, "ol.moves").text
