"""``pbm smtpd``: a real SMTP listener (aiosmtpd) feeding the common mail path."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

from .service import Service, Status
from .service.errors import ANSWERS

log = logging.getLogger(__name__)
MAX_RECIPIENTS = 100  # a message's RCPT TOs (RFC 5321 4.5.3.1.8: what every server must take); more get 452
# Sessions at once: each may hold a message of up to max_message_bytes (several copies of it
# while it is read), so their number bounds the listener's memory; one more gets 421 (try later).
MAX_SESSIONS = 20
MAX_SESSIONS_PER_CLIENT = 5  # of those, from one address: one client cannot hold them all
# Commands a session may give before it gets 421 and is closed (aiosmtpd's command_call_limit):
# a client repeating NOOP or RSET without end would keep the listener's one loop busy.
COMMAND_LIMITS = {"NOOP": 20, "RSET": 50, "VRFY": 5, "EXPN": 5, "HELP": 5, "*": 1000}


class InboundHandler:
    """Accept a message, handle it like ``pbm ingest``, answer 250 once committed."""

    def __init__(self, server: Service):
        self.server = server

    async def handle_RCPT(self, smtp_server, session, envelope, address, rcpt_options):
        """Take at most MAX_RECIPIENTS recipients a message: the server reads one mail
        once, whatever its envelope, so more only cost memory and time."""
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, smtp_server, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if len(raw) > self.server.settings.max_message_bytes:
            return ANSWERS[Status.TOO_LARGE].smtp
        # As a final delivery does (RFC 5321 4.4): the envelope sender becomes Return-Path,
        # so a bounce (MAIL FROM:<>) is recognised and never answered.
        sender = "".join(ch for ch in (envelope.mail_from or "") if ch.isprintable() and ch not in "<>")
        raw = f"Return-Path: <{sender}>\r\n".encode("utf-8", "surrogateescape") + raw
        loop = asyncio.get_running_loop()  # database work must not block the SMTP loop
        result = await loop.run_in_executor(None, self.server.handle_raw, raw, list(envelope.rcpt_tos))
        log.info("inbound mail from %s: %s", envelope.mail_from, result.status.value)
        if result.status == Status.MALFORMED:
            return f"{result.answer.smtp}: {result.error}"
        return result.answer.smtp


class _Session(SMTP):
    """aiosmtpd's protocol, one a connection, refusing a connection over MAX_SESSIONS,
    or over MAX_SESSIONS_PER_CLIENT from its client's address."""

    def __init__(self, handler, open_sessions: Counter, **kwargs):
        super().__init__(handler, **kwargs)
        self._open_sessions = open_sessions  # shared by the listener's sessions: None (all) and each address
        self._client: str | None = None  # counted in open_sessions while the connection lasts

    def connection_made(self, transport) -> None:
        if self.transport is None:  # a new connection (aiosmtpd calls this again after STARTTLS)
            peer = transport.get_extra_info("peername")
            client = str(peer[0]) if peer else "?"
            if self._open_sessions[None] >= MAX_SESSIONS or self._open_sessions[client] >= MAX_SESSIONS_PER_CLIENT:
                transport.write(b"421 4.3.2 Too many connections; try again later\r\n")
                transport.close()
                return
            self._client = client
            self._open_sessions.update((None, client))
        super().connection_made(transport)

    def connection_lost(self, error) -> None:
        if self._client is None:  # refused at once
            return
        self._open_sessions.subtract((None, self._client))
        if self._open_sessions[self._client] <= 0:
            del self._open_sessions[self._client]
        super().connection_lost(error)


class _Listener(Controller):
    def __init__(self, handler, **kwargs):
        super().__init__(handler, **kwargs)
        self._open_sessions: Counter = Counter()  # counted in the listener's one event loop

    def factory(self) -> SMTP:
        return _Session(self.handler, self._open_sessions, **self.SMTP_kwargs)


def controller(server: Service, host: str, port: int) -> Controller:
    return _Listener(InboundHandler(server), hostname=host, port=port,
                     data_size_limit=server.settings.max_message_bytes + 64 * 1024,
                     command_call_limit=COMMAND_LIMITS)
