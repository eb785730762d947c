"""What went wrong, and what each door answers for it.

A player's mistake is a ``PlayerError`` (one plain sentence, and what to send
instead). Every inbound message ends in one ``Status``; ``ANSWERS`` maps each
status to the webhook's HTTP code, the SMTP listener's reply and ``pbm
ingest``'s exit code, so the three doors can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class PlayerError(Exception):
    """A player's mistake: ``str()`` is the sentence, ``usage`` what to send instead."""

    def __init__(self, sentence: str, usage: str | None = None):
        super().__init__(sentence)
        self.usage = usage


class Status(str, Enum):
    APPLIED = "applied"      # done (some commands of a 'multiple' may have been refused)
    REJECTED = "rejected"    # a player's mistake; an error mail was queued
    DUPLICATE = "duplicate"  # this Message-ID was handled before
    IGNORED = "ignored"      # an auto-reply or bounce: recorded, never answered
    MALFORMED = "malformed"  # no usable message (no sender): nobody to answer
    TOO_LARGE = "too-large"  # over the size limit
    RETRY = "retry"          # a temporary failure (database unavailable): try again later


@dataclass(frozen=True)
class Answer:
    http: int
    smtp: str
    exit_code: int


EX_DATAERR = 65  # sysexits: the input was unusable; an MTA bounces the mail
EX_TEMPFAIL = 75

ANSWERS = {
    Status.APPLIED: Answer(200, "250 Message accepted", 0),
    Status.REJECTED: Answer(200, "250 Message accepted", 0),
    Status.DUPLICATE: Answer(200, "250 Message accepted", 0),
    Status.IGNORED: Answer(200, "250 Message accepted", 0),
    Status.MALFORMED: Answer(400, "550 Message not accepted", 0),
    Status.TOO_LARGE: Answer(413, "552 Message exceeds the size limit", EX_DATAERR),  # the sender learns it
    Status.RETRY: Answer(503, "451 Temporary failure, please try again later", EX_TEMPFAIL),
}


@dataclass
class Result:
    """The outcome of one inbound message or web move, as every door reports it."""

    status: Status
    board: int | None = None
    error: str | None = None

    @property
    def answer(self) -> Answer:
        return ANSWERS[self.status]

    def to_json(self) -> dict:
        return {"status": self.status.value, "board": self.board, "error": self.error}
