"""Hand finished mails to the world: SMTP relay, a local Maildir, or the console."""

from __future__ import annotations

import mailbox
import smtplib
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
            mailbox.Maildir(str(path), create=True).add(raw)
        elif backend == "console":
            sys.stdout.write(f"--- mail to {recipient} ---\n{raw.decode('utf-8', 'replace')}\n")
            sys.stdout.flush()
        elif backend == "smtp":
            with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=30) as smtp:
                if settings.smtp_starttls:
                    smtp.starttls()
                if settings.smtp_user:
                    smtp.login(settings.smtp_user, settings.smtp_password)
                smtp.sendmail(sender, [recipient], raw)
        else:
            raise DeliveryError(f"unknown mail backend {backend!r}")
    except (OSError, smtplib.SMTPException) as error:
        raise DeliveryError(f"{error.__class__.__name__}: {error}") from error
