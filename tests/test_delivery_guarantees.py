"""Nothing lost, nothing applied twice: repeated Message-IDs, concurrent moves,
outbox retries up to the attempt limit, one mail's failure never stopping the
others, and no mail for work that rolled back."""

import logging
import mailbox
import threading
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import update
from sqlmodel import select

from pbm.db import reading, transaction
from pbm.mail.outbound import compose
from pbm.models import Board, InboundMessage, MoveRecord, OutboxMail, utcnow
from pbm.courier import wait_for_deliveries
from pbm.outbox import MAX_ATTEMPTS, backoff, deliver_due, outgoing, queue, sweep_batch

from .conftest import free_port, make_mail, wait_until

ALICE, BOB = "alice@players.test", "bob@players.test"


@pytest.fixture
def board(players, outbox):
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    outbox.new()
    return players


def moves(server):
    with reading(server.engine) as s:
        return [m.text for m in s.exec(select(MoveRecord).order_by(MoveRecord.number)).all()]


def test_a_repeated_message_id_is_applied_once(server, outbox, board):
    raw = make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id="<same@players.test>")
    assert server.handle_raw(raw).status == "applied"
    first = outbox.new()
    assert len(first) == 2
    assert server.handle_raw(raw).status == "duplicate"
    assert outbox.new() == []
    assert moves(server) == ["D4"]


def test_a_message_id_without_its_angle_brackets_is_the_same_message_id(server, outbox, board):
    raw = make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id="<bare@players.test>")
    assert server.handle_raw(raw).status == "applied"
    again = raw.replace(b"Message-ID: <bare@players.test>", b"Message-ID:  bare@players.test ")
    assert again != raw and server.handle_raw(again).status == "duplicate"
    assert moves(server) == ["D4"]


def test_a_repeat_from_another_spelling_of_the_sender_is_a_duplicate(server, outbox, board):
    """The repeat is matched on the sender as addresses are compared everywhere (normalised):
    the Unicode and the ASCII spelling of one domain are one sender."""
    def help_from(sender: str) -> bytes:  # the address as UTF-8 (make_mail would encode the domain)
        return (f"From: {sender}\r\nTo: pbm@pbm.test\r\nSubject: help\r\nMessage-ID: <idn@players.test>\r\n"
                "Content-Type: text/plain; charset=utf-8\r\n\r\n\r\n").encode()

    assert server.handle_raw(help_from("carol@xn--bcher-kva.test")).status == "applied"
    assert server.handle_raw(help_from("carol@bücher.test")).status == "duplicate"
    assert len(outbox.new()) == 1


def test_a_repeated_error_mail_is_answered_once(server, outbox, board):
    raw = make_mail(BOB, "greatkingdom move 101 bob bobpw D4", message_id="<oops@players.test>")
    assert server.handle_raw(raw).status == "rejected"
    assert server.handle_raw(raw).status == "duplicate"
    assert len(outbox.new()) == 1


def test_the_same_message_through_the_webhook_is_a_duplicate(server, client, outbox, board):
    raw = make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id="<hook@players.test>")
    first = client.post("/inbound/email", data=raw, content_type="message/rfc822").json
    again = client.post("/inbound/email", data=raw, content_type="message/rfc822").json
    assert first == {"status": "applied", "board": 101, "error": None}
    assert again == {"status": "duplicate", "board": None, "error": None}


def test_concurrent_copies_of_one_message_apply_once(server, outbox, board):
    raw = make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id="<race@players.test>")
    results = []
    barrier = threading.Barrier(6)

    def send():
        barrier.wait()
        results.append(server.handle_raw(raw).status)

    threads = [threading.Thread(target=send) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["applied"] + ["duplicate"] * 5
    assert moves(server) == ["D4"]


def test_concurrent_moves_on_one_board_only_one_applies(server, outbox, board):
    """Six different moves for the same turn race; exactly one lands, the others
    are told it is not their turn or the move number is stale."""
    results = []
    barrier = threading.Barrier(6)
    points = ["A1", "B2", "C3", "D4", "F6", "G7"]

    def send(point):
        barrier.wait()
        raw = make_mail(ALICE, f"greatkingdom move 101 alice alicepw {point}#1")
        results.append(server.handle_raw(raw))

    threads = [threading.Thread(target=send, args=(p,)) for p in points]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r.status for r in results)
    assert statuses == ["applied"] + ["rejected"] * 5
    assert len(moves(server)) == 1
    for r in results:
        if r.status == "rejected":
            assert "It is not your turn" in r.error or "the next move on board 101 is #2" in r.error
    with reading(server.engine) as s:
        b = s.get(Board, 101)
        assert b.move_count == 1 and b.state["turn"] == 1


