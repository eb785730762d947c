"""The passwords a command holds: the pair to check before the write lock
(``credentials``), a password it sets (``new_password``), and a line with them
hidden for what is stored or logged (``redact``)."""

from __future__ import annotations

from .commands import MOVE_LATER_VERBS, Command, CommandError, parse_command
from .linetext import without_enclosing_quotes

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
    """The line with its passwords replaced by ``SECRET`` (for what is stored or logged),
    without the quotation marks around all of it that reading it drops (a password
    at its end is a word of its own then, not ``secret1"``)."""
    line = without_enclosing_quotes(line)
    secrets = _secrets(line)
    return " ".join(SECRET if word in secrets else word for word in line.split())


def _secrets(line: str, depth: int = 0) -> set[str]:
    """The passwords in a command line; for a line refused for an ambiguous or shortened
    word, the passwords of every reading of it; for another refused line (or when no
    reading finds one), the words where a form of the command it was read as has a
    password (``_by_position``)."""
    try:
        command = parse_command(line)
    except CommandError as error:
        words = line.split()
        found = set()
        if depth <= 2 and error.word is not None and error.word in (w.lower() for w in words):
            at = [w.lower() for w in words].index(error.word)
            found = found.union(*(_secrets(" ".join([*words[:at], reading, *words[at + 1:]]), depth + 1)
                                  for reading in error.readings))
        if found or depth:  # a reading that does not parse either finds nothing of its own
            return found
        return _by_position(words, error.usage)
    secrets = {command.password} if command.password else set()
    if command.verb == "change_password":
        secrets.add(command.args[0])
    return secrets


PASSWORD_PLACES = ("<password>", "<old>", "<new>")  # what a command's forms call its passwords


def _by_position(words: list[str], usage) -> set[str]:
    """For a line that does not parse (a word too many or too few, a board number
    mistyped): the words standing where a form of the command it was read as
    (``usage``, the error's "send instead") has a password, the forms lined up with
    the line at their command word (``move``, which the line may abbreviate). More
    than the password may go (two forms, two places): what is stored keeps less."""
    found = set()
    for form in getattr(usage, "forms", ()):
        places = form.split()
        verb = next((i for i, place in enumerate(places) if place.isalpha()), None)
        if verb is None:
            continue
        at = next((i for i, word in enumerate(words[:verb + 1]) if places[verb].startswith(word.lower())), None)
        if at is None:
            continue
        found.update(words[i + at - verb] for i, place in enumerate(places)
                     if place in PASSWORD_PLACES and 0 <= i + at - verb < len(words))
    return found
