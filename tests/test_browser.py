"""The private play page in a real browser (headless Chromium): read the board,
type a move, send the form, see the new board; the mails go out."""

import mailbox
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import pytest

from .conftest import free_port, make_mail, wait_until

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="Chromium and chromedriver are not installed (Debian packages chromium, chromium-driver; "
           ".ci/run installs them)")


@pytest.fixture
def running_server(tmp_path):
    env = {**os.environ, "PBM_INSTANCE_PATH": str(tmp_path / "instance"), "PBM_LOG_LEVEL": "WARNING",
           "PBM_SERVER_ADDRESS": "pbm@pbm.test"}
    port = free_port()
    env["PBM_BASE_URL"] = f"http://127.0.0.1:{port}"
    subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=env, check=True,
                   capture_output=True)
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=1).read(), "pbm serve to start")
    yield base, tmp_path / "instance" / "outbox"
    process.terminate()
    process.wait(timeout=30)


def post_mail(base, raw):
    request = urllib.request.Request(base + "/inbound/email", data=raw,
                                     headers={"Content-Type": "message/rfc822"})
    with urllib.request.urlopen(request) as response:
        return response.read()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def submit_and_wait(browser):
    """Send the move form and wait until the answer's page has replaced this one
    (a find_element right after the click could still see the old page)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    old_page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 30).until(expected_conditions.staleness_of(old_page))
    WebDriverWait(browser, 30).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "pre.board")))


def test_a_move_from_the_private_page(running_server, browser):
    from selenium.webdriver.common.by import By

    base, maildir = running_server
    post_mail(base, make_mail("alice@players.test", "signup alice alicepw"))
    post_mail(base, make_mail("bob@players.test", "signup bob bobpw"))
    post_mail(base, make_mail("alice@players.test", "greatkingdom challenge alice bob"))
    box = mailbox.Maildir(str(maildir), create=False)
    invitation = [m for m in box if m["To"] == "alice@players.test" and m["Reply-To"]][-1]
    link = next(word for word in invitation.get_payload(decode=True).decode().split()
                if word.startswith(base + "/play/"))

    browser.get(link)
    assert "It is alice's turn (Blue)." in browser.find_element(By.TAG_NAME, "body").text
    browser.find_element(By.NAME, "move").send_keys("d4")
    browser.find_element(By.NAME, "comment").send_keys("<b>hello</b> from the browser")
    submit_and_wait(browser)
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "It is bob's turn (Orange)." in page
    assert "4  .  .  . (B) .  .  .  .  .  4" in browser.find_element(By.CSS_SELECTOR, "pre.board").text
    assert "<b>hello</b> from the browser" in page  # shown as text, not markup
    assert browser.find_elements(By.CSS_SELECTOR, ".comment b") == []
    subjects = [m["Subject"] for m in mailbox.Maildir(str(maildir), create=False)]
    assert subjects.count("Great Kingdom Board 101 bob") == 2

    # An illegal move is explained on the page and changes nothing.
    bob_mail = [m for m in mailbox.Maildir(str(maildir), create=False)
                if m["To"] == "bob@players.test" and m["Subject"] == "Great Kingdom Board 101 bob"][-1]
    bob_link = next(word for word in bob_mail.get_payload(decode=True).decode().split()
                    if word.startswith(base + "/play/"))
    browser.get(bob_link)
    browser.find_element(By.NAME, "move").send_keys("E5")
    submit_and_wait(browser)
    assert "E5 holds the neutral castle" in browser.find_element(By.CSS_SELECTOR, ".error").text
