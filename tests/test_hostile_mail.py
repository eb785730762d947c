"""Hostile mail through every door: ``pbm ingest``'s path (``Service.handle_raw``),
the webhook and the real SMTP listener.

Each lane (SQLite, PostgreSQL) sends 1,000 mails generated over MIME structure
(``tests/fuzz/hostile.py``), each by a door Hypothesis picks, plus the corpus of
real oddities in tests/mail_samples/oddities/ by every door. Whatever arrives:
no answer asks the sender to try again (HTTP 5xx, SMTP 4xx, exit 75), the
webhook answers 200, 400 or 413 only, and nothing is logged at ERROR or with a
traceback. ``make fuzz`` sends 10,000 and reports the figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.smtpd import controller

from .conftest import free_port
from .fuzz.hostile import DOORS, Doors, ErrorLog, Figures, raw_mail

ODDITIES = sorted(Path(__file__).parent.joinpath("mail_samples", "oddities").glob("*.eml"))
GENERATED_MAILS = 1_000
RUN = settings(max_examples=GENERATED_MAILS, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large])
WEBHOOK_ANSWERS = {200, 400, 413}


@pytest.fixture
def board(players, outbox):
    """Board 101 between alice and bob; its reply tag for bob."""
    players.send("alice@players.test", "go challenge alice bob")
    return str(outbox.to("bob@players.test")[-1]["Reply-To"])


@pytest.fixture
def doors(server, client):
    port = free_port()
    listener = controller(server, "127.0.0.1", port)
    try:
        listener.start()
        yield Doors(server, client, port)
    finally:
        listener.stop()


def assert_no_retry_and_no_traceback(figures: Figures, errors: ErrorLog):
    assert figures.retries == 0, figures.lines()
    assert {answer for (door, answer) in figures.answers if door == "webhook"} <= WEBHOOK_ANSWERS, figures.lines()
    assert not errors.records, errors.format(errors.records[0])


def test_generated_mail_through_every_door(doors, board):
    figures = Figures()

    @RUN
    @given(st.sampled_from(DOORS), raw_mail(board))
    def send(door, raw):
        figures.send(doors, door, raw)

    with ErrorLog() as errors:
        send()
    assert figures.mails == GENERATED_MAILS
    assert {door for door, _ in figures.answers} == set(DOORS)
    assert_no_retry_and_no_traceback(figures, errors)


@pytest.mark.parametrize("sample", ODDITIES, ids=[p.stem for p in ODDITIES])
def test_real_oddities(sample, doors, board):
    figures = Figures()
    raw = sample.read_bytes()
    with ErrorLog() as errors:
        for n, door in enumerate(DOORS):  # a fresh Message-ID per door, so none is a duplicate
            figures.send(doors, door, raw.replace(b"players.test>", b"players.test.%d>" % n))
    assert_no_retry_and_no_traceback(figures, errors)
