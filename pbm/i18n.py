"""Languages: English (the source texts) and German, from the gettext catalogues
in ``pbm/translations`` (``messages.po``, compiled to ``messages.mo`` at install).

Python code that writes sentences for people calls ``gettext`` here; the
language is the one of the current context (``language`` sets it): a web
request sets the page's language, a mail is rendered in its recipient's.
Messages use ``%(name)s`` placeholders, as in the templates. ``lazy_gettext``
is for a sentence made before anyone knows who reads it (a ``PlayerError``):
it is translated when it is turned into text.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar, Token
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable

from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations

LANGUAGES = ("en", "de")  # the first is the default and the source language
DEFAULT = LANGUAGES[0]
TRANSLATIONS = Path(__file__).parent / "translations"

_current: ContextVar[str] = ContextVar("pbm_language", default=DEFAULT)


def known(code: str | None) -> str:
    """``code`` when it is one of LANGUAGES, else the default."""
    return code if code in LANGUAGES else DEFAULT


@lru_cache(maxsize=None)
def translations(code: str) -> NullTranslations:
    """The compiled catalogue of language ``code`` (none for English, the source)."""
    if code == DEFAULT:
        return NullTranslations()
    found = Translations.load(str(TRANSLATIONS), [code])
    if not isinstance(found, Translations):  # NullTranslations: no .mo file
        raise FileNotFoundError(f"no compiled catalogue for {code!r} in {TRANSLATIONS}; "
                                "run `make setup` (pybabel compile -d pbm/translations)")
    return found


def current() -> str:
    return _current.get()


def use(code: str | None) -> Token:
    """From now on (in this context) ``gettext`` speaks ``code`` (unknown codes: the
    default); ``stop_using`` with the answer goes back to the language before."""
    return _current.set(known(code))


def stop_using(token: Token) -> None:
    _current.reset(token)


@contextmanager
def language(code: str | None):
    """Within the block, ``gettext`` speaks ``code``."""
    token = use(code)
    try:
        yield
    finally:
        stop_using(token)


def gettext(message: str, **params) -> str:
    """``message`` in the current language, with ``%(name)s`` filled from ``params``."""
    text = translations(current()).gettext(message)
    return text % params if params else text


def knows(message: str) -> bool:
    """Whether the current language's catalogue has ``message`` (English knows all)."""
    found = translations(current())
    return current() == DEFAULT or message in getattr(found, "_catalog", {})  # gettext's own table


def ngettext(singular: str, plural: str, count: float, **params) -> str:
    """The singular or plural form for ``count`` (a fraction of days, 0.5, takes the
    plural, as in both languages); with ``params``, filled from them."""
    if isinstance(count, float):
        count = int(count) if count.is_integer() else 2
    text = translations(current()).ngettext(singular, plural, count)
    return text % params if params else text


class LazyText:
    """A sentence made when it becomes text (``str``), in the language of that moment."""

    def __init__(self, make: Callable[[], str]):
        self.make = make

    def __str__(self) -> str:
        return self.make()


def lazy_gettext(message: str, **params) -> LazyText:
    return LazyText(partial(gettext, message, **params))


def number(value: float) -> LazyText:
    """A number as its reader writes it (``2,001``, ``2.001``; ``0.5``, ``0,5``)."""
    return LazyText(lambda: format_decimal(value, format="#,##0.######", locale=current()))


def N_(message: str) -> str:
    """Marks ``message`` for the catalogues where it is declared; it is translated
    later, where it is shown (``gettext(message)``)."""
    return message
