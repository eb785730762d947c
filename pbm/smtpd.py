"""``pbm smtpd``: a real SMTP listener (aiosmtpd) feeding the common mail path."""

from __future__ import annotations

import asyncio
import logging

from aiosmtpd.controller import Controller

from .mail.inbound import MalformedMail
from .play import Server

log = logging.getLogger(__name__)


class InboundHandler:
    """Accept a message, handle it like ``pbm ingest``, answer 250 once committed."""

    def __init__(self, server: Server):
        self.server = server

    async def handle_DATA(self, smtp_server, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        if len(raw) > self.server.settings.max_message_bytes:
            return "552 Message exceeds the size limit"
        try:
            loop = asyncio.get_running_loop()  # database work must not block the SMTP loop
            result = await loop.run_in_executor(None, self.server.handle_raw, raw, list(envelope.rcpt_tos))
        except MalformedMail as error:
            return f"550 Message not accepted: {error}"
        except Exception:
            log.exception("inbound mail failed")
            return "451 Temporary failure, please try again later"
        log.info("inbound mail from %s: %s", envelope.mail_from, result.status)
        return "250 Message accepted"


def controller(server: Server, host: str, port: int) -> Controller:
    return Controller(InboundHandler(server), hostname=host, port=port,
                      data_size_limit=server.settings.max_message_bytes + 64 * 1024)
