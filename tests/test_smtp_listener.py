"""The SMTP listener under clients that misbehave: a session repeating a command
without end is closed, sessions past MAX_SESSIONS are told to come back later, and
one mail delivered twice by two relays (other envelope senders, other trace fields)
is applied once; meanwhile other clients are served."""

import smtplib
import socket

import pytest

from pbm.mail.inbound import as_sent, parse_mail
from pbm.smtpd import MAX_SESSIONS, MAX_SESSIONS_PER_CLIENT, controller

from .conftest import free_port, wait_until

ALICE = "alice@players.test"
# A mail program's mail with a Date but no Message-ID: known by its bytes.
UNNAMED = (b"From: alice@players.test\r\nTo: pbm@pbm.test\r\nSubject: help\r\n"
           b"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\n\r\nplease\r\n")


@pytest.fixture
def listener(server):
    port = free_port()
    smtpd = controller(server, "127.0.0.1", port)
    smtpd.start()
    yield port
    smtpd.stop()


def send(port: int, raw: bytes, envelope_sender: str = ALICE) -> None:
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.sendmail(envelope_sender, ["pbm@pbm.test"], raw)


def answers(outbox) -> int:
    return sum(1 for m in outbox.all() if m["To"].addresses[0].addr_spec == ALICE)


def test_a_mail_without_message_id_from_two_relays_is_applied_once(listener, outbox):
    send(listener, UNNAMED, envelope_sender=ALICE)
    assert answers(outbox) == 1
    send(listener, UNNAMED, envelope_sender="bounce-alice@relay.test")  # another Return-Path
    relayed = b"Received: from relay.test\r\n\tby mx.pbm.test; Tue, 01 Dec 2026 10:00:05 +0000\r\n" + UNNAMED
    send(listener, relayed)
    assert answers(outbox) == 1


def test_the_trace_fields_above_a_mail_are_not_the_mail():
    traced = (b"Return-Path: <x@relay.test>\r\nDelivered-To: pbm@pbm.test\r\nX-Original-To: pbm@pbm.test\r\n"
              b"Received: from a\r\n by b; Tue, 01 Dec 2026 10:00:05 +0000\r\nreceived: from c by d\r\n" + UNNAMED)
    assert as_sent(traced) == UNNAMED and as_sent(UNNAMED) == UNNAMED
    assert parse_mail(traced).message_id == parse_mail(UNNAMED).message_id
    assert parse_mail(UNNAMED.replace(b"please", b"thanks")).message_id != parse_mail(UNNAMED).message_id


def read_reply(sock: socket.socket) -> bytes:
    """One SMTP reply, its lines up to the one with a space after the code."""
    data = b""
    while not any(line[3:4] == b" " for line in data.split(b"\r\n")):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_a_session_repeating_noop_without_end_is_closed_and_others_are_served(listener, outbox):
    with socket.create_connection(("127.0.0.1", listener), timeout=30) as sock:
        assert read_reply(sock).startswith(b"220")
        codes = []
        for _ in range(40):
            sock.sendall(b"NOOP\r\n")
            reply = read_reply(sock)
            if not reply:
                break
            codes.append(reply[:3])
            if reply.startswith(b"421"):
                break
        assert codes[:20] == [b"250"] * 20 and codes[-1] == b"421" and len(codes) == 21
        assert sock.recv(4096) == b""  # closed by the server
    send(listener, UNNAMED)
    assert answers(outbox) == 1


def connect_from(client: str, port: int) -> socket.socket:
    """A connection to the listener from the loopback address ``client`` (127.0.0.2 ...)."""
    return socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(client, 0))


def test_sessions_past_the_limit_are_told_to_come_back_and_the_limit_frees_up(listener, outbox):
    held = []
    try:
        for n in range(MAX_SESSIONS):  # from several clients, each within its own limit
            sock = connect_from(f"127.0.0.{2 + n // MAX_SESSIONS_PER_CLIENT}", listener)
            held.append(sock)
            assert read_reply(sock).startswith(b"220")
        with connect_from("127.0.0.99", listener) as extra:
            assert read_reply(extra).startswith(b"421 4.3.2")
            assert extra.recv(4096) == b""
        held.pop().close()

        def served() -> bool:
            with connect_from("127.0.0.99", listener) as again:
                return read_reply(again).startswith(b"220")
        wait_until(served, "a session once one of the held ones closed")
    finally:
        for sock in held:
            sock.close()

    def answered() -> bool:  # refused (421, an OSError) until the listener has seen the sessions close
        send(listener, UNNAMED)
        return answers(outbox) == 1
    wait_until(answered, "the mail's answer once the sessions closed")


def test_one_client_holds_only_its_share_of_the_sessions(listener, outbox):
    """A client that opens connections and says nothing holds at most
    MAX_SESSIONS_PER_CLIENT of them: the others are still served."""
    held = []
    try:
        for _ in range(MAX_SESSIONS_PER_CLIENT):
            held.append(connect_from("127.0.0.2", listener))
            assert read_reply(held[-1]).startswith(b"220")
        with connect_from("127.0.0.2", listener) as extra:
            assert read_reply(extra).startswith(b"421 4.3.2")
        send(listener, UNNAMED)  # from 127.0.0.1
        assert answers(outbox) == 1
    finally:
        for sock in held:
            sock.close()
