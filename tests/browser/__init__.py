"""Helpers for the page tests in a real browser: a ``pbm serve`` process on its own
SQLite database, boards set up through the service beside it, headless Chromium
at desktop and phone size, its console, axe-core and screenshots.

axe-core comes from the npm registry: ``npm install`` puts the pinned version
into ``.venv/axe-core`` the first time (the .venv is the project's cache of
what it installs; ``make clean`` removes it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import select

from ..conftest import free_port, make_mail, wait_until

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HAVE_CHROMIUM = os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)
ROOT = Path(__file__).resolve().parents[2]
AXE_VERSION = "4.14.1"
AXE_DIR = ROOT / ".venv" / "axe-core"
SCREENSHOTS = ROOT / "docs" / "screenshots"
DESKTOP = (1280, 900)
PHONE = (390, 844)
ALICE, BOB = "alice@players.test", "bob@players.test"


def start_server(directory: Path, database_url: str | None = None, port: int | None = None):
    """``pbm serve`` on ``port`` (default: a free one), its database migrated; returns
    (process, base URL)."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PBM_INSTANCE_PATH": str(directory / "instance"), "PBM_LOG_LEVEL": "WARNING",
           "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_BASE_URL": base, "PBM_SECRET_KEY": "browser-test-key",
           "PBM_MAILDIR": str(directory / "maildir")}
    if database_url:
        env["PBM_DATABASE_URL"] = database_url
    subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=env, check=True, capture_output=True)
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--no-scheduler"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=1).read(), "pbm serve to start")
    return process, base


def stop_server(process) -> None:
    process.terminate()
    process.wait(timeout=30)


@dataclass
class Board:
    id: int
    tokens: tuple[str, str]
    base: str

    def play_url(self, seat: int) -> str:
        return f"{self.base}/play/{self.tokens[seat]}"

    @property
    def url(self) -> str:
        return f"{self.base}/games/{self.id}"


class Site:
    """The server under test and a service on the same database, to set boards up."""

    def __init__(self, base: str, service):
        self.base, self.service = base, service
        for sender, command in ((ALICE, "signup alice alicepw"), (BOB, "signup bob bobpw")):
            assert self.service.handle_raw(make_mail(sender, command)).status == "applied"

    def board(self, game: str, options: str = "", moves=()) -> Board:
        """A new board of ``game`` (alice first), with ``moves`` played in turn."""
        from pbm.db import reading
        from pbm.models import Board as BoardRow

        result = self.service.handle_raw(make_mail(ALICE, f"{game} challenge alice bob {options}".strip()))
        assert result.status == "applied", result
        with reading(self.service.engine) as session:
            row = session.exec(select(BoardRow).order_by(BoardRow.id.desc())).first()
        board = Board(row.id, (row.token0, row.token1), self.base)
        for move in moves:
            self.play(board, move)
        return board

    def play(self, board: Board, move: str, seat: int | None = None):
        """Play ``move`` for ``seat`` (default: the seat to move)."""
        from pbm.db import reading
        from pbm.models import Board as BoardRow

        if seat is None:
            with reading(self.service.engine) as session:
                seat = session.get(BoardRow, board.id).to_move
        result = self.service.play_by_token(board.tokens[seat], move)
        assert result.status == "applied", (move, result)
        return result

    def mail(self, sender: str, subject: str, text: str = "") -> dict:
        """A mail handed to the server under test (its webhook), so its open pages
        hear of what it changes; the webhook's answer."""
        import json

        request = urllib.request.Request(self.base + "/inbound/email", data=make_mail(sender, subject, text),
                                         headers={"Content-Type": "message/rfc822"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def version(self, board: Board) -> int:
        """The board's version now: what its live pages know it by (it rises with every
        change a page shows)."""
        from pbm.db import reading
        from pbm.models import Board as BoardRow

        with reading(self.service.engine) as session:
            return session.get(BoardRow, board.id).version

    def moves(self, board: Board) -> list[str]:
        from pbm.boardview import load_records
        from pbm.db import reading
        from pbm.models import Board as BoardRow

        with reading(self.service.engine) as session:
            return [r.text for r in load_records(session, session.get(BoardRow, board.id))]


def new_browser(size=DESKTOP, phone: bool = False, javascript: bool = True):
    """Headless Chromium with its console log kept; ``phone`` emulates a touch
    phone (mobile viewport, 390 px wide)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--hide-scrollbars", f"--user-data-dir={tempfile.mkdtemp()}",
                 f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    if phone:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 2, "mobile": True})
        driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    return driver


def console_errors(driver) -> list[str]:
    """The browser console's errors since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def fits_width(driver) -> tuple[int, int]:
    """(scrollWidth, innerWidth) of the page shown."""
    return tuple(driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]"))


def axe_source() -> str:
    script = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        subprocess.run(["npm", "install", "--prefix", str(AXE_DIR), "--no-save", "--no-audit", "--no-fund",
                        f"axe-core@{AXE_VERSION}"], check=True, capture_output=True, timeout=300)
    return script.read_text()


def axe_violations(driver, source: str) -> list[dict]:
    """axe-core's violations of impact serious or critical on the page shown."""
    driver.execute_script(source)
    driver.set_script_timeout(60)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations))"
        ".catch(e => done([{id: 'axe-failed', impact: 'critical', help: String(e), nodes: []}]));")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n.get("target") for n in v.get("nodes", [])][:5]}
            for v in result if v["impact"] in ("serious", "critical")]


def screenshot(driver, name: str) -> Path:
    """The top of the page (about one and a half screens) as a PNG in docs/screenshots/,
    scaled down to keep the files small."""
    import base64

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width, height, ratio = driver.execute_script(
        "return [window.innerWidth, document.documentElement.scrollHeight, window.devicePixelRatio]")
    clip = {"x": 0, "y": 0, "width": width, "height": min(height, int(1.5 * width) if width < 600 else 1000),
            "scale": 1 / ratio if width < 600 else 0.75}
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                             "clip": clip})
    path = SCREENSHOTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path
