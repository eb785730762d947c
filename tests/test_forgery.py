"""Forgeries are refused, and what each one caused is counted: a forged sender, a
forged reply tag, a forged or replayed webhook signature, password guessing. Each
forged mail changes no board and no account, and causes at most one mail, to the
address it claims to come from (the outbox rows it left are counted, by recipient)."""

import hashlib
import hmac
from collections import Counter

import pytest
from sqlalchemy import func
from sqlmodel import select

from pbm.db import reading
from pbm.models import Board, InboundMessage, MoveRecord, OutboxMail, Player
from pbm.service.passwords import MAX_PER_ACCOUNT

from .conftest import make_mail
from .test_web import mailgun_fields, secret_client  # noqa: F401 (a fixture)
from .test_webhook_auth import mailgun_client  # noqa: F401 (a fixture)

ALICE, BOB, MALLORY = "alice@players.test", "bob@players.test", "mallory@evil.test"
SECRET = "s3cret"  # the webhook secret of test_web's secret_client


def state(engine) -> tuple:
    """Everything a forgery must not change: moves, boards, accounts, mails handled."""
    with reading(engine) as session:
        return (session.exec(select(MoveRecord.board_id, MoveRecord.number, MoveRecord.text)).all(),
                session.exec(select(Board.id, Board.status, Board.version)).all(),
                session.exec(select(Player.userid, Player.email, Player.password_hash)).all())


def outbox_rows(engine) -> dict[int, str]:
    with reading(engine) as session:
        return dict(session.exec(select(OutboxMail.id, OutboxMail.recipient)).all())


def inbound_rows(engine) -> int:
    with reading(engine) as session:
        return session.exec(select(func.count()).select_from(InboundMessage)).one()


class Forger:
    """Sends forged mail and counts, per mail, the outbox rows it left (by recipient)."""

    def __init__(self, server):
        self.server = server

    def send(self, raw: bytes):
        before = outbox_rows(self.server.engine)
        result = self.server.handle_raw(raw)
        caused = Counter(to for id_, to in outbox_rows(self.server.engine).items() if id_ not in before)
        return result, caused


@pytest.fixture
def board(players, outbox):
    """Board 101, alice against bob, alice to move; the board mails' reply tags by player."""
    players.send(ALICE, "greatkingdom challenge alice bob")
    return {who: str(outbox.to(f"{who}@players.test")[-1]["Reply-To"]) for who in ("alice", "bob")}


@pytest.fixture
def forger(server):
    return Forger(server)


def assert_refused_at_most_one_mail_to(result, caused, address, sentence):
    assert result.status == "rejected" and sentence in result.error
    assert caused == {address: 1}  # the error, to the address the mail claims; nobody else


# -- a forged sender -----------------------------------------------------------------

@pytest.mark.parametrize("subject, text, sentence", [
    ("greatkingdom move 101 alice guess D4", "", "The password for alice is wrong."),
    ("greatkingdom resign 101 bob guess", "", "The password for bob is wrong."),
    ("signup mallory secret9", "", "already belongs to the userid alice"),
    ("change address alice guess mallory@evil.test", "", "The password for alice is wrong."),
], ids=["move", "resign-the-other-seat", "signup", "change-address"])
def test_a_mail_forged_from_alice_changes_nothing(server, forger, board, subject, text, sentence):
    before = state(server.engine)
    result, caused = forger.send(make_mail(ALICE, subject, text))
    assert_refused_at_most_one_mail_to(result, caused, ALICE, sentence)
    assert state(server.engine) == before


def test_a_reply_forged_from_alice_on_bobs_tag_changes_nothing(server, forger, board):
    before = state(server.engine)
    result, caused = forger.send(make_mail(ALICE, "Re: Great Kingdom Board 101", "resign", to=board["bob"]))
    assert_refused_at_most_one_mail_to(result, caused, ALICE, "This reply address belongs to bob on board 101")
    assert state(server.engine) == before