def test_mails_of_concurrent_units_are_all_delivered_and_marked_sent(server, outbox, board):
    """Each request returns once its answer is committed in the outbox (claimed for
    this process's delivery thread: the outbox is the promise); then every answer
    is delivered once and marked sent."""
    barrier = threading.Barrier(6)
    seen = []  # (status of the request, statuses of its answer rows the moment it returned)

    def send(number):
        message_id = f"<show-{number}@players.test>"
        barrier.wait()
        status = server.handle_raw(make_mail(BOB, "greatkingdom show 101", message_id=message_id)).status
        with reading(server.engine) as s:
            answers = [row.status for row in s.exec(select(OutboxMail)).all() if message_id.encode() in row.raw]
        seen.append((status, answers))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(status, len(answers)) for status, answers in seen] == [("applied", 1)] * 6
    assert {answer for _, answers in seen for answer in answers} <= {"sending", "sent"}
    assert len(outbox.new()) == 6  # waits for this process's deliveries
    with reading(server.engine) as s:
        assert {row.status for row in s.exec(select(OutboxMail)).all()} == {"sent"}


@pytest.fixture
def held_maildir(monkeypatch):
    """The Maildir transport held at its first mail until the test sets the event it
    returns (``entered`` is set once a delivery is held)."""
    from pbm.mail.transport import MaildirTransport

    release, entered = threading.Event(), threading.Event()
    add = MaildirTransport.send

    def held_send(self, sender, recipient, raw):
        entered.set()
        assert release.wait(60), "the test never released the delivery"
        add(self, sender, recipient, raw)

    monkeypatch.setattr(MaildirTransport, "send", held_send)
    release.entered = entered
    yield release
    release.set()
    assert wait_for_deliveries(60)


