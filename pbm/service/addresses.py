"""Mail addresses as the server compares and keeps them: email-validator's canonical
form, and why an address is refused, in the reader's language."""

from __future__ import annotations

import functools

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import and_, func, or_

from .. import i18n
from ..config import Settings
from ..games import as_typed
from ..i18n import lazy_gettext
from ..mail.outbound import writable_address
from .errors import PlayerError


# email-validator speaks English only: its usual reasons are translated here, and
# outside English any other is said as a general sentence.
ADDRESS_REASONS = (
    i18n.N_("An email address must have an @-sign."),
    i18n.N_("There must be something before the @-sign."),
    i18n.N_("There must be something after the @-sign."),
    i18n.N_("The part after the @-sign is not valid. It should have a period."),
    i18n.N_("An email address cannot have two periods in a row."),
    i18n.N_("An email address cannot start with a period."),
    i18n.N_("An email address cannot end with a period."),
)
_INVALID_CHARACTERS = {
    "The part after the @-sign contains invalid characters": i18n.N_(
        "The part after the @-sign contains invalid characters: %(characters)s."),
    "The email address contains invalid characters before the @-sign": i18n.N_(
        "The part before the @-sign contains invalid characters: %(characters)s."),
}


def _address_reason(error: EmailNotValidError) -> str:
    """Why email-validator refused an address, in the reader's language."""
    reason = str(error)
    if reason in ADDRESS_REASONS:
        return i18n.gettext(reason)
    start, _, characters = reason.rstrip(".").partition(": ")
    if start in _INVALID_CHARACTERS:
        return i18n.gettext(_INVALID_CHARACTERS[start], characters=characters)
    if i18n.current() == i18n.DEFAULT:
        return reason
    return i18n.gettext("It must have the form name@example.org.")


def normalise_address(address: str, usage=None) -> str:
    """The canonical form of an address; PlayerError when it is not usable (also when
    no mail could be written to it as it is: ``=?...?=`` words, which ``email`` would
    decode into other addresses)."""
    try:
        normal = _validated(address)
    except EmailNotValidError as error:
        raise PlayerError(lazy_gettext("\"%(address)s\" is not a usable email address: %(reason)s",
                                       address=as_typed(address),
                                       reason=i18n.LazyText(functools.partial(_address_reason, error))),
                          usage) from None
    if not writable_address(normal):
        raise PlayerError(lazy_gettext("\"%(address)s\" is not a usable email address: it holds what mail programs "
                                       "read as an encoded word (=?...?=).", address=as_typed(address)), usage)
    return normal


GMAIL = ("gmail.com", "googlemail.com")  # one mail service, whose inboxes ignore the dots of their names


def same_mailbox(column, address: str):
    """A condition on ``column`` (of addresses): the same mailbox as ``address``,
    whatever ``+tag`` it carries (``pat+1@x`` and ``pat@x`` reach one inbox), and at
    Gmail whatever dots (``p.at@gmail.com`` is ``pat@googlemail.com``), so a limit on
    mail to a stranger counts the inbox, not each spelling of it."""
    local, _, domain = address.rpartition("@")
    base = local.split("+", 1)[0]

    def literal(text: str) -> str:
        return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

    if domain in GMAIL:  # the column's dots left out, the domain's too (gmailcom, googlemailcom)
        undotted, name = func.replace(column, ".", ""), literal(base.replace(".", ""))
        return and_(or_(*(column.like(f"%@{literal(d)}", escape="\\") for d in GMAIL)),
                    or_(*(undotted.like(f"{name}{tag}@{literal(d.replace('.', ''))}", escape="\\")
                          for d in GMAIL for tag in ("", "+%"))))
    return or_(column == f"{base}@{domain}", column.like(f"{literal(base)}+%@{literal(domain)}", escape="\\"))


def is_server_address(settings: Settings, address: str) -> bool:
    """Whether ``address`` is the server's own address or one of its reply tags."""
    own_local, _, own_domain = settings.server_address.lower().rpartition("@")
    local, _, domain = address.lower().rpartition("@")
    return domain == own_domain and local.split("+", 1)[0] == own_local


def player_address(settings: Settings, address: str, usage=None) -> str:
    """``normalise_address`` for an address a player is to have (or be invited at):
    never the server's own, whose mails the server takes for its own and ignores.
    ``usage``: what to send instead, when it is refused (the command's forms)."""
    normal = normalise_address(address, usage)
    if is_server_address(settings, normal):
        raise PlayerError(lazy_gettext("%(address)s is this server's own address; a player needs an address of "
                                       "their own.", address=normal), usage)
    return normal


@functools.lru_cache(maxsize=4096)
def _validated(address: str) -> str:
    """email-validator's canonical form of a valid address (remembered: the same
    players write again and again; a refused address is checked anew each time)."""
    return validate_email(address, check_deliverability=False, test_environment=True).normalized.lower()


def sender_address(address: str) -> str:
    """The form a sender's address is compared and kept in: ``normalise_address``'s, so
    ``user@bücher.example``, ``user@xn--bcher-kva.example`` and other spellings of one
    address are one sender; an address email-validator refuses is kept as it came
    (lower case), so its mail is still answered."""
    try:
        return normalise_address(address)
    except PlayerError:
        return address
