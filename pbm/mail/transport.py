"""Hand finished mails to the world: SMTP relay, a local Maildir, or the console."""

from __future__ import annotations

import mailbox
import smtplib
import ssl
import sys
from pathlib import Path

from ..config import Settings


class DeliveryError(Exception):
    """Delivery failed for now; the outbox will try again later."""


def send(settings: Settings, sender: str, recipient: str, raw: bytes) -> None:
    """Deliver one message or raise DeliveryError."""
    backend = settings.mail_backend
    try:
        if backend == "maildir":
            path = Path(settings.maildir)
            path.parent.mkdir(parents=True, exist_ok=True)
            # Maildir files hold local (LF) line endings; the outbox keeps SMTP's CRLF.
            mailbox.Maildir(str(path), create=True).add(raw.replace(b"\r\n", b"\n"))
        elif backend == "console":
            text = raw.replace(b"\r\n", b"\n").decode("utf-8", "replace")
            sys.stdout.write(f"--- mail to {recipient} ---\n{text}\n")
            sys.stdout.flush()
        elif backend == "smtp":
            with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=30) as smtp:
                if settings.smtp_starttls:
                    # Verify the relay's certificate (the stdlib default would not).
                    smtp.starttls(context=ssl.create_default_context())
                if settings.smtp_user:
                    smtp.login(settings.smtp_user, settings.smtp_password)
                smtp.sendmail(sender, [recipient], raw)
        else:
            raise DeliveryError(f"unknown mail backend {backend!r}")
    except (OSError, smtplib.SMTPException) as error:
        raise DeliveryError(f"{error.__class__.__name__}: {error}") from error
