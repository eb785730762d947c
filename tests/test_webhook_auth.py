"""With any webhook key or secret set, every form of the webhook is verified, and a
Mailgun signature (its token) is accepted once."""

import pytest

from .conftest import make_mail
from .test_web import mailgun_fields

ALICE = "alice@players.test"


@pytest.fixture
def mailgun_client(overrides):
    from pbm import create_app
    app = create_app({**overrides, "mailgun_signing_key": "mg-key"})
    yield app.test_client()
    app.extensions["pbm"].engine.dispose()


def test_with_only_a_mailgun_key_every_form_needs_its_signature(mailgun_client):
    raw = make_mail(ALICE, "help")
    assert mailgun_client.post("/inbound/email", data=raw, content_type="message/rfc822").status_code == 401
    unsigned = mailgun_client.post("/inbound/email", data={"email": raw.decode()})
    assert unsigned.status_code == 403
    fields = mailgun_fields()
    signed_raw = {key: fields[key] for key in ("timestamp", "token", "signature")} | {"email": raw.decode()}
    assert mailgun_client.post("/inbound/email", data=signed_raw).json["status"] == "applied"


def test_a_mailgun_token_is_accepted_once(mailgun_client):
    first = mailgun_fields(token="t" * 50)
    assert mailgun_client.post("/inbound/email", data=first).json["status"] == "applied"
    replay = {**first, "subject": "signup mallory secret9", "Message-Id": "<other@evil.test>"}
    answer = mailgun_client.post("/inbound/email", data=replay)
    assert answer.status_code == 403 and "accepted once" in answer.json["error"]


@pytest.mark.parametrize("timestamp", ["9" * 400, "-" + "9" * 400])  # beyond what a float holds
def test_a_signed_timestamp_beyond_any_time_is_too_old_not_a_failure(mailgun_client, timestamp):
    answer = mailgun_client.post("/inbound/email", data=mailgun_fields(timestamp=timestamp))  # signed with it
    assert answer.status_code == 403 and answer.json["error"] == "The Mailgun signature is too old."
