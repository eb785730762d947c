"""Outgoing transports: SMTP with STARTTLS and login against a real aiosmtpd
server, the console, and the Maildir."""

import ssl
import subprocess
from dataclasses import replace

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from pbm.config import load_settings
from pbm.mail.transport import DeliveryError, send

from .conftest import free_port, make_mail


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


class Relay:
    def __init__(self):
        self.received = []

    async def handle_DATA(self, server, session, envelope):
        self.received.append((session.authenticated, envelope))
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == b"pbm" and auth_data.password == b"relay-pw"
    return AuthResult(success=ok)


@pytest.fixture
def relay(certificate):
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    handler = Relay()
    port = free_port()
    controller = Controller(handler, hostname="localhost", port=port, tls_context=context,
                            require_starttls=True, authenticator=authenticator, auth_require_tls=True)
    controller.start()
    yield handler, port
    controller.stop()


def settings_for(port, **changes):
    base = load_settings({"mail_backend": "smtp", "smtp_host": "localhost", "smtp_port": port,
                          "smtp_starttls": True, "smtp_user": "pbm", "smtp_password": "relay-pw",
                          "server_address": "pbm@pbm.test"})
    return replace(base, **changes)


def test_smtp_with_starttls_and_login(relay, certificate, monkeypatch):
    handler, port = relay
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust our test certificate
    send(settings_for(port), "pbm@pbm.test", "alice@players.test", make_mail("pbm@pbm.test", "Board"))
    authenticated, envelope = handler.received[0]
    assert authenticated is True
    assert envelope.rcpt_tos == ["alice@players.test"]
    assert b"Subject: Board" in envelope.content


def test_smtp_refuses_an_untrusted_certificate(relay):
    handler, port = relay
    with pytest.raises(DeliveryError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        send(settings_for(port), "pbm@pbm.test", "alice@players.test", make_mail("pbm@pbm.test", "x"))
    assert handler.received == []


def test_smtp_relay_down_is_a_delivery_error():
    with pytest.raises(DeliveryError):
        send(settings_for(free_port(), smtp_starttls=False, smtp_user=""), "pbm@pbm.test",
             "a@players.test", make_mail("pbm@pbm.test", "x"))


def test_console_backend_prints_the_mail(capsys):
    settings = load_settings({"mail_backend": "console"})
    send(settings, "pbm@pbm.test", "alice@players.test", make_mail("pbm@pbm.test", "Hello there"))
    out = capsys.readouterr().out
    assert "--- mail to alice@players.test ---" in out and "Subject: Hello there" in out
