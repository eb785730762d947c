"""Outgoing transports against real aiosmtpd relays: STARTTLS and login, one
connection per batch, refused recipients, lost connections, internationalised
addresses with and without SMTPUTF8; the console and the Maildir."""

import email
import email.policy
import ssl
import subprocess
from collections import Counter
from dataclasses import replace

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from pbm.config import load_settings
from pbm.mail.transport import DeliveryError, ascii_address, open_transport

from .conftest import free_port, make_mail


class RecordingRelay:
    """A real SMTP relay on a free port that records every mail it accepts and every
    connection that delivered one; it answers 550 (for good) to RCPT for the
    ``refused`` addresses, 450 (for now) for the ``deferred`` ones, and 421
    (closing) to DATA for the ``hang_up_on`` ones."""

    def __init__(self, smtputf8=False, refused=(), deferred=(), hang_up_on=(), port=None):
        self.accepted = []
        self.sessions = []
        self.rcpt_attempts = Counter()
        self.refused, self.deferred, self.hang_up_on = set(refused), set(deferred), set(hang_up_on)
        self.port = port or free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port,
                                     enable_SMTPUTF8=smtputf8)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        self.rcpt_attempts[address] += 1
        if address in self.refused:
            return "550 5.1.1 no such mailbox here"
        if address in self.deferred:
            return "450 4.2.1 mailbox busy, try later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.hang_up_on & set(envelope.rcpt_tos):
            return "421 4.3.2 closing the connection"
        self.accepted.append(envelope)
        if not any(s is session for s in self.sessions):
            self.sessions.append(session)
        return "250 OK"

    def messages(self):
        """The accepted mails, parsed (UTF-8 headers included)."""
        return [email.message_from_string(e.content.decode("utf-8"), policy=email.policy.default)
                for e in self.accepted]

    def copies_by_message_id(self) -> Counter:
        return Counter(str(m["Message-ID"]) for m in self.messages())

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc):
        self.controller.stop()


def plain_settings(port, **changes):
    return load_settings({"mail_backend": "smtp", "smtp_host": "127.0.0.1", "smtp_port": port,
                          "server_address": "pbm@pbm.test", **changes})


def wire(recipient, subject="x"):
    """A mail to ``recipient`` as the outbox stores it: CRLF, UTF-8 headers only where
    an address needs them."""
    message = email.message_from_bytes(make_mail("pbm@pbm.test", subject), policy=email.policy.default)
    message.replace_header("To", recipient)
    return message.as_bytes(policy=email.policy.SMTPUTF8 if not recipient.isascii() else email.policy.SMTP)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


class TlsRelay:
    def __init__(self):
        self.received = []
        self.login_sessions = []  # connections that tried to log in

    async def handle_DATA(self, server, session, envelope):
        self.received.append((session.authenticated, envelope))
        return "250 OK"

    def authenticator(self, server, session, envelope, mechanism, auth_data):
        if not any(s is session for s in self.login_sessions):
            self.login_sessions.append(session)
        ok = auth_data.login == b"pbm" and auth_data.password == b"relay-pw"
        return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535


@pytest.fixture
def relay(certificate):
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    handler = TlsRelay()
    port = free_port()
    controller = Controller(handler, hostname="localhost", port=port, tls_context=context,
                            require_starttls=True, authenticator=handler.authenticator,
                            auth_require_tls=True)
    controller.start()
    yield handler, port
    controller.stop()


def tls_settings(port, **changes):
    base = load_settings({"mail_backend": "smtp", "smtp_host": "localhost", "smtp_port": port,
                          "smtp_starttls": True, "smtp_user": "pbm", "smtp_password": "relay-pw",
                          "server_address": "pbm@pbm.test"})
    return replace(base, **changes)


def send_one(settings, recipient, raw):
    with open_transport(settings) as transport:
        transport.send("pbm@pbm.test", recipient, raw)


def test_smtp_with_starttls_and_login(relay, certificate, monkeypatch):
    handler, port = relay
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust our test certificate
    send_one(tls_settings(port), "alice@players.test", make_mail("pbm@pbm.test", "Board"))
    authenticated, envelope = handler.received[0]
    assert authenticated is True
    assert envelope.rcpt_tos == ["alice@players.test"]
    assert b"Subject: Board" in envelope.content


