"""Hand finished mails to the world: an SMTP relay, a local Maildir, or the console.

``open_transport`` gives one transport for a batch of mails. Its ``send``
delivers one mail or raises ``DeliveryError`` for that mail alone: over SMTP
the batch shares one connection, a refused recipient leaves it usable for
the next mail, and a lost connection is opened again once for the next one.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import smtplib
import socket
import ssl
import sys
import time
from contextlib import contextmanager, suppress
from typing import Iterator, Protocol

import idna

from ..config import Settings

SMTP_TIMEOUT_SECONDS = 30


class DeliveryError(Exception):
    """This mail could not be delivered: now (the outbox tries again later), or
    with ``permanent`` ever (the relay refused it with a 5xx reply: no such user,
    a refused sender or message), so the outbox gives it up at once."""

    def __init__(self, message: str, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


def _refused_for_good(error: BaseException) -> bool:
    """Whether the relay refused a mail with a permanent (5xx) reply."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return bool(error.recipients) and all(500 <= code < 600 for code, _ in error.recipients.values())
    if isinstance(error, (smtplib.SMTPSenderRefused, smtplib.SMTPDataError)):
        return 500 <= error.smtp_code < 600
    return False


class Transport(Protocol):
    round_trip: bool  # whether a send waits on the network (a relay), not a local write

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        """Deliver one mail (``raw`` with CRLF line endings) or raise DeliveryError."""

    def settle(self) -> None:
        """Make the mails sent so far durable (a local transport; a relay has them already)."""

    def close(self) -> None:
        """Release what the batch held (the relay connection); a local transport settles first."""


def ascii_address(address: str) -> str | None:
    """``address`` written in ASCII, its domain IDNA-encoded (``user@xn--bcher-kva.example``
    for ``user@bücher.example``); None when it cannot be (a non-ASCII local part, or a
    domain IDNA refuses), so that only a relay offering SMTPUTF8 can take it."""
    if address.isascii():
        return address
    local, _, domain = address.rpartition("@")
    if not local.isascii():
        return None
    try:
        return f"{local}@{idna.encode(domain, uts46=True).decode('ascii')}"
    except idna.IDNAError:
        return None


def _describe(error: BaseException) -> str:
    return f"{error.__class__.__name__}: {error}"