# -- a forged reply tag --------------------------------------------------------------

@pytest.mark.parametrize("tag", [
    "pbm+101.0123456789abcdef0123456789abcdef@pbm.test",  # a token nobody was given
    "pbm+102.{alice}@pbm.test",  # alice's token, another board's number
    "pbm+0.{alice}@pbm.test",  # a board token passed off as a confirmation
], ids=["guessed-token", "other-board", "as-confirmation"])
def test_a_forged_reply_tag_changes_nothing(server, forger, board, tag):
    alice_token = board["alice"].split("+")[1].split("@")[0].split(".")[1]
    before = state(server.engine)
    result, caused = forger.send(make_mail(ALICE, "Re: Great Kingdom Board 101", "D4",
                                           to=tag.format(alice=alice_token)))
    assert result.status == "rejected"
    assert caused == {ALICE: 1}
    assert state(server.engine) == before


@pytest.mark.parametrize("tag", ["pbm+999999999999999999999.x@pbm.test", "pbm+101@pbm.test", "pbm+@pbm.test"])
def test_a_reply_to_a_damaged_reply_address_is_told_so(server, forger, board, tag):
    """A reply to an address that looks like a board's but is not one (cut, changed by
    hand) is told about the address, not that its move is an unknown command."""
    before = state(server.engine)
    result, caused = forger.send(make_mail(ALICE, "Re: Great Kingdom Board 101", "D4", to=tag))
    assert result.status == "rejected" and caused == {ALICE: 1}
    assert result.error.startswith(f"You wrote to {tag}, which is not the reply address of any board")
    assert state(server.engine) == before
    commanded, _ = forger.send(make_mail(ALICE, "greatkingdom list", "", to=tag))  # a command still works
    assert commanded.status == "applied"


# -- a stolen Message-ID -------------------------------------------------------------

@pytest.mark.parametrize("subject", ["help", "greatkingdom move 101 alice guess D4"], ids=["help", "move"])
def test_another_senders_mail_with_alices_message_id_does_not_stop_hers(server, forger, board, subject):
    """A Message-ID is a repeat only from the sender who sent it: mallory, sending
    alice's next Message-ID first, does not get alice's own mail taken as a duplicate."""
    stolen = "<alice-next@players.test>"
    forged, _caused = forger.send(make_mail(MALLORY, subject, message_id=stolen))
    assert forged.status in ("applied", "rejected")
    real = make_mail(ALICE, "greatkingdom move 101 alice alicepw D4", message_id=stolen)
    assert server.handle_raw(real).status == "applied"
    with reading(server.engine) as session:
        assert session.exec(select(MoveRecord.text).where(MoveRecord.board_id == 101)).all() == ["D4"]
    assert server.handle_raw(real).status == "duplicate"  # alice's own repeat is still applied once
    assert server.handle_raw(make_mail(MALLORY, subject, message_id=stolen)).status == "duplicate"


# -- forged and replayed webhook signatures ----------------------------------------