def test_smtp_refuses_an_untrusted_certificate(relay):
    handler, port = relay
    with pytest.raises(DeliveryError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        send_one(tls_settings(port), "alice@players.test", make_mail("pbm@pbm.test", "x"))
    assert handler.received == []


def test_a_refused_login_fails_the_whole_batch_with_one_attempt(relay, certificate, monkeypatch):
    handler, port = relay
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    errors = []
    with open_transport(tls_settings(port, smtp_password="wrong")) as transport:
        for recipient in ("a@players.test", "b@players.test", "c@players.test"):
            with pytest.raises(DeliveryError) as caught:
                transport.send("pbm@pbm.test", recipient, wire(recipient))
            errors.append(str(caught.value))
    assert len(handler.login_sessions) == 1, "the batch logged in again for every mail"
    assert len(set(errors)) == 1 and "SMTPAuthenticationError" in errors[0]
    assert handler.received == []


def test_smtp_relay_down_is_a_delivery_error():
    with pytest.raises(DeliveryError, match="unusable"):
        send_one(plain_settings(free_port()), "a@players.test", make_mail("pbm@pbm.test", "x"))


def test_a_batch_goes_over_one_connection():
    recipients = [f"p{n}@players.test" for n in range(5)]
    with RecordingRelay() as relay, open_transport(plain_settings(relay.port)) as transport:
        for recipient in recipients:
            transport.send("pbm@pbm.test", recipient, wire(recipient))
    assert [e.rcpt_tos for e in relay.accepted] == [[r] for r in recipients]
    assert len(relay.sessions) == 1


def test_a_refused_recipient_fails_only_its_mail_on_the_shared_connection():
    recipients = ["a@players.test", "ghost@players.test", "b@players.test"]
    with RecordingRelay(refused={"ghost@players.test"}) as relay, \
            open_transport(plain_settings(relay.port)) as transport:
        for recipient in recipients:
            if recipient == "ghost@players.test":
                with pytest.raises(DeliveryError, match="550") as refused:
                    transport.send("pbm@pbm.test", recipient, wire(recipient))
                assert refused.value.permanent  # a 5xx reply: the outbox gives the mail up
            else:
                transport.send("pbm@pbm.test", recipient, wire(recipient))
    assert [e.rcpt_tos for e in relay.accepted] == [["a@players.test"], ["b@players.test"]]
    assert len(relay.sessions) == 1


def test_a_relay_that_hangs_up_is_dialled_again_for_the_next_mail():
    with RecordingRelay(hang_up_on={"a@players.test"}) as relay, \
            open_transport(plain_settings(relay.port)) as transport:
        with pytest.raises(DeliveryError, match="421") as closed:
            transport.send("pbm@pbm.test", "a@players.test", wire("a@players.test"))
        assert not closed.value.permanent
        transport.send("pbm@pbm.test", "b@players.test", wire("b@players.test"))
    assert [e.rcpt_tos for e in relay.accepted] == [["b@players.test"]]


def test_ascii_address_encodes_an_internationalised_domain():
    assert ascii_address("alice@players.test") == "alice@players.test"
    assert ascii_address("user@bücher.example") == "user@xn--bcher-kva.example"
    assert ascii_address("user@BÜCHER.example") == "user@xn--bcher-kva.example"
    assert ascii_address("jörg@bücher.example") is None
    assert ascii_address("user@a\u200db.example") is None  # a joiner IDNA refuses here


@pytest.mark.parametrize("smtputf8", [True, False], ids=["relay-offers-SMTPUTF8", "ascii-only-relay"])
def test_an_internationalised_domain_goes_to_any_relay_in_idna(smtputf8):
    with RecordingRelay(smtputf8=smtputf8) as relay:
        send_one(plain_settings(relay.port), "user@bücher.example", wire("user@xn--bcher-kva.example"))
    [envelope] = relay.accepted
    assert envelope.rcpt_tos == ["user@xn--bcher-kva.example"]
    assert envelope.smtp_utf8 is False


def test_a_non_ascii_local_part_goes_with_smtputf8_where_the_relay_offers_it():
    with RecordingRelay(smtputf8=True) as relay:
        send_one(plain_settings(relay.port), "jörg@bücher.example", wire("jörg@bücher.example"))
    [envelope] = relay.accepted
    assert envelope.smtp_utf8 is True
    assert envelope.rcpt_tos == ["jörg@bücher.example"]
    assert relay.messages()[0]["To"].addresses[0].addr_spec == "jörg@bücher.example"


def test_a_non_ascii_local_part_fails_alone_on_a_relay_without_smtputf8():
    with RecordingRelay(smtputf8=False) as relay, open_transport(plain_settings(relay.port)) as transport:
        with pytest.raises(DeliveryError, match="jörg@bücher.example cannot be written in ASCII, and "
                                               "the relay does not offer SMTPUTF8"):
            transport.send("pbm@pbm.test", "jörg@bücher.example", wire("alice@players.test"))
        transport.send("pbm@pbm.test", "alice@players.test", wire("alice@players.test"))
    assert [e.rcpt_tos for e in relay.accepted] == [["alice@players.test"]]
    assert len(relay.sessions) == 1


def test_console_backend_prints_the_mail(capsys):
    send_one(load_settings({"mail_backend": "console"}), "alice@players.test",
             make_mail("pbm@pbm.test", "Hello there"))
    out = capsys.readouterr().out
    assert "--- mail to alice@players.test ---" in out and "Subject: Hello there" in out


def test_maildir_batch_writes_whole_files_into_new(tmp_path):
    """Each mail of a batch becomes one file in new/ with local line endings, under a
    name of its own; nothing stays in tmp/; the Maildir is made again when removed."""
    import mailbox
    import shutil

    settings = load_settings({"mail_backend": "maildir", "maildir": str(tmp_path / "box")})
    mails = [make_mail("pbm@pbm.test", f"Mail {n}", f"line one\nline {n}\n").replace(b"\n", b"\r\n")
             for n in range(3)]  # as the outbox keeps them: CRLF
    for _ in range(2):
        with open_transport(settings) as transport:
            for raw in mails:
                transport.send("pbm@pbm.test", "alice@players.test", raw)
        written = sorted((tmp_path / "box" / "new").iterdir())
        assert len(written) == 3 and not list((tmp_path / "box" / "tmp").iterdir())
        assert sorted(path.read_bytes() for path in written) == sorted(raw.replace(b"\r\n", b"\n") for raw in mails)
        assert sorted(m["Subject"] for m in mailbox.Maildir(str(tmp_path / "box"))) == ["Mail 0", "Mail 1", "Mail 2"]
        shutil.rmtree(tmp_path / "box")


def test_maildir_that_cannot_be_written_is_a_delivery_error(tmp_path):
    """The settings refuse such a Maildir at start; here it breaks after the start."""
    settings = load_settings({"mail_backend": "maildir", "maildir": str(tmp_path / "box")})
    (tmp_path / "box").write_text("a file where the Maildir should be")
    with open_transport(settings) as transport, pytest.raises(DeliveryError):
        transport.send("pbm@pbm.test", "alice@players.test", make_mail("pbm@pbm.test", "Hello"))