def answer_in_thread(server, raw) -> tuple[threading.Thread, list]:
    """``server.handle_raw(raw)`` in a thread of its own; its result lands in the list."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(server.handle_raw(raw)))
    thread.start()
    return thread, results


def test_with_the_maildir_the_answer_comes_once_its_mails_are_delivered(server, outbox, board, held_maildir):
    """The interface: with the maildir (and console) backend the mail is delivered by
    the time the answer returns; meanwhile the rows are committed and claimed."""
    before = set(mailbox.Maildir(outbox.path, create=False).keys())
    thread, results = answer_in_thread(server, make_mail(ALICE, "greatkingdom move 101 alice alicepw D4"))
    assert held_maildir.entered.wait(30)
    thread.join(0.2)
    assert thread.is_alive() and results == []  # no answer while the Maildir holds the mail
    with reading(server.engine) as s:
        rows = s.exec(select(OutboxMail).where(OutboxMail.board_id == 101, OutboxMail.status != "sent")).all()
    assert [row.status for row in rows] == ["sending", "sending"]  # committed, claimed by this process
    held_maildir.set()
    thread.join(30)
    assert results[0].status == "applied"
    box = mailbox.Maildir(outbox.path, create=False)  # read as the answer came, with no waiting
    assert sorted(box[key]["To"] for key in set(box.keys()) - before) == [ALICE, BOB]
    assert wait_for_deliveries(30)  # the marks "sent" follow (the next commit, or the delivery thread)
    with reading(server.engine) as s:
        assert {row.status for row in s.exec(select(OutboxMail)).all()} == {"sent"}


@pytest.fixture
def held_settle(monkeypatch):
    """The Maildir's flush to disk (``MaildirTransport.settle``, the delivery thread's)
    held at its first call until the test sets the event it returns; ``entered`` is set
    once a flush is held, ``calls`` counts the flushes that wrote something."""
    from pbm.mail.transport import MaildirTransport

    release, entered, calls = threading.Event(), threading.Event(), []
    settle = MaildirTransport.settle

    def held(self):
        entered.set()
        assert release.wait(60), "the test never released the flush"
        calls.append(self._written)
        settle(self)

    monkeypatch.setattr(MaildirTransport, "settle", held)
    release.entered, release.calls = entered, calls
    yield release
    release.set()
    assert wait_for_deliveries(60)


def test_answers_do_not_wait_for_the_disk_and_their_mails_settle_together(server, outbox, board, held_settle):
    """The answer comes once its mails are in the Maildir; their flush to disk is the
    delivery thread's, and only then are they marked sent. While it flushes one
    answer's mail, five more answers come, each with its mail there to read, and
    those five are flushed at once, with one flush."""
    from pbm import courier

    def unsettled() -> list[str]:
        with reading(server.engine) as s:
            return [row.status for row in s.exec(select(OutboxMail).where(OutboxMail.status != "sent"))]

    before = set(mailbox.Maildir(outbox.path, create=False).keys())
    assert server.handle_raw(make_mail(BOB, "greatkingdom show 101")).status == "applied"
    assert held_settle.entered.wait(30)  # the first answer's mail is being flushed
    for _ in range(5):
        assert server.handle_raw(make_mail(BOB, "greatkingdom show 101")).status == "applied"
    delivered = set(mailbox.Maildir(outbox.path, create=False).keys()) - before  # read with no waiting
    assert len(delivered) == 6
    assert unsettled() == ["sending"] * 6  # committed and delivered, not marked: not on disk yet
    wait_until(lambda: len(courier._courier._waiting) == 5, "the five answers to hand their mails over")
    held_settle.set()
    assert wait_for_deliveries(30)
    assert held_settle.calls == [True, True]  # one flush for the first mail, one for the five after it
    assert unsettled() == []


@pytest.fixture
def marks_alone(monkeypatch) -> list[int]:
    """How many marks each transaction of the delivery thread's own wrote (no commit
    carried them); a commit is never awaited for them here (``MARK_WAIT_SECONDS`` 60 s)."""
    from pbm import courier

    alone: list[int] = []
    mark_alone = courier._mark_alone

    def counted(engine, marks, since):
        alone.append(len(marks))
        mark_alone(engine, marks, since)

    monkeypatch.setattr(courier, "MARK_WAIT_SECONDS", 60.0)
    monkeypatch.setattr(courier, "_mark_alone", counted)
    return alone


def settled_on_disk() -> None:
    """Wait until the delivery thread has flushed this process's delivered mails and
    keeps their marks "sent" for the next commit."""
    from pbm import courier

    wait_until(lambda: courier._courier._marks and not courier._courier._waiting and not courier._courier._sending,
               "the delivered mails to be flushed to disk")


def outbox_statuses(server, leaving: set[int] = frozenset()) -> dict[int, str]:
    """Every outbox row's status by id, but those of ``leaving``."""
    with reading(server.engine) as s:
        return {row.id: row.status for row in s.exec(select(OutboxMail)) if row.id not in leaving}


def test_the_next_commit_carries_the_marks_of_mails_delivered_before_it(server, outbox, board, marks_alone):
    """Group commit: a delivered Maildir batch is marked sent in the transaction of the
    next unit of work (no write transaction of its own); the delivery thread writes
    the marks alone only when no commit comes, or when someone waits for them."""
    challenge = set(outbox_statuses(server))  # the challenge's mails, marked before this test's moves
    assert server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4")).status == "applied"
    settled_on_disk()
    first = outbox_statuses(server, challenge)
    assert list(first.values()) == ["sending", "sending"]  # delivered (the answer came), not marked yet
    assert server.handle_raw(make_mail(BOB, "greatkingdom move 101 bob bobpw C3")).status == "applied"
    now = outbox_statuses(server, challenge)
    assert [now[i] for i in first] == ["sent", "sent"]  # carried by bob's move
    assert [status for i, status in now.items() if i not in first] == ["sending", "sending"]
    assert marks_alone == []
    assert len(outbox.new()) == 4  # waits for the deliveries: the last marks are written alone
    assert marks_alone == [2]
    assert set(outbox_statuses(server).values()) == {"sent"}