def signature(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post_caused(server, post) -> tuple[int, Counter, int]:
    """The HTTP code of ``post()``, the outbox rows it left by recipient, the mails it recorded."""
    before, handled = outbox_rows(server.engine), inbound_rows(server.engine)
    answer = post()
    caused = Counter(to for id_, to in outbox_rows(server.engine).items() if id_ not in before)
    return answer.status_code, caused, inbound_rows(server.engine) - handled


def test_a_forged_webhook_signature_is_refused_before_anything_is_read(server, board, secret_client,
                                                                       mailgun_client):
    raw_subject = "greatkingdom move 101 alice alicepw D4"
    raw = make_mail(ALICE, raw_subject)
    before = state(server.engine)
    forgeries = {
        "no secret": lambda: secret_client.post("/inbound/email", data=raw, content_type="message/rfc822"),
        "wrong basic auth": lambda: secret_client.post("/inbound/email", data=raw, content_type="message/rfc822",
                                                       auth=("api", "guess")),
        "wrong X-PBM-Signature": lambda: secret_client.post(
            "/inbound/email", data=raw, content_type="message/rfc822",
            headers={"X-PBM-Signature": signature(raw, "guess")}),
        "wrong Mailgun signature": lambda: mailgun_client.post(
            "/inbound/email", data=mailgun_fields(key=b"guess", subject=raw_subject)),
        "Mailgun fields missing": lambda: mailgun_client.post("/inbound/email", data={"email": raw.decode()}),
    }
    for name, post in forgeries.items():
        code, caused, handled = post_caused(server, post)
        assert (code, caused, handled) in ((401, Counter(), 0), (403, Counter(), 0)), name
    assert state(server.engine) == before


def test_a_replayed_signature_is_refused(server, board, secret_client, mailgun_client):
    genuine = mailgun_fields(token="r" * 50, subject="greatkingdom move 101 alice alicepw D4",
                             **{"Message-Id": "<genuine@players.test>"})
    code, caused, handled = post_caused(server, lambda: mailgun_client.post("/inbound/email", data=genuine))
    assert (code, handled) == (200, 1) and caused == {ALICE: 1, BOB: 1}  # the move's board mails
    after_move = state(server.engine)
    other = {**genuine, "subject": "greatkingdom resign 101 alice alicepw", "Message-Id": "<replay@evil.test>"}
    code, caused, handled = post_caused(server, lambda: mailgun_client.post("/inbound/email", data=other))
    assert (code, caused, handled) == (403, Counter(), 0)  # the same Mailgun token, other content
    # The same token with the same content is the same mail (a provider's retry when it
    # did not hear the answer): answered as handled before, nothing changed or sent.
    answers = []

    def retry():
        answers.append(mailgun_client.post("/inbound/email", data=genuine))
        return answers[-1]

    assert post_caused(server, retry) == (200, Counter(), 0) and answers[0].json["status"] == "duplicate"
    assert state(server.engine) == after_move
    # An X-PBM-Signature covers the body: replayed over another body it does not match;
    # over the same body it is the same mail (its Message-ID), applied once.
    raw = make_mail(BOB, "greatkingdom move 101 bob bobpw C3", message_id="<bob-c3@players.test>")
    signed = {"X-PBM-Signature": signature(raw)}
    code, caused, handled = post_caused(server, lambda: secret_client.post(
        "/inbound/email", data=raw, content_type="message/rfc822", headers=signed))
    assert (code, handled) == (200, 1) and caused == {ALICE: 1, BOB: 1}
    other = make_mail(BOB, "greatkingdom resign 101 bob bobpw")
    assert post_caused(server, lambda: secret_client.post(
        "/inbound/email", data=other, content_type="message/rfc822", headers=signed)) == (403, Counter(), 0)
    again = secret_client.post("/inbound/email", data=raw, content_type="message/rfc822", headers=signed)
    assert again.status_code == 200 and again.json["status"] == "duplicate"
    assert len(state(server.engine)[0]) == len(after_move[0]) + 1  # bob's one move


# -- password guessing ---------------------------------------------------------------

@pytest.mark.parametrize("guesser", [MALLORY, ALICE], ids=["from-own-address", "forged-from-the-victim"])
def test_password_guessing_is_refused_then_locked_one_mail_per_guess(server, forger, board, guesser):
    before = state(server.engine)
    for n in range(MAX_PER_ACCOUNT + 5):
        result, caused = forger.send(make_mail(guesser, f"greatkingdom move 101 alice guess{n} D4"))
        assert result.status == "rejected" and caused == {guesser: 1}
    result, caused = forger.send(make_mail(guesser, "greatkingdom move 101 alice alicepw D4"))
    assert_refused_at_most_one_mail_to(result, caused, guesser, "Too many wrong passwords")
    assert state(server.engine) == before
