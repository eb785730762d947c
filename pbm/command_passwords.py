"""The passwords a command line holds: the pair to check before the write lock
(``credentials``), a password it sets (``new_password``), and the line with them
hidden for what is stored or logged (``redact``)."""

from __future__ import annotations

from .commands import MOVE_LATER_VERBS, CommandError, parse_command

AUTHENTICATED = ("move", "change_password", "change_address", "language",  # verbs whose password is checked
                 "subscribe", "unsubscribe", "chat", "message", "vacation", "add", "signoff",
                 "accept", "reject", "limit", *MOVE_LATER_VERBS)
SECRET = "********"


def credentials(line: str) -> tuple[str, str] | None:
    """The (userid, password) a command line asks to be checked, if any."""
    try:
        command = parse_command(line)
    except CommandError:
        return None
    return (command.userid, command.password) if command.verb in AUTHENTICATED else None


def new_password(line: str) -> str | None:
    """The password a command line sets (``signup``, ``change password``), if any."""
    try:
        command = parse_command(line)
    except CommandError:
        return None
    if command.verb == "signup":
        return command.password
    return command.args[0] if command.verb == "change_password" and command.args else None


def redact(line: str) -> str:
    """The line with its passwords replaced by ``SECRET`` (for what is stored or logged)."""
    secrets = _secrets(line)
    return " ".join(SECRET if word in secrets else word for word in line.split())


def _secrets(line: str, depth: int = 0) -> set[str]:
    """The passwords in a command line; for a line refused for an ambiguous or shortened
    word, the passwords of every reading of it (so a refused line is redacted too)."""
    try:
        command = parse_command(line)
    except CommandError as error:
        words = line.split()
        if depth > 2 or error.word is None or error.word not in (w.lower() for w in words):
            return set()
        at = [w.lower() for w in words].index(error.word)
        return set().union(*(_secrets(" ".join([*words[:at], reading, *words[at + 1:]]), depth + 1)
                             for reading in error.readings))
    secrets = {command.password} if command.password else set()
    if command.verb == "change_password":
        secrets.add(command.args[0])
    return secrets