def test_marks_carried_by_a_unit_that_fails_wait_for_the_next(server, outbox, board, marks_alone, monkeypatch):
    """A unit that wrote the delivered mails' marks and then failed before its commit
    gives them back: a later transaction writes them, and no mail stays unmarked."""
    from pbm.service import unit as unit_module

    challenge = set(outbox_statuses(server))
    assert server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4")).status == "applied"
    settled_on_disk()

    def fail_after_the_marks(self):
        raise RuntimeError("disk full")  # after the marks were written in the transaction, before its commit

    monkeypatch.setattr(unit_module.Unit, "versions", fail_after_the_marks)
    assert server.handle_raw(make_mail(BOB, "greatkingdom move 101 bob bobpw C3")).status == "retry"
    assert list(outbox_statuses(server, challenge).values()) == ["sending"] * 2
    assert marks_alone == []
    assert len(outbox.new()) == 2  # alice's move's mails; bob's move rolled back
    assert marks_alone == [2]
    assert set(outbox_statuses(server).values()) == {"sent"}


def test_auto_replies_are_recorded_and_never_answered(server, outbox, board):
    raw = make_mail(BOB, "Out of office", "I am away", headers={"Auto-Submitted": "auto-replied"})
    assert server.handle_raw(raw).status == "ignored"
    assert outbox.new() == []
    with reading(server.engine) as s:
        record = s.exec(select(InboundMessage).where(InboundMessage.sender == BOB,
                                                     InboundMessage.status == "ignored")).one()
        assert record.error == "Auto-Submitted: auto-replied"


def test_work_that_rolls_back_sends_nothing(server, outbox, board, monkeypatch):
    """A failure after the move was logged and its mails queued leaves no outbox row."""
    from pbm.service import boards

    queue_then_fail = boards.letters.board_mails

    def board_mails_then_disk_full(*args, **kwargs):
        queue_then_fail(*args, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(boards.letters, "board_mails", board_mails_then_disk_full)
    result = server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4"))
    assert result.status == "retry"  # the MTA or provider tries again later
    assert outbox.new() == []
    with reading(server.engine) as s:
        assert s.exec(select(OutboxMail).where(OutboxMail.board_id == 101,
                                               OutboxMail.status != "sent")).all() == []
    assert moves(server) == []


class Sink:
    """A real SMTP server that can refuse for a while."""

    def __init__(self):
        self.received = []
        handler = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                if handler.refuse:
                    return "451 try again later"
                handler.received.append(envelope)
                return "250 OK"

        self.refuse = True
        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)


@pytest.fixture
def sink():
    s = Sink()
    s.controller.start()
    yield s
    s.controller.stop()


@pytest.fixture
def smtp_overrides(overrides, sink):
    return {**overrides, "mail_backend": "smtp", "smtp_host": "127.0.0.1", "smtp_port": sink.port}


def test_smtp_failures_are_retried_with_backoff_and_the_same_message_id(smtp_overrides, sink):
    from pbm import create_app

    app = create_app(smtp_overrides)
    server = app.extensions["pbm"]
    try:
        result = server.handle_raw(make_mail(ALICE, "help"))
        assert result.status == "applied"  # answered at once, although the relay refuses
        # The background attempt right after commit was refused (451) and rescheduled.
        assert wait_for_deliveries(timeout=30), "the delivery after commit did not finish in 30 s"
        with reading(server.engine) as s:
            row = s.exec(select(OutboxMail)).one()
        assert (row.status, row.attempts) == ("pending", 1)
        assert "451" in row.last_error
        retry_at = row.next_attempt_at
        assert timedelta(seconds=50) < retry_at - row.created_at < timedelta(seconds=70)
        sink.refuse = False
        assert deliver_due(server.engine, server.settings, retry_at - timedelta(seconds=1)) == 0
        assert deliver_due(server.engine, server.settings, retry_at) == 1
        assert deliver_due(server.engine, server.settings, retry_at + timedelta(hours=1)) == 0
        assert len(sink.received) == 1
        assert f"Message-ID: {row.message_id}" in sink.received[0].content.decode()
        with reading(server.engine) as s:
            row = s.exec(select(OutboxMail)).one()
        assert (row.status, row.attempts) == ("sent", 2)
    finally:
        server.engine.dispose()