class SmtpTransport:
    """One relay connection for the whole batch, opened at the first mail.

    After a failed connection (relay down, TLS or login refused) every further
    mail of the batch fails at once with the same reason rather than waiting
    for its own timeout."""

    round_trip = True

    def __init__(self, settings: Settings):
        self.settings = settings
        self._smtp: smtplib.SMTP | None = None
        self._unreachable: str | None = None

    def _connection(self) -> smtplib.SMTP:
        if self._smtp is not None:
            return self._smtp
        if self._unreachable:
            raise DeliveryError(self._unreachable)
        host, port = self.settings.smtp_host, self.settings.smtp_port
        smtp = None
        try:
            smtp = smtplib.SMTP(host, port, timeout=SMTP_TIMEOUT_SECONDS)
            if self.settings.smtp_starttls:
                # Verify the relay's certificate (the stdlib default would not).
                smtp.starttls(context=ssl.create_default_context())
            if self.settings.smtp_user:
                smtp.login(self.settings.smtp_user, self.settings.smtp_password)
            smtp.ehlo_or_helo_if_needed()  # learn the extensions (SMTPUTF8)
        except (OSError, smtplib.SMTPException, UnicodeError) as error:  # UnicodeError: a host IDNA refuses
            if smtp is not None:
                smtp.close()
            self._unreachable = f"relay {host}:{port} unusable: {_describe(error)}"
            raise DeliveryError(self._unreachable) from error
        self._smtp = smtp
        return smtp

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        smtp = self._connection()
        try:
            envelope_sender, envelope_recipient, options = self._envelope(smtp, sender, recipient)
            smtp.sendmail(envelope_sender, [envelope_recipient], raw, mail_options=options)
        except Exception as error:
            self._recover()
            if isinstance(error, (OSError, smtplib.SMTPException, UnicodeError)):
                raise DeliveryError(_describe(error), permanent=_refused_for_good(error)) from error
            raise

    @staticmethod
    def _envelope(smtp: smtplib.SMTP, sender: str, recipient: str) -> tuple[str, str, tuple[str, ...]]:
        """The envelope addresses in ASCII when both can be; otherwise as they are,
        with SMTPUTF8, which the relay must offer."""
        envelope = (ascii_address(sender), ascii_address(recipient))
        if None not in envelope:
            return envelope[0], envelope[1], ()
        if smtp.has_extn("smtputf8"):
            return sender, recipient, ("SMTPUTF8",)
        needy = recipient if envelope[1] is None else sender
        raise DeliveryError(f"{needy} cannot be written in ASCII, and the relay does not offer "
                            "SMTPUTF8, which it needs")

    def _recover(self) -> None:
        """After a failed mail: reset the transaction for the next mail, or drop a
        connection that cannot be reset so the next mail opens a new one."""
        smtp, self._smtp = self._smtp, None
        if smtp is None or smtp.sock is None:  # smtplib closes on 421 and on disconnects
            return
        try:
            smtp.rset()
        except (OSError, smtplib.SMTPException):
            smtp.close()
            return
        self._smtp = smtp

    def settle(self) -> None:
        pass  # a relay that accepted a mail has it

    def close(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is None:
            return
        try:
            smtp.quit()
        except (OSError, smtplib.SMTPException):
            smtp.close()


class MaildirTransport:
    """Writes each mail as a file of the Maildir at ``settings.maildir`` (LF line
    endings): into ``tmp/``, then renamed into ``new/``, so a reader sees a whole mail
    or none, and the mail is delivered (visible) once ``send`` returns. ``settle``
    puts the batch on disk, mails and names: one ``syncfs`` of the Maildir's file
    system for the whole batch on Linux (elsewhere each file is flushed as it is
    written, and ``settle`` flushes ``new/``). A batch is marked sent only after it
    settled (if that fails, nothing is marked and the sweep sends the batch again
    after its lease), so ``pbm.courier`` answers once a mail is visible and settles
    the mails of several answers at once, off the answer's path."""

    round_trip = False

    def __init__(self, settings: Settings):
        # Paths as strings: joined for every mail, where pathlib's objects cost more than the write.
        self.path = os.fspath(settings.maildir)
        self._tmp, self._new = os.path.join(self.path, "tmp"), os.path.join(self.path, "new")
        self._written = False

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        try:
            try:
                self._write(raw)
            except FileNotFoundError:  # the first mail of this process, or the Maildir was removed
                for part in ("tmp", "new", "cur"):
                    os.makedirs(os.path.join(self.path, part), exist_ok=True)
                self._write(raw)
        except OSError as error:
            raise DeliveryError(_describe(error)) from error

    def _write(self, raw: bytes) -> None:
        name = _maildir_name()
        temporary = os.path.join(self._tmp, name)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # Maildir files hold local (LF) line endings; the outbox keeps SMTP's CRLF.
            view = memoryview(raw.replace(b"\r\n", b"\n"))
            while view:
                view = view[os.write(fd, view):]
            if _syncfs is None:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        os.close(fd)
        os.rename(temporary, os.path.join(self._new, name))
        self._written = True

    def settle(self) -> None:
        """Put every mail this transport wrote on disk (OSError if the disk refuses)."""
        if not self._written:
            return
        fd = os.open(self._new, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _syncfs is None:
                os.fsync(fd)
            elif _syncfs(fd) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"syncfs: {os.strerror(error)}")
        finally:
            os.close(fd)
        self._written = False

    def close(self) -> None:
        self.settle()


def _find_syncfs():
    """Linux's ``syncfs(fd)`` (one flush of a whole file system: a batch of mails costs
    one instead of a flush per file and one of the directory), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    syncfs.argtypes, syncfs.restype = [ctypes.c_int], ctypes.c_int
    return syncfs


_syncfs = _find_syncfs()


_names = itertools.count()


def _maildir_name() -> str:
    """A file name no other delivery uses: the time, this process, a counter, the host."""
    now = time.time_ns()
    return f"{now // 10**9}.M{now // 1000 % 10**6}P{os.getpid()}Q{next(_names)}.{_HOST}"


_HOST = socket.gethostname().replace("/", r"\057").replace(":", r"\072")


class ConsoleTransport:
    round_trip = False

    def __init__(self, settings: Settings):
        pass

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        text = raw.replace(b"\r\n", b"\n").decode("utf-8", "replace")
        sys.stdout.write(f"--- mail to {recipient} ---\n{text}\n")
        sys.stdout.flush()

    def settle(self) -> None:
        pass

    def close(self) -> None:
        pass


TRANSPORTS = {"smtp": SmtpTransport, "maildir": MaildirTransport, "console": ConsoleTransport}


def new_transport(settings: Settings) -> Transport:
    """The transport of ``settings.mail_backend`` for one batch (the settings allow only these)."""
    return TRANSPORTS[settings.mail_backend](settings)


@contextmanager
def open_transport(settings: Settings) -> Iterator[Transport]:
    """The transport of ``settings.mail_backend`` for one batch, closed afterwards."""
    transport = new_transport(settings)
    try:
        yield transport
    finally:
        transport.close()
