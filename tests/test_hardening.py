"""The small hardening rules of issue 10: a read-only database is reported, not
hidden; one address in its several spellings is one sender; an invitation costs the
same whatever names exist; a wrong password and an unknown userid cost the same;
SQLite may be named by a URI."""

import os
import shutil
import threading
import uuid
from email.utils import make_msgid

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlmodel import select

from pbm import create_app
from pbm.db import make_engine, reading
from pbm.migrate import upgrade
from pbm.models import Player
from pbm.service import passwords
from pbm.service.accounts import USERID

from .conftest import POSTGRES_ADMIN_URL

ALICE = "alice@players.test"
UNICODE, PUNYCODE = "carol@bücher.test", "carol@xn--bcher-kva.test"


def settings(tmp_path, database_url: str) -> dict:
    return {"database_url": database_url, "instance_path": str(tmp_path / "instance"),
            "maildir": str(tmp_path / "maildir"), "mail_backend": "maildir",
            "server_address": "pbm@pbm.test", "base_url": "http://pbm.test", "secret_key": "k"}


def healthz(tmp_path, database_url: str):
    app = create_app(settings(tmp_path, database_url))
    try:
        return app.test_client().get("/healthz")
    finally:
        app.extensions["pbm"].engine.dispose()


def assert_read_only_answer(response):
    assert response.status_code == 503
    assert response.json["error"] == ("The database refuses writes (is it read-only?): "
                                      "no move and no mail can be saved.")


# -- /healthz ------------------------------------------------------------------------

def test_healthz_fails_on_a_sqlite_database_opened_read_only(tmp_path, sqlite_template):
    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    assert healthz(tmp_path, f"sqlite:///{path}").status_code == 200
    assert_read_only_answer(healthz(tmp_path, f"sqlite:///file:{path}?mode=ro&uri=true"))


def test_a_signed_mailgun_post_to_a_database_that_refuses_writes_is_a_503_to_retry(tmp_path, sqlite_template):
    """The token is taken in a write of its own before the mail is read: when the
    database refuses it, the provider is told to try again (503), not a 500."""
    from .test_web import mailgun_fields

    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    app = create_app({**settings(tmp_path, f"sqlite:///file:{path}?mode=ro&uri=true"),
                      "mailgun_signing_key": "mg-key"})
    try:
        response = app.test_client().post("/inbound/email", data=mailgun_fields())
    finally:
        app.extensions["pbm"].engine.dispose()
    assert response.status_code == 503 and response.json["status"] == "retry"


def test_healthz_on_a_database_without_tables_says_to_upgrade(tmp_path):
    response = healthz(tmp_path, f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    assert response.status_code == 503
    assert response.json["error"] == "The database lacks this version's tables: run `pbm db upgrade`."


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a file whatever its mode")
def test_healthz_fails_on_a_sqlite_file_made_read_only(tmp_path, sqlite_template):
    path = tmp_path / "pbm.sqlite3"
    shutil.copy(sqlite_template, path)
    path.chmod(0o444)
    assert_read_only_answer(healthz(tmp_path, f"sqlite:///{path}"))


@pytest.fixture
def postgres(postgres_url):
    if postgres_url is None:
        pytest.skip(f"PostgreSQL lane: no server answers at {POSTGRES_ADMIN_URL}")
    return sa.engine.make_url(postgres_url)


def test_healthz_fails_on_postgresql_in_read_only_mode(tmp_path, postgres):
    read_only = postgres.update_query_dict({"options": "-c default_transaction_read_only=on"})
    assert healthz(tmp_path, postgres.render_as_string(hide_password=False)).status_code == 200
    assert_read_only_answer(healthz(tmp_path, read_only.render_as_string(hide_password=False)))


def test_healthz_fails_for_a_postgresql_role_that_may_only_read(tmp_path, postgres):
    role = f"pbm_reader_{uuid.uuid4().hex[:8]}"
    admin = make_engine(postgres.render_as_string(hide_password=False))
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
        conn.exec_driver_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        assert_read_only_answer(healthz(tmp_path, postgres.set(username=role).render_as_string(
            hide_password=False)))
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP OWNED BY {role}")
            conn.exec_driver_sql(f"DROP ROLE {role}")
        admin.dispose()


# -- SQLite named by a URI -------------------------------------------------------------

def test_a_sqlite_uri_names_the_database_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "data" / "pbm.sqlite3"
    url = f"sqlite:///file:{path}?mode=rwc&uri=true"
    upgrade(url)
    app = create_app(settings(tmp_path, url))
    try:
        assert app.extensions["pbm"].handle_raw(utf8_mail(ALICE, "signup alice alicepw")).status == "applied"
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        app.extensions["pbm"].engine.dispose()
    assert path.is_file() and not (tmp_path / "file:").exists()  # no stray directory named after the URI
    with reading(make_engine(f"sqlite:///{path}")) as session:
        assert session.exec(select(Player.email)).all() == [ALICE]


# -- an internationalised sender ---------------------------------------------------

def utf8_mail(sender: str, subject: str, text: str = "", to: str = "pbm@pbm.test") -> bytes:
    """A mail as an SMTPUTF8 relay passes it on: the address in UTF-8 in the header."""
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\n"
            f"Message-ID: {make_msgid(domain='players.test')}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n").encode()


