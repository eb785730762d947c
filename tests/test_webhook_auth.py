"""With any webhook key or secret set, every form of the webhook is verified, and a
Mailgun signature (its token) is accepted once."""

import threading

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
    raw_post = mailgun_client.post("/inbound/email", data=raw, content_type="message/rfc822")
    assert raw_post.status_code == 403 and "needs a Mailgun signature" in raw_post.get_data(as_text=True)
    assert "WWW-Authenticate" not in raw_post.headers  # no HTTP login scheme would do: not a 401
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



def test_a_retry_of_the_same_request_is_a_duplicate_not_a_replay(mailgun_client):
    """Mailgun posts a mail again when it did not hear the answer: the same fields, the
    same token; it is answered as the mail handled before."""
    fields = mailgun_fields(token="u" * 50)
    assert mailgun_client.post("/inbound/email", data=fields).json["status"] == "applied"
    again = mailgun_client.post("/inbound/email", data=fields)
    assert again.status_code == 200 and again.json["status"] == "duplicate"


def test_a_replay_racing_the_genuine_request_is_refused(overrides, players):
    """The token is taken before the mail is handled: of a replay and the genuine request
    posted at once (both held until the other has come in), one finds it taken."""
    from pbm import create_app

    app = create_app({**overrides, "mailgun_signing_key": "mg-key"})
    server = app.extensions["pbm"]
    take, both_in = server.take_token, threading.Barrier(2, timeout=10)

    def take_when_both_are_in(*args):
        both_in.wait()
        return take(*args)

    server.take_token = take_when_both_are_in
    genuine = mailgun_fields(token="r" * 50, subject="help", **{"Message-Id": "<genuine@players.test>"})
    replay = {**genuine, "sender": "mallory@evil.test", "from": "mallory@evil.test",
              "subject": "signup mallory secret9", "Message-Id": "<replay@evil.test>"}
    codes = {}

    def post(name, fields):
        codes[name] = app.test_client().post("/inbound/email", data=fields).status_code

    threads = [threading.Thread(target=post, args=pair) for pair in (("genuine", genuine), ("replay", replay))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        app.extensions["pbm"].engine.dispose()
    assert sorted(codes.values()) == [200, 403], codes  # whichever came first; the other finds the token taken


@pytest.mark.parametrize("timestamp", ["9" * 400, "-" + "9" * 400])  # beyond what a float holds
def test_a_signed_timestamp_beyond_any_time_is_too_old_not_a_failure(mailgun_client, timestamp):
    answer = mailgun_client.post("/inbound/email", data=mailgun_fields(timestamp=timestamp))  # signed with it
    assert answer.status_code == 403 and answer.json["error"] == "The Mailgun signature is too old."


@pytest.mark.parametrize("form", ["urlencoded", "multipart"])
def test_a_form_of_thousands_of_fields_is_refused_before_it_is_read(mailgun_client, form):
    """Where only the signature inside the form is checked anyone may post one: a form
    of more fields than any provider sends is refused before its fields are parsed."""
    if form == "urlencoded":
        answer = mailgun_client.post("/inbound/email", data=b"a=&" * 3000,
                                     content_type="application/x-www-form-urlencoded")
    else:
        answer = mailgun_client.post("/inbound/email", data={f"f{n}": "" for n in range(3000)},
                                     content_type="multipart/form-data")
    assert answer.status_code == 413


def test_the_401_for_a_missing_shared_secret_challenges_for_basic_auth(overrides):
    """A 401 names the scheme it wants (RFC 9110, WWW-Authenticate): clients that send a
    password only when challenged (wget, a .NET HttpClient) retry with it."""
    from pbm import create_app

    app = create_app({**overrides, "inbound_secret": "s3cret"})
    try:
        client = app.test_client()
        answer = client.post("/inbound/email", data=make_mail(ALICE, "help"), content_type="message/rfc822")
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"].startswith("Basic realm=")
        assert answer.json["error"] == "This webhook needs the shared secret (basic auth or X-PBM-Signature)."
    finally:
        app.extensions["pbm"].engine.dispose()
