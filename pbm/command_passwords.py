"""The passwords a command holds: the pair to check before the write lock
(``credentials``), a password it sets (``new_password``), and a line with them
hidden for what is stored or logged (``redact``)."""

from __future__ import annotations

from .commands import MOVE_LATER_VERBS, Command, CommandError, parse_command

AUTHENTICATED = ("move", "change_password", "change_address", "language",  # verbs whose password is checked
                 "subscribe", "unsubscribe", "chat", "message", "vacation", "add", "signoff",
                 "accept", "reject", "limit", *MOVE_LATER_VERBS)
SECRET = "********"


def credentials(command: Command) -> tuple[str, str] | None:
    """The (userid, password) a command asks to be checked, if any."""
    return (command.userid, command.password) if command.verb in AUTHENTICATED else None


def new_password(command: Command) -> str | None:
    """The password a command sets (``signup``, ``change password``), if any."""
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
