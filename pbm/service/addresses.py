"""Mail addresses as the server compares and keeps them: email-validator's canonical
form, and why an address is refused, in the reader's language."""

from __future__ import annotations

import functools

from email_validator import EmailNotValidError, validate_email

from .. import i18n
from ..i18n import lazy_gettext
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


def normalise_address(address: str) -> str:
    """The canonical form of an address; PlayerError when it is not usable."""
    try:
        return _validated(address)
    except EmailNotValidError as error:
        raise PlayerError(lazy_gettext("%(address)r is not a usable email address: %(reason)s", address=address,
                                       reason=i18n.LazyText(functools.partial(_address_reason, error)))) from None


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
