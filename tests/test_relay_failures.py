"""Failing relays against the real outbox: a relay that is down and comes
back, one that refuses an address, internationalised addresses with and
without SMTPUTF8, and `pbm ingest` delivering before it exits. Mail is counted
by Message-ID at a real aiosmtpd relay; `pbm ingest` and `pbm sweep` run as
processes. The clock is moved through the back-off with ``deliver_due(now=)``.

Mails queued an hour ago with their lease long lapsed stand for mails whose
sending process died: the next sweep owes them delivery."""

import asyncio
import dataclasses
import logging
import os
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from sqlmodel import select

from pbm.config import load_settings
from pbm.db import make_engine, reading, transaction
from pbm.mail.outbound import compose
from pbm.models import OutboxMail, utcnow
from pbm.courier import deliver_after_commit, wait_for_deliveries
from pbm.outbox import CLAIM_LEASE, MAX_ATTEMPTS, backoff, deliver_due, outgoing, queue

from .conftest import free_port, make_mail
from .test_transport import RecordingRelay

GHOST = "ghost@players.test"
JOERG = "jörg@bücher.example"  # a non-ASCII local part: only SMTPUTF8 carries it
IDN_USER = "user@bücher.example"  # only the domain is non-ASCII: IDNA carries it anywhere


@pytest.fixture
def engine(database_url):
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def port():
    return free_port()


@pytest.fixture
def settings(database_url, port, tmp_path):
    return load_settings({"database_url": database_url, "instance_path": str(tmp_path / "instance"),
                          "mail_backend": "smtp", "smtp_host": "127.0.0.1", "smtp_port": port,
                          "server_address": "pbm@pbm.test"})


@pytest.fixture
def env(settings):
    return {**os.environ, "PBM_DATABASE_URL": settings.database_url,
            "PBM_INSTANCE_PATH": settings.instance_path, "PBM_MAIL_BACKEND": "smtp",
            "PBM_SMTP_HOST": "127.0.0.1", "PBM_SMTP_PORT": str(settings.smtp_port),
            "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_LOG_LEVEL": "WARNING"}


def pbm(*args, env, stdin=None):
    return subprocess.run([sys.executable, "-m", "pbm.cli", *args], input=stdin, env=env,
                          capture_output=True, timeout=120)


def sweep(env) -> int:
    """Run `pbm sweep` as a process; it must exit 0. Returns how many mails it delivered."""
    done = pbm("sweep", env=env)
    assert done.returncode == 0, f"pbm sweep exited {done.returncode}: {done.stderr.decode()}"
    return int(done.stdout.decode().split("delivered=")[1])


def queue_orphans(engine, settings, recipients) -> list[str]:
    """Queue one mail per recipient an hour ago, as a process that died before
    sending would have left them; returns their Message-IDs."""
    an_hour_ago = utcnow() - timedelta(hours=1)
    mails = [outgoing(compose(settings, to=recipient, subject=f"for {recipient}", body="Hello.", now=an_hour_ago),
                      None) for recipient in recipients]
    with transaction(engine) as session:
        queue(session, mails, an_hour_ago)
    return [mail.message_id for mail in mails]


def outbox(engine) -> dict[str, OutboxMail]:
    with reading(engine) as session:
        return {row.recipient: row for row in session.exec(select(OutboxMail)).all()}


def test_relay_down_then_back_loses_nothing_and_sends_each_mail_once(engine, settings, env, port):
    recipients = [f"p{n}@players.test" for n in range(12)]
    message_ids = queue_orphans(engine, settings, recipients)
    assert sweep(env) == 0  # nothing listens on the port
    rows = outbox(engine)
    assert {(r.status, r.attempts) for r in rows.values()} == {("pending", 2)}
    assert all("unusable" in r.last_error for r in rows.values())

    with RecordingRelay(port=port) as relay:
        back = utcnow() + backoff(2) + timedelta(seconds=1)
        assert deliver_due(engine, settings, back) == 12
        for hour in range(1, 25):  # a day of sweeps later: nothing goes again
            assert deliver_due(engine, settings, back + timedelta(hours=hour)) == 0
        assert sweep(env) == 0
    assert relay.copies_by_message_id() == {message_id: 1 for message_id in message_ids}
    assert {r.status for r in outbox(engine).values()} == {"sent"}


