"""Whole Great Kingdom games played by two players by mail: through a real SMTP
listener (aiosmtpd) and through the webhook, ending by siege and by two passes."""

import smtplib
from email.message import EmailMessage
from email.utils import make_msgid

import pytest

from pbm.smtpd import controller

from .conftest import body, free_port, make_mail

ALICE, BOB = "alice@players.test", "bob@players.test"


class Channel:
    """How a player's mail reaches the server."""

    def __init__(self, kind, server, client):
        self.kind, self.server, self.client = kind, server, client
        self.listener = None
        if kind == "smtp":
            self.port = free_port()
            self.listener = controller(server, "127.0.0.1", self.port)
            self.listener.start()

    def send(self, raw: bytes, sender: str, to: str):
        if self.kind == "smtp":
            with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
                # SMTP lines end in CRLF, as every real client sends them.
                smtp.sendmail(sender, [to], raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        else:
            response = self.client.post("/inbound/email", data=raw,
                                        headers={"Content-Type": "message/rfc822"})
            assert response.status_code == 200, response.get_data(as_text=True)
            assert response.json["status"] in ("applied", "rejected")

    def close(self):
        if self.listener:
            self.listener.stop()


@pytest.fixture(params=["smtp", "webhook"])
def channel(request, server, client, outbox):
    ch = Channel(request.param, server, client)
    ch.outbox = outbox
    yield ch
    ch.close()


def command(channel, sender, subject, text=""):
    channel.send(make_mail(sender, subject, text), sender, "pbm@pbm.test")
    channel.outbox.all()


def reply(channel, outbox, sender, move, comment=""):
    """Answer the latest board mail to ``sender`` the way a mail client does."""
    last = [m for m in outbox.to(sender) if m["Reply-To"]][-1]
    answer = EmailMessage()
    answer["From"] = f"Player <{sender}>"
    answer["To"] = str(last["Reply-To"])
    answer["Subject"] = "Re: " + str(last["Subject"])
    answer["Message-ID"] = make_msgid(domain="players.test")
    answer["In-Reply-To"] = str(last["Message-ID"])
    quoted = "\n".join("> " + line for line in body(last).split("\n"))
    answer.set_content(f"{move}\n{comment}\n\nOn Sunday pbm wrote:\n{quoted}\n")
    channel.send(bytes(answer), sender, last["Reply-To"].addresses[0].addr_spec)
    outbox.all()


def board_rows(message) -> list[str]:
    lines = body(message).split("\n")
    start = next(i for i, line in enumerate(lines) if line.split() and line.split()[0] == "A")
    return lines[start:start + 7]


def test_whole_game_ending_in_a_siege(channel, outbox):
    command(channel, ALICE, "signup alice alicepw")
    command(channel, BOB, "signup bob bobpw")
    command(channel, ALICE, "greatkingdom challenge alice bob -size=5")
    start = outbox.to(BOB)[-1]
    assert start["Subject"] == "Great Kingdom Board 101 alice"
    assert "New game of Great Kingdom on board 101, started by alice." in body(start)

    command(channel, ALICE, "greatkingdom move 101 alice alicepw B1", "Good luck!")
    reply(channel, outbox, BOB, "A1", "Thanks, you too.")
    before = len(outbox.all())
    reply(channel, outbox, ALICE, "A2")
    final = outbox.all()[before:]

    # One mail to each player after every move, and the end announced to both.
    assert sorted(m["To"].addresses[0].addr_spec for m in final) == [ALICE, BOB]
    for message in final:
        assert message["Subject"] == "Great Kingdom Board 101 game over"
        assert "Game won by alice. Siege: Blue destroyed A1." in body(message)
        assert board_rows(message)[-2].split()[:3] == ["1", "*", "B"]
        # RFC 3834: the answer to alice's mail is a reply; bob's copy is generated
        answered = message["To"].addresses[0].addr_spec == ALICE
        assert message["Auto-Submitted"] == ("auto-replied" if answered else "auto-generated")
        assert "<board-101@pbm.test>" in message["References"]
        assert all(len(line) <= 78 for line in body(message).split("\n"))
    # Bob saw alice's comment on the first move, alice saw bob's.
    assert any("alice says (to the two players only):\n> Good luck!" in body(m) for m in outbox.to(BOB))
    assert any("bob says (to the two players only):\n> Thanks, you too." in body(m) for m in outbox.to(ALICE))
    # Quoted text and attributions of the replies did not become comments.
    assert not any("On Sunday pbm wrote" in body(m) for m in outbox.all())


def test_every_move_mails_both_players_a_fresh_board(channel, outbox):
    command(channel, ALICE, "signup alice alicepw")
    command(channel, BOB, "signup bob bobpw")
    command(channel, ALICE, "greatkingdom challenge alice bob")
    outbox.new()
    reply(channel, outbox, ALICE, "D4")
    mails = outbox.new()
    assert {m["To"].addresses[0].addr_spec for m in mails} == {ALICE, BOB}
    for m in mails:
        assert m["Subject"] == "Great Kingdom Board 101 bob"
        assert "It is bob's turn." in body(m)
        assert "  4  .  .  . (B) .  .  .  .  .  4" in body(m)
    alice_mail, bob_mail = sorted(mails, key=lambda m: str(m["To"]))
    # Each player's Reply-To and private link are their own.
    assert alice_mail["Reply-To"] != bob_mail["Reply-To"]
    assert "http://pbm.test/play/" in body(alice_mail)


def test_characters_that_show_nothing_are_not_part_of_a_move(channel, outbox):
    """A byte-order mark before the move (some Windows mailers), a zero-width space
    after it (copied text): the player saw "D4" and "F6", and those are played."""
    command(channel, ALICE, "signup alice alicepw")
    command(channel, BOB, "signup bob bobpw")
    command(channel, ALICE, "greatkingdom challenge alice bob")
    reply(channel, outbox, ALICE, "\ufeffD4")
    command(channel, BOB, "greatkingdom move 101 bob bobpw \u200bF6\u200b")
    reply(channel, outbox, ALICE, "C3", comment="Nice \U0001F468\u200d\U0001F469 family")
    moves = [line.split() for line in body(outbox.to(BOB)[-1]).split("\n") if line.startswith("   ")
             and line[:5].strip().endswith(".")]  # the move list: "   1. alice        D4"
    assert moves == [["1.", "alice", "D4"], ["2.", "bob", "F6"], ["3.", "alice", "C3"]]
    assert "> Nice \U0001F468\u200d\U0001F469 family" in body(outbox.to(BOB)[-1])  # a joiner between emoji stays


def test_a_command_or_move_in_quotation_marks_is_read_without_them(channel, outbox):
    """Copied from a help text that quotes it (send "help" as the subject), or a move a
    phone's keyboard quoted with curly marks: the player means what is inside."""
    command(channel, ALICE, '"signup alice alicepw"')
    command(channel, BOB, "\u201csignup bob bobpw\u201d")
    command(channel, ALICE, "greatkingdom challenge alice bob")
    command(channel, ALICE, "greatkingdom move 101 alice alicepw \u201cD4\u201d")
    reply(channel, outbox, BOB, "\u2018F6\u2019")
    command(channel, ALICE, "\u201egreatkingdom move 101 alice alicepw C3#3\u201c")
    moves = [line.split() for line in body(outbox.to(BOB)[-1]).split("\n") if line.startswith("   ")
             and line[:5].strip().endswith(".")]
    assert moves == [["1.", "alice", "D4"], ["2.", "bob", "F6"], ["3.", "alice", "C3"]]


@pytest.mark.parametrize("extra, winner, score, top_row", [
    ([], "Game won by alice.", "Blue 9, Orange 6.", "5 B b B O o 5"),  # exactly +3: Blue wins
    (["pass", "B5"], "Game won by bob.", "Blue 8, Orange 6.", "5 B B B O o 5"),  # +2 is not
])
def test_two_passes_count_territory_with_the_plus_three_rule(channel, outbox, extra, winner, score,
                                                            top_row):
    command(channel, ALICE, "signup alice alicepw")
    command(channel, BOB, "signup bob bobpw")
    command(channel, BOB, "greatkingdom challenge alice bob -size=5")
    moves = ["C5", "D5", "C4", "D4", "C2", "D2", "C1", "D1", "A5", *extra, "pass", "pass"]
    for number, move in enumerate(moves):
        reply(channel, outbox, ALICE if number % 2 == 0 else BOB, move)
    final = outbox.to(ALICE)[-1]
    assert final["Subject"] == "Great Kingdom Board 101 game over"
    text = " ".join(body(final).split())  # long status lines are wrapped at 78
    assert f"{winner} Territory after two passes (Blue needs 3 more). {score}" in text
    assert " ".join(board_rows(final)[1].split()) == top_row


def test_a_bounce_over_smtp_is_recorded_and_never_answered(server, outbox):
    """MAIL FROM:<> is a bounce whatever its From header says (the listener writes the
    envelope sender as Return-Path, as a final delivery does)."""
    from sqlmodel import select

    from pbm.db import reading
    from pbm.models import InboundMessage

    channel = Channel("smtp", server, None)
    try:
        channel.send(make_mail(ALICE, "help", message_id="<bounce-1@players.test>"), "", "pbm@pbm.test")
        channel.send(make_mail(ALICE, "help", message_id="<asked-1@players.test>"), ALICE, "pbm@pbm.test")
    finally:
        channel.close()
    assert [m["Subject"] for m in outbox.to(ALICE)] == ["pbm help"]  # the second mail's answer only
    with reading(server.engine) as session:
        bounce = session.exec(select(InboundMessage).where(InboundMessage.message_id == "<bounce-1@players.test>")).one()
    assert (bounce.status, bounce.error) == ("ignored", "empty return path")


@pytest.mark.parametrize("sender", ["pbm@pbm.test", "PBM@PBM.TEST", "pbm+101.abc@pbm.test"])
def test_mail_from_the_servers_own_address_is_never_answered(server, outbox, sender):
    """An answer to the server's own address would come back to it: a loop."""
    from sqlmodel import select

    from pbm.db import reading
    from pbm.models import InboundMessage

    assert server.handle_raw(make_mail(sender, "help", message_id="<own-1@x>")).status.value == "ignored"
    assert outbox.new() == []
    with reading(server.engine) as session:
        record = session.exec(select(InboundMessage).where(InboundMessage.message_id == "<own-1@x>")).one()
    assert (record.status, record.error) == ("ignored", "sent from the server's own address")


def test_an_address_with_an_undecodable_byte_is_malformed_not_answered(server, outbox):
    raw = b"From: d\xffve <d\xe9ve@ex.org>\nSubject: help\nMessage-ID: <bytes-1@ex.org>\n\nhelp\n"
    assert server.handle_raw(raw).status.value == "malformed"
    assert outbox.new() == []
