"""Poison mails (issue 10.4): odd input is a plain-sentence rejection, never a
"try again later" that makes senders and mail servers retry for days."""

from email.header import Header
from email.utils import make_msgid

import pytest

ALICE = "alice@players.test"


@pytest.mark.parametrize("subject", [
    "greatkingdom move 101 alice alicepw D²",
    "greatkingdom move 101 alice alicepw ٤٤",
    "greatkingdom show 9223372036854775808",
    "greatkingdom show 2147483648",
    "greatkingdom show " + "9" * 4300,
    "greatkingdom move 101 alice alicepw D4#" + "9" * 4300,
    "dragons move 102 alice alicepw " + "1" * 5000 + "ne:F0",
    "go challenge alice bob -komi=nan",
    "go challenge alice bob -komi=inf",
    "go challenge alice bob -size=" + "9" * 4300,
])
def test_odd_commands_are_refused_with_a_sentence(players, subject):
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "dragons challenge alice bob")
    result = players.send(ALICE, subject)
    assert result.status == "rejected", result
    assert result.error and "Traceback" not in result.error


def test_a_second_invitation_to_a_one_letter_address(players):
    assert players.send(ALICE, "go challenge alice a@one.test").status == "applied"
    assert players.send(ALICE, "go challenge alice a@two.test").status == "applied"


def raw_mail(subject: str, text: str = "") -> bytes:
    """A mail with the characters as they are in its Subject and body (no encoded words)."""
    return (f"From: {ALICE}\r\nTo: pbm@pbm.test\r\nSubject: {subject}\r\nMessage-ID: {make_msgid()}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n").encode()


@pytest.mark.parametrize("control", ["\x00", "\x01", "\x1b", "\x7f"], ids=["NUL", "SOH", "ESC", "DEL"])
@pytest.mark.parametrize("where", ["subject", "body", "encoded-word"])
def test_a_control_character_in_a_command_separates_words(players, server, outbox, control, where):
    """A control character in a command line (Subject or body, raw or in an RFC 2047
    word) is a space, never dropped: dropped, it glues two words into a different
    command. ``show 10<NUL>1`` would show board 101, ``alice<NUL>pw`` would be a
    password nobody typed."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    outbox.new()

    def send(line: str):
        if where == "subject":
            return server.handle_raw(raw_mail(line))
        if where == "body":
            return server.handle_raw(raw_mail("", line))
        return server.handle_raw(raw_mail(Header(line, "utf-8").encode()))  # =?utf-8?b?...?=

    shown = send(f"greatkingdom show 10{control}1")
    assert shown.status == "rejected" and shown.error == "The show command takes no more words than that."  # 10, 1
    assert [str(m["Subject"]) for m in outbox.new()] == ["Great Kingdom error"]
    moved = send(f"greatkingdom move 101 alice alice{control}pw D4")
    assert moved.status == "rejected" and moved.error == "The password for alice is wrong."
    assert send(f"greatkingdom move 101 alice alicepw D4{control}").status == "applied"  # at the end: a space