def test_an_address_refused_for_good_fails_at_once_and_the_others_all_go(engine, settings, env, port, caplog):
    """A 5xx reply (no such user) will not change: the mail is given up, not retried."""
    recipients = ["a@players.test", GHOST, "b@players.test"]
    message_ids = dict(zip(recipients, queue_orphans(engine, settings, recipients)))
    with RecordingRelay(port=port, refused={GHOST}) as relay:
        with caplog.at_level(logging.WARNING, logger="pbm.outbox"):
            assert deliver_due(engine, settings, utcnow()) == 2
        ghost = outbox(engine)[GHOST]
        assert (ghost.status, ghost.attempts) == ("failed", 2) and "550" in ghost.last_error
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert errors == [f"mail {message_ids[GHOST]} to {GHOST} failed for good: the relay refused it "
                          f"({ghost.last_error})"]
        assert deliver_due(engine, settings, utcnow() + timedelta(days=30)) == 0
        assert sweep(env) == 0
        assert relay.rcpt_attempts[GHOST] == 1
    assert relay.copies_by_message_id() == {message_ids[r]: 1 for r in recipients if r != GHOST}


def test_an_address_deferred_is_retried_to_the_limit_and_the_others_all_go(engine, settings, env, port, caplog):
    recipients = ["a@players.test", GHOST, "b@players.test", "c@players.test"]
    message_ids = dict(zip(recipients, queue_orphans(engine, settings, recipients)))
    with RecordingRelay(port=port, deferred={GHOST}) as relay:
        assert sweep(env) == 3
        assert sorted(e.rcpt_tos[0] for e in relay.accepted) == ["a@players.test", "b@players.test",
                                                                 "c@players.test"]
        ghost = outbox(engine)[GHOST]
        assert (ghost.status, ghost.attempts) == ("pending", 2) and "450" in ghost.last_error

        with caplog.at_level(logging.WARNING, logger="pbm.outbox"):
            for _ in range(MAX_ATTEMPTS):
                if ghost.status != "pending":
                    break
                assert deliver_due(engine, settings, ghost.next_attempt_at) == 0
                ghost = outbox(engine)[GHOST]
        assert (ghost.status, ghost.attempts) == ("failed", MAX_ATTEMPTS)
        # Attempt 1 was the dead process's; the relay saw every later one.
        assert relay.rcpt_attempts[GHOST] == MAX_ATTEMPTS - 1
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and message_ids[GHOST] in errors[0] and "failed for good" in errors[0]

        assert deliver_due(engine, settings, ghost.next_attempt_at + timedelta(days=30)) == 0
        assert sweep(env) == 0
        assert relay.rcpt_attempts[GHOST] == MAX_ATTEMPTS - 1
    assert relay.copies_by_message_id() == {message_ids[r]: 1 for r in recipients if r != GHOST}


@pytest.mark.parametrize("smtputf8", [True, False], ids=["relay-offers-SMTPUTF8", "ascii-only-relay"])
def test_internationalised_recipients_never_stop_the_batch(engine, settings, env, port, smtputf8):
    recipients = ["alice@players.test", JOERG, IDN_USER, "bob@players.test"]
    message_ids = dict(zip(recipients, queue_orphans(engine, settings, recipients)))
    going = recipients if smtputf8 else [r for r in recipients if r != JOERG]
    with RecordingRelay(port=port, smtputf8=smtputf8) as relay:
        assert sweep(env) == len(going)
        start = utcnow()
        for step in range(1, 24 * 12 + 1):  # a day of sweeps, every five minutes
            assert deliver_due(engine, settings, start + timedelta(minutes=5 * step)) == 0
    assert relay.copies_by_message_id() == {message_ids[r]: 1 for r in going}
    envelopes = {e.rcpt_tos[0]: e for e in relay.accepted}
    assert envelopes["user@xn--bcher-kva.example"].smtp_utf8 is False
    to_headers = {str(m["Message-ID"]): m["To"].addresses[0].addr_spec for m in relay.messages()}
    assert to_headers[message_ids[IDN_USER]] == "user@xn--bcher-kva.example"
    joerg = outbox(engine)[JOERG]
    if smtputf8:
        assert envelopes[JOERG].smtp_utf8 is True
        assert to_headers[message_ids[JOERG]] == JOERG
        assert joerg.status == "sent"
    else:
        assert joerg.status == "pending" and 2 < joerg.attempts < MAX_ATTEMPTS
        assert "does not offer SMTPUTF8" in joerg.last_error


def test_each_mail_is_marked_sent_before_the_next_one_goes(engine, settings, port):
    """What a crash can repeat is at most the mail in flight: when the relay takes a
    mail, every mail it took before is already recorded as sent."""
    recipients = [f"p{n}@players.test" for n in range(5)]
    queue_orphans(engine, settings, recipients)
    unsent_before = []

    class Watching(RecordingRelay):
        async def handle_DATA(self, server, session, envelope):
            taken = {e.rcpt_tos[0] for e in self.accepted}
            unsent_before.append({r for r, row in outbox(engine).items() if r in taken and row.status != "sent"})
            return await super().handle_DATA(server, session, envelope)

    with Watching(port=port):
        assert deliver_due(engine, settings) == 5
    assert unsent_before == [set()] * 5


