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

import smtplib
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


def raw_mail_from(sender: str, message_id: str, subject: str = "help") -> bytes:
    """A mail written as an attacker writes it: header values exactly as given."""
    return (f"From: {sender}\r\nTo: pbm@pbm.test\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n"
            "\r\nhelp\r\n").encode()


def test_an_encoded_word_in_a_message_id_puts_no_header_into_the_answer(server, outbox, client):
    """The answer's In-Reply-To names the mail answered; ``email`` would decode this id,
    line breaks and all, into a Bcc, a header and a body of the sender's choosing."""
    injected = "<=?utf-8?q?x=0D=0ABcc:=20victim@third.example=0D=0AX-Injected:=20yes=0D=0A=0D=0AInjected?=@x>"
    answer = client.post("/inbound/email", data=raw_mail_from("mallory@evil.example", injected),
                         headers={"Content-Type": "message/rfc822"})
    assert answer.status_code == 200 and answer.json["status"] == "applied"
    [mail] = outbox.new()
    assert mail["To"] == "mallory@evil.example"
    assert mail["Bcc"] is None and mail["X-Injected"] is None and "Injected" not in mail.as_string()
    assert mail["In-Reply-To"].startswith("<sha256-")  # the mail is known by its bytes instead


@pytest.mark.parametrize("sender", [
    "=?utf-8?q?v=40other.example=2C?=w@evil.example",  # would be answered to v@other.example and w@...
    "=?utf-8?b?dmljdGlt?=@third.example",
    "a@evil.example.",  # email writes it as <>: answers to such addresses went to another one
    "x@evil..example",
])
def test_a_sender_no_answer_can_be_written_to_is_refused_and_mails_nobody(server, outbox, client, sender):
    answer = client.post("/inbound/email", data=raw_mail_from(sender, "<odd@evil.example>"),
                         headers={"Content-Type": "message/rfc822"})
    assert answer.status_code == 400
    assert "sender address (From:) is not a usable address" in answer.json["error"]
    assert outbox.new() == []


@pytest.mark.parametrize("named, sentence", [
    ("=?utf-8?q?v=40o.example=2Cw=40p.example?=@evil.example", "it holds what mail programs read as an encoded word"),
    ("pbm@pbm.test", "pbm@pbm.test is this server's own address; a player needs an address of their own."),
    ("PBM@pbm.test", "pbm@pbm.test is this server's own address"),
])
def test_an_address_no_player_can_have_is_refused_wherever_it_is_named(players, outbox, named, sentence):
    """In a challenge (an invitation), in add and in signup: refused before anything is
    mailed to it (the command in the body, where no header decoding touches it)."""
    outbox.new()
    for command in (f"go challenge alice {named}", f"add alice alicepw {named}", f"signup zed zedpw9 {named}"):
        result = players.send("alice@players.test", "", command)
        assert result.status == "rejected" and sentence in result.error, (command, result.error)
        assert [m["To"] for m in outbox.new()] == ["alice@players.test"]


def test_one_smtp_message_takes_at_most_100_recipients(doors, outbox):
    with smtplib.SMTP("127.0.0.1", doors.smtp_port, local_hostname="fuzz.players.test", timeout=60) as smtp:
        smtp.ehlo()
        assert smtp.mail("alice@players.test")[0] == 250
        answers = [smtp.rcpt(f"pbm+{n}.abcdefgh@pbm.test")[0] for n in range(102)]
        assert answers == [250] * 100 + [452, 452]
        assert smtp.data(raw_mail_from("alice@players.test", "<rcpt@players.test>"))[0] == 250
    assert [m["To"] for m in outbox.new()] == ["alice@players.test"]  # read once, answered once