def test_backoff_doubles_up_to_six_hours():
    assert [backoff(n).total_seconds() for n in (1, 2, 3, 4)] == [60, 120, 240, 480]
    assert backoff(30) == timedelta(hours=6)


def queue_orphans(server, recipients, now):
    """Mails queued at ``now`` by a process that died before sending them."""
    mails = [outgoing(compose(server.settings, to=r, subject="x", body="Hello.", now=now), None) for r in recipients]
    with transaction(server.engine) as session:
        queue(session, mails, now)
    return [mail.message_id for mail in mails]


def test_an_unexpected_error_fails_only_its_mail(server, outbox, monkeypatch, caplog):
    from pbm.mail.transport import MaildirTransport

    add = MaildirTransport.send

    def broken_for_bob(self, sender, recipient, raw):
        if recipient == BOB:
            raise RuntimeError("a defect in the transport")
        add(self, sender, recipient, raw)

    monkeypatch.setattr(MaildirTransport, "send", broken_for_bob)
    now = utcnow() - timedelta(hours=1)
    queue_orphans(server, [ALICE, BOB, "carol@players.test"], now)
    assert deliver_due(server.engine, server.settings) == 2
    assert sorted(m["To"].addresses[0].addr_spec for m in outbox.new()) == [ALICE, "carol@players.test"]
    with reading(server.engine) as s:
        bob = s.exec(select(OutboxMail).where(OutboxMail.recipient == BOB)).one()
    assert (bob.status, bob.attempts) == ("pending", 2)
    assert bob.last_error == "RuntimeError: a defect in the transport"
    assert "unexpected error while sending" in caplog.text


def test_a_last_attempt_that_never_reported_back_is_marked_failed_once(server, outbox, caplog):
    """A process that dies during the last allowed attempt leaves the mail claimed;
    the sweep gives up on it instead of trying a 31st time."""
    now = utcnow() - timedelta(hours=1)
    [message_id] = queue_orphans(server, [ALICE], now)
    with transaction(server.engine) as session:  # attempts 1 to 29 failed before
        session.execute(update(OutboxMail).values(attempts=MAX_ATTEMPTS, last_error="451 try later"))
    with caplog.at_level(logging.ERROR, logger="pbm.outbox"):
        assert deliver_due(server.engine, server.settings) == 0
        assert deliver_due(server.engine, server.settings, utcnow() + timedelta(days=30)) == 0
    assert outbox.new() == []
    with reading(server.engine) as s:
        row = s.exec(select(OutboxMail)).one()
    assert (row.status, row.attempts) == ("failed", MAX_ATTEMPTS)
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and message_id in errors[0] and "never reported back" in errors[0]


def test_two_sweeps_giving_up_on_one_mail_at_once_log_it_once(server, outbox, caplog, monkeypatch):
    """Two sweeps (two schedulers, or ``pbm sweep`` beside one) both find the mail
    whose last attempt never reported back; the one that marks it failed logs it,
    the other, finding it marked already, says nothing."""
    from contextlib import contextmanager

    from pbm import outbox as outbox_module

    now = utcnow() - timedelta(hours=1)
    [message_id] = queue_orphans(server, [ALICE], now)
    with transaction(server.engine) as session:
        session.execute(update(OutboxMail).values(attempts=MAX_ATTEMPTS, last_error="451 try later"))
    real_reading, give_up = outbox_module.reading, outbox_module._give_up_on_lapsed
    other = []

    @contextmanager
    def read_then_let_another_sweep_finish(engine):
        with real_reading(engine) as session:
            yield session
        if not other:  # after this sweep's read, before its write: another sweep does it all
            other.append(True)
            give_up(engine, utcnow())

    monkeypatch.setattr(outbox_module, "reading", read_then_let_another_sweep_finish)
    with caplog.at_level(logging.ERROR, logger="pbm.outbox"):
        give_up(server.engine, utcnow())
    assert other
    with real_reading(server.engine) as s:
        assert s.exec(select(OutboxMail)).one().status == "failed"
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and message_id in errors[0], errors


