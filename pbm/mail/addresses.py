"""The addresses a mail's header fields name, read in bounded time and alike on
every interpreter: a plain address by a pattern, anything else by the stdlib's
parser as it was before the fix of CVE-2023-27043; and whether a sender's
address can be answered."""

from __future__ import annotations

import inspect
import re
from email.utils import getaddresses

from .outbound import writable_address

MAX_ADDRESS = 254  # characters of a usable address (RFC 5321)
MAX_ADDRESS_LIST = 8_000  # characters of address headers read (the address parser takes ~3 us a character)


# One plain address, bare or in angle brackets after a plain name: what nearly every
# mail program writes. Read by this pattern, it gives what the stdlib's general
# parser gives (``tests/test_mail_inbound.py`` compares the two) for about a tenth of
# its Python calls (a hundred an address); anything else goes to that parser.
_DOT_ATOM = r"[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*"
_PLAIN_ADDRESS = re.compile(rf"(?P<bare>{_DOT_ATOM}@{_DOT_ATOM})|[A-Za-z0-9_ -]*<(?P<angled>{_DOT_ATOM}@{_DOT_ATOM})>")


def plain_address(value: str) -> str | None:
    """The address of a header value that is one plain address (``a@b.c``,
    ``Name <a@b.c>``), or None for any other value."""
    match = _PLAIN_ADDRESS.fullmatch(value.strip())
    return None if match is None else match["bare"] or match["angled"]


# The stdlib's address parser as it was before the fix of CVE-2023-27043, on every
# interpreter: the fix (a Python release's or a distribution's patch: Debian's 3.11.2
# has it, pyenv's 3.11.7 not) made it return nothing for any header it doubts,
# "a@b.c (Smith, Alice)" included, so each interpreter read some headers its own
# way. What the fix guards against, one From read as another address, is refused
# here instead: a From must name exactly one address (``sender_address``).
_AS_BEFORE_THE_FIX = {"strict": False} if "strict" in inspect.signature(getaddresses).parameters else {}


def named_addresses(text: str) -> list[str]:
    """The addresses a header value names, as the stdlib's parser reads them."""
    return [address for _, address in getaddresses([text], **_AS_BEFORE_THE_FIX) if address]


def sender_address(from_value: str) -> str:
    """The one address a From names, or "" when it names none or several (``a@b.c
    Bcc: d@e.f``, what a line break in a decoded header becomes, answers nobody; so
    does ``a@b.c)<d@e.f>``, which the stdlib once read as ``a@b.c``)."""
    plain = plain_address(from_value)
    if plain is not None:
        return plain
    named = named_addresses(from_value)
    return named[0] if len(named) == 1 else ""


def header_addresses(values: list[str]) -> list[str]:
    """The addresses in header values (the first MAX_ADDRESS_LIST characters), as written."""
    text = " ".join(", ".join(values)[:MAX_ADDRESS_LIST].split())
    plain = [plain_address(piece) for piece in text.split(",")]
    if all(plain):
        return plain
    try:
        return named_addresses(text)
    except RecursionError:  # comments nested thousands deep
        return []


def usable_address(address: str) -> bool:
    """Whether a sender's address can be answered: the answer goes to exactly it."""
    local, at, domain = address.rpartition("@")
    return bool(at and local and domain and len(address) <= MAX_ADDRESS
                and not any(c.isspace() or c in "<>()[],;\ufffd" for c in address)  # U+FFFD: an undecodable byte
                and writable_address(address))
