"""Poison mails (issue 10.4): odd input is a plain-sentence rejection, never a
"try again later" that makes senders and mail servers retry for days."""

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


def test_control_characters_in_a_command_are_dropped(players):
    players.send(ALICE, "greatkingdom challenge alice bob")
    assert players.send(ALICE, "greatkingdom move 101 alice alice\x00pw D4").status == "applied"