def test_mails_whose_flush_to_disk_failed_are_not_marked_sent(server, outbox, board, monkeypatch, caplog):
    """A Maildir flush the disk refuses leaves the delivered mails claimed, not sent: the
    answer came (the mails were there to read), and the sweep sends them again after
    their lease, as after a crash."""
    from pbm.mail.transport import MaildirTransport

    def refused(self):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(MaildirTransport, "settle", refused)
    assert server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4")).status == "applied"
    assert sorted(m["To"].addresses[0].addr_spec for m in outbox.new()) == [ALICE, BOB]
    with reading(server.engine) as s:
        assert [row.status for row in s.exec(select(OutboxMail).where(OutboxMail.board_id == 101,
                                                                      OutboxMail.status != "sent"))] == ["sending"] * 2
    assert "settling outbox mails" in caplog.text


def test_without_syncfs_each_mail_is_flushed_as_it_is_written(server, outbox, board, monkeypatch):
    """Where the system has no ``syncfs`` (not Linux), each Maildir file is flushed to
    disk as it is written and ``new/`` once a batch; the mails arrive and are marked
    sent as with it."""
    import os

    from pbm.mail import transport

    flushed = []
    fsync = os.fsync

    def counted(fd):
        flushed.append(fd)
        fsync(fd)

    monkeypatch.setattr(transport, "_syncfs", None)
    monkeypatch.setattr(transport.os, "fsync", counted)
    assert server.handle_raw(make_mail(ALICE, "greatkingdom move 101 alice alicepw D4")).status == "applied"
    assert sorted(m["To"].addresses[0].addr_spec for m in outbox.new()) == [ALICE, BOB]
    assert wait_for_deliveries(30)
    assert len(flushed) == 3  # the two mails, then new/
    with reading(server.engine) as s:
        assert {row.status for row in s.exec(select(OutboxMail))} == {"sent"}


def test_the_sweep_finds_the_mails_due_among_thousands_sent_by_the_index_of_the_unsent(server, outbox):
    """The outbox keeps every mail ever sent; the sweep reads only the index of those
    still to send (``ix_outbox_unsent``), never the whole table, and sends the due."""
    now = utcnow()
    orphans = queue_orphans(server, [ALICE, BOB], now - timedelta(hours=1))  # their process died
    sent = [{"message_id": f"<old{i}@pbm.test>", "board_id": None, "recipient": ALICE, "subject": "x", "raw": b"x",
             "status": "sent", "attempts": 1, "next_attempt_at": now - timedelta(days=2), "claimed_until": None,
             "claim": None, "created_at": now - timedelta(days=2)} for i in range(3000)]
    with transaction(server.engine) as session:
        session.execute(OutboxMail.__table__.insert(), sent)
    dialect = server.engine.dialect
    statement = str(sweep_batch(now).compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    with server.engine.connect() as connection:
        if dialect.name == "postgresql":
            connection.exec_driver_sql("ANALYZE outbox")  # the planner's counts, as autovacuum keeps them
            plan = [row[0] for row in connection.exec_driver_sql("EXPLAIN " + statement.replace("%", "%%"))]
        else:
            plan = [row[3] for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement)]
    assert any("ix_outbox_unsent" in line for line in plan), plan
    assert not any(line.startswith("SCAN outbox") and "INDEX" not in line for line in plan), plan
    assert deliver_due(server.engine, server.settings, now) == 2
    assert sorted(m["Message-ID"] for m in outbox.new()) == sorted(orphans)
