"""Is a request what it claims to be: a form from this site's own page, a secret
that matches. Every comparison of a secret a client sent goes through
``secrets_match`` (constant time, and any text, bytes beyond ASCII included)."""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from flask import after_this_request, current_app, request
from itsdangerous import BadData, URLSafeTimedSerializer

FORM_COOKIE = "pbm_form"  # this browser's key for the forms that need no private link (/new)
FORM_COOKIE_DAYS = 180
FORM_KEY_SECONDS = 24 * 3600  # a form older than this is opened again


def secrets_match(given: str, expected: str) -> bool:
    """Whether the secret a client sent is the expected one, in constant time
    (``hmac.compare_digest`` refuses text beyond ASCII: compared as UTF-8 bytes)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


def same_origin() -> bool:
    """Browsers send Origin (or Referer) on a form POST; another site's must not pass.
    Under the pages' ``Referrer-Policy: no-referrer`` a browser sends ``Origin: null``:
    then, as without the header, the form's own key decides (the caller's check).
    A header that is no URL (``http://[x``) is no origin of this site."""
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if origin in (None, "null"):
        return True
    try:
        return urlsplit(origin).netloc == request.host
    except ValueError:
        return False


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt="pbm-form")


def form_key() -> str:
    """The key a form page puts in its form: this browser's cookie (set now, the
    first time), signed. Another site can fetch a form page, but not with the
    visitor's cookie, which a cross-site post does not carry (SameSite=Lax)."""
    browser = request.cookies.get(FORM_COOKIE)
    if not browser or len(browser) > 64:
        browser = secrets.token_urlsafe(16)

        @after_this_request
        def remember(response):
            response.set_cookie(FORM_COOKIE, browser, max_age=FORM_COOKIE_DAYS * 24 * 3600, path="/",
                                secure=request.is_secure, httponly=True, samesite="Lax")
            return response
    return _serializer().dumps(browser)


def form_key_valid() -> bool:
    """Whether the posted ``form_key`` is one this site made for this browser."""
    browser = request.cookies.get(FORM_COOKIE)
    if not browser:
        return False
    try:
        signed = _serializer().loads(request.form.get("form_key", ""), max_age=FORM_KEY_SECONDS)
    except BadData:
        return False
    return isinstance(signed, str) and secrets_match(signed, browser)
