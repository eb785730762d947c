"""Driving a page in the browser: finding, clicking, keys, and waiting for the
board a page shows (never sleeping: every wait is for a condition)."""

from __future__ import annotations


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
    wait_shown(driver, lambda shown: shown == number, f"the board to show move {number}", timeout)


def wait_shown(driver, wanted, what: str, timeout: float = 10) -> None:
    """Wait until ``wanted(the number of moves the board shows)`` holds (a page being
    replaced meanwhile is asked again)."""
    from selenium.common.exceptions import WebDriverException

    def shows(d) -> bool:
        try:
            return wanted(shown_move(d))
        except WebDriverException as error:  # the page is being replaced
            if LEFT not in str(error):
                raise
            return False

    waiter(driver, timeout).until(shows, what)


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
    chromedriver as the node having left the document: the click was made. An element
    a live update replaced between finding and clicking it was not clicked: the new
    one is found and clicked."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def clicked(d) -> bool:
        try:
            by_css(d, selector).click()
        except WebDriverException as error:
            if LEFT in str(error):
                return True
            if isinstance(error, StaleElementReferenceException):
                return False
            raise
        return True

    waiter(driver).until(clicked)


def keys(driver, *sequence):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).send_keys(*sequence).perform()


def focus_board(driver):
    driver.execute_script("document.querySelector('[data-board-frame]').focus()")


def status(driver) -> str:
    """The status line; read again when a live update replaced it while it was read."""
    from selenium.common.exceptions import StaleElementReferenceException

    def read(d):
        try:
            return by_css(d, "[data-status]").text or None
        except StaleElementReferenceException:
            return None

    return waiter(driver).until(read)


def explanation(driver) -> str:
    waiter(driver).until(lambda d: by_css(d, "[data-explain-text]").text.strip())
    return by_css(driver, "[data-explain-text]").text


def start(driver, base: str, mode: str, game: str = "go", **fields) -> None:
    """Fill in /new (``mode``: same-device, friend or computer; ``fields`` by name) and
    start: the browser ends on the new board's play page."""
    driver.get(f"{base}/new?game={game}")
    click(driver, f'input[name="mode"][value="{mode}"]')
    for name, value in fields.items():
        if name == "side":
            click(driver, f'input[name="side"][value="{value}"]')
        else:
            by_css(driver, f'[name="{name}"]').send_keys(value)
    follow(driver, "[data-start]")


def tap(driver, point: str, number: int) -> None:
    """Place a stone by one click (a desktop's default); wait for move ``number``."""
    click(driver, f'[data-point="{point}"]')
    wait_for_move(driver, number)


def act(driver, action: str, number: int) -> None:
    """Press the button of a move that is not a point (resign asks once more); wait for
    move ``number``."""
    click(driver, f'[data-action="{action}"]')
    if action == "resign":  # the button asks once more
        click(driver, '[data-action="resign"]')
    wait_for_move(driver, number)
