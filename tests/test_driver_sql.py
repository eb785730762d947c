"""The move path's Core writes go to the driver's cursor (``driver_sql.execute``):
the row must be the one SQLAlchemy's execution writes (the column types' bind
processing, the statement's own values), a failure the same wrapped error, and
the cursor events must see the statement, on SQLite and PostgreSQL alike."""

from datetime import timedelta

import pytest
from sqlalchemy import bindparam, event, exc, insert, select, update

from pbm import driver_sql
from pbm.db import make_engine
from pbm.models import InboundMessage, OutboxMail, utcnow

NOW = utcnow().replace(microsecond=123456)


@pytest.fixture
def engine(database_url):
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


def mail_row(message_id: str) -> dict:
    return {"message_id": message_id, "board_id": None, "recipient": "bob@players.test", "subject": "Board 1",
            "raw": b"Subject: Board 1\r\n\r\nD4\r\n", "status": "sending", "attempts": 1,
            "next_attempt_at": NOW, "claimed_until": NOW + timedelta(minutes=5), "claim": f"claim-{message_id}",
            "created_at": NOW}


def stored(engine, message_id: str) -> dict:
    with engine.connect() as connection:
        row = connection.execute(select(OutboxMail).where(OutboxMail.message_id == message_id)).mappings().one()
    return {key: value for key, value in row.items() if key != "id"}


def test_a_row_is_written_as_sqlalchemy_writes_it(engine):
    with engine.begin() as connection:
        connection.execute(insert(OutboxMail), mail_row("<a@pbm>"))
        assert driver_sql.execute(connection, insert(OutboxMail), [mail_row("<b@pbm>"), mail_row("<c@pbm>")]) == 2
    by_sqlalchemy, by_driver = stored(engine, "<a@pbm>"), stored(engine, "<b@pbm>")
    assert by_driver["claimed_until"] == NOW + timedelta(minutes=5)  # a UTC datetime back, microseconds kept
    assert {**by_driver, "message_id": "<a@pbm>", "claim": "claim-<a@pbm>"} == by_sqlalchemy
    assert stored(engine, "<c@pbm>")["claim"] == "claim-<c@pbm>"


def test_an_update_writes_the_statements_own_values_and_counts_its_rows(engine):
    mark_sent = update(OutboxMail).where(OutboxMail.claim == bindparam("mark_claim")).values(
        status="sent", sent_at=bindparam("now"), claimed_until=None)
    with engine.begin() as connection:
        driver_sql.execute(connection, insert(OutboxMail), [mail_row("<a@pbm>"), mail_row("<b@pbm>")])
        assert driver_sql.execute(connection, mark_sent, {"mark_claim": "claim-<a@pbm>", "now": NOW}) == 1
        assert driver_sql.execute(connection, mark_sent, {"mark_claim": "nobody's", "now": NOW}) == 0
    sent = stored(engine, "<a@pbm>")
    assert (sent["status"], sent["sent_at"], sent["claimed_until"]) == ("sent", NOW, None)
    assert stored(engine, "<b@pbm>")["status"] == "sending"


def test_a_repeated_row_fails_with_sqlalchemys_integrity_error_and_the_events_see_the_statement(engine):
    seen = []
    event.listen(engine, "before_cursor_execute", lambda _c, _cur, statement, *_: seen.append(statement))
    record = {"message_id": "<m@players.test>", "sender": "alice@players.test", "subject": "D4",
              "status": "applied", "board_id": None, "error": None, "received_at": NOW}
    with engine.begin() as connection:
        driver_sql.execute(connection, insert(InboundMessage), record)
    assert any(statement.startswith("INSERT INTO inbound_message") for statement in seen)
    with pytest.raises(exc.IntegrityError):
        with engine.begin() as connection:
            driver_sql.execute(connection, insert(InboundMessage), record)
    with engine.connect() as connection:  # the engine goes on: the failed transaction was rolled back
        assert connection.execute(select(InboundMessage.message_id)).scalars().all() == ["<m@players.test>"]


def test_a_statement_that_needs_a_value_nobody_gives_is_refused_before_it_runs(engine):
    with engine.begin() as connection:
        with pytest.raises(ValueError, match="neither given nor fixed"):
            driver_sql.execute(connection, update(OutboxMail).where(OutboxMail.claim == bindparam("claim_of")),
                               {"status": "sent"})


def test_rows_are_the_values_sqlalchemy_reads(engine):
    query = select(OutboxMail.message_id, OutboxMail.claimed_until, OutboxMail.raw, OutboxMail.attempts).where(
        OutboxMail.status == bindparam("status")).order_by(OutboxMail.message_id)
    with engine.begin() as connection:
        driver_sql.execute(connection, insert(OutboxMail), [mail_row("<a@pbm>"), mail_row("<b@pbm>")])
    with engine.connect() as connection:
        by_sqlalchemy = [tuple(row) for row in connection.execute(query, {"status": "sending"})]
        assert driver_sql.rows(connection, query, {"status": "sending"}) == by_sqlalchemy
        assert driver_sql.rows(connection, query, {"status": "sent"}) == []
    assert by_sqlalchemy[0][1] == NOW + timedelta(minutes=5)