def test_a_batch_that_outlives_its_lease_leaves_what_a_sweep_took_to_the_sweep(engine, settings, port):
    """The delivery thread is held up on its first mail (a slow relay) past the lease;
    a sweep takes the lapsed rows meanwhile and sends them. The thread then sends none
    of those again: only the mail it had in flight may go twice."""
    release, held = threading.Event(), threading.Event()

    class Slow(RecordingRelay):
        async def handle_DATA(self, server, session, envelope):
            if not held.is_set():  # the first mail waits until the sweep has been
                held.set()
                await asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
            return await super().handle_DATA(server, session, envelope)

    now = utcnow()
    mails = [outgoing(compose(settings, to=f"w{n}@players.test", subject="board", body="Board.", now=now), 101)
             for n in range(4)]
    with Slow(port=port) as relay:
        with transaction(engine) as session:
            queue(session, mails, now)
        deliver_after_commit(engine, settings, mails)  # smtp: the thread sends them, the call returns
        assert held.wait(10)
        assert deliver_due(engine, settings, now + CLAIM_LEASE + timedelta(minutes=1)) == 4  # the leases lapsed
        release.set()
        assert wait_for_deliveries(30)
        copies = relay.copies_by_message_id()
    assert {mail.message_id: copies[mail.message_id] for mail in mails[1:]} == {m.message_id: 1 for m in mails[1:]}
    assert copies[mails[0].message_id] == 2  # the one in flight as the sweep took it
    assert {row.status for row in outbox(engine).values()} == {"sent"}


def test_a_relay_host_no_connection_can_be_opened_to_fails_the_batch_once(engine, settings, caplog):
    """A host IDNA refuses (settings refuse it at start; here it is set behind their back)
    is an unusable relay for the whole batch, as a relay that is down: no traceback a mail."""
    queue_orphans(engine, settings, ["p1@players.test", "p2@players.test"])
    with caplog.at_level(logging.WARNING):
        assert deliver_due(engine, dataclasses.replace(settings, smtp_host="relay..example.org")) == 0
    rows = outbox(engine).values()
    assert {row.status for row in rows} == {"pending"}
    assert all("relay relay..example.org:" in row.last_error and "unusable" in row.last_error for row in rows)
    assert "unexpected error" not in caplog.text and "Traceback" not in caplog.text


def test_pbm_ingest_delivers_over_smtp_before_it_exits(engine, env, port):
    mails = [make_mail("alice@players.test", "signup alice alicepw"),
             make_mail("bob@players.test", "signup bob bobpw"),
             make_mail("alice@players.test", "greatkingdom challenge alice bob")]
    with RecordingRelay(port=port) as relay:
        for raw in mails:
            done = pbm("ingest", env=env, stdin=raw)
            assert done.returncode == 0 and done.stdout.decode().startswith("applied"), done.stderr.decode()
            # No waiting: the process has exited, so whatever it sent was accepted.
            with reading(engine) as session:
                rows = session.exec(select(OutboxMail)).all()
            assert relay.copies_by_message_id() == {r.message_id: 1 for r in rows}, \
                "pbm ingest exited before the relay had its mails"
            assert {r.status for r in rows} == {"sent"}
    assert len(relay.accepted) >= 4  # two welcomes, and the challenge to both players


def test_pbm_ingest_answers_at_once_when_the_relay_is_down(engine, env):
    done = pbm("ingest", env=env, stdin=make_mail("alice@players.test", "signup alice alicepw"))
    assert done.returncode == 0 and done.stdout.decode().startswith("applied")
    [row] = outbox(engine).values()
    assert (row.status, row.attempts) == ("pending", 1) and "unusable" in row.last_error


def test_waiting_for_background_deliveries_is_bounded(engine, settings, port):
    """A process exits after at most the bound even while a relay hangs; the
    delivery then finishes when the relay answers."""
    release = threading.Event()

    class Hanging(RecordingRelay):
        async def handle_DATA(self, server, session, envelope):
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 60)
            return await super().handle_DATA(server, session, envelope)

    now = utcnow()
    with Hanging(port=port) as relay:
        rows = [outgoing(compose(settings, to="alice@players.test", subject="x", body="Hello.", now=now), None)]
        with transaction(engine) as session:
            queue(session, rows, now)
        deliver_after_commit(engine, settings, rows)
        assert wait_for_deliveries(timeout=0.2) is False  # the relay holds the mail until released
        release.set()
        assert wait_for_deliveries(timeout=60), "the delivery did not finish within 60 s of the release"
    assert relay.copies_by_message_id() == {rows[0].message_id: 1}
    assert outbox(engine)["alice@players.test"].status == "sent"
