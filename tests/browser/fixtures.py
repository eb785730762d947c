"""The fixtures the browser test modules share (each module imports them, so
each gets its own server and browsers): one ``pbm serve`` on SQLite with a
service beside it to set boards up, and browsers opened on first use, whose
consoles must stay free of errors."""

from __future__ import annotations

import pytest

from . import DESKTOP, PHONE, Site, console_errors, new_browser, start_server, stop_server


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