@pytest.mark.parametrize("signed_up_from, playing_from", [(UNICODE, PUNYCODE), (PUNYCODE, UNICODE)])
def test_an_idn_sender_uses_its_account_in_either_spelling(server, outbox, signed_up_from, playing_from):
    assert server.handle_raw(utf8_mail(ALICE, "signup alice alicepw")).status == "applied"
    assert server.handle_raw(utf8_mail(signed_up_from, "signup carol carolpw")).status == "applied"
    with reading(server.engine) as session:
        assert session.exec(select(Player.email).where(Player.userid == "carol")).one() == UNICODE
    assert server.handle_raw(utf8_mail(playing_from, "greatkingdom challenge carol alice")).status == "applied"
    board_mail, = (m for m in outbox.to(PUNYCODE) if "Board 101" in m["Subject"])  # the domain in IDNA
    reply_to = board_mail["Reply-To"].addresses[0].addr_spec
    assert server.handle_raw(utf8_mail(playing_from, "Re: " + str(board_mail["Subject"]), "D4",
                                       to=reply_to)).status == "applied"
    again = server.handle_raw(utf8_mail(playing_from, "signup carol2 carolpw"))
    assert again.status == "rejected" and "already belongs to the userid carol" in again.error


# -- invitations -------------------------------------------------------------------

def test_an_invitation_costs_the_same_however_many_players_share_its_name(players, server):
    statements: list[str] = []
    mine = threading.get_ident()  # the mail's own statements, not a background thread's
    event.listen(server.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: (
        statements.append(statement) if threading.get_ident() == mine else None))
    cost = []
    for n in range(6):
        statements.clear()
        assert players.send(ALICE, f"greatkingdom challenge alice sam@host{n}.test").status == "applied"
        cost.append(sum("FROM player" in s for s in statements))
    assert len(set(cost[1:])) == 1  # the fifth sam costs what the second did
    with reading(server.engine) as session:
        sams = session.exec(select(Player.userid).where(Player.email.like("sam@%"))).all()
    assert len(set(sams)) == 6 and "sam" in sams and all(USERID.match(userid) for userid in sams)


def test_an_invited_address_never_gets_a_games_filter_as_its_userid(players, server):
    assert players.send(ALICE, "greatkingdom challenge alice next@host.test").status == "applied"
    with reading(server.engine) as session:
        userid = session.exec(select(Player.userid).where(Player.email == "next@host.test")).one()
    assert userid.startswith("next-") and USERID.match(userid)


# -- passwords ---------------------------------------------------------------------

def test_a_wrong_password_and_an_unknown_userid_each_cost_one_hash(players, monkeypatch):
    hashed = []

    def counting(password_hash, password):
        hashed.append(password)
        return check(password_hash, password)

    check = passwords.check_password_hash
    players.send(ALICE, "greatkingdom challenge alice bob")
    monkeypatch.setattr(passwords, "check_password_hash", counting)
    wrong = players.send(ALICE, "greatkingdom move 101 alice guess1 D4")
    unknown = players.send(ALICE, "greatkingdom move 101 nobody guess2 D4")
    assert wrong.status == unknown.status == "rejected"
    assert "password for alice is wrong" in wrong.error and "no player called nobody" in unknown.error
    assert hashed == ["guess1", "guess2"]


def test_a_play_page_with_its_database_down_is_a_503_page_not_a_bare_500(tmp_path):
    from tests.conftest import free_port

    down = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none"  # nothing listens there
    app = create_app(settings(tmp_path, down))
    try:
        response = app.test_client().get("/play/abcdefghij0123456789")
    finally:
        app.extensions["pbm"].engine.dispose()
    assert response.status_code == 503
    assert "The server failed; try again later." in response.get_data(as_text=True)
    assert response.headers["Content-Security-Policy"]  # our page, with its headers
