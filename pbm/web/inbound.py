"""``POST /inbound/email``: inbound mail from a provider or relay.

Accepted forms: the raw RFC 5322 message as the body, a form field
``email`` (or Mailgun's ``body-mime``) holding it, or Mailgun's parsed
fields. Answers 200 with the result once it is committed; 401/403 for a
missing or wrong secret or signature, 413 for a message over the limit,
400 for a request that holds no message or no usable mail; the codes for
each result come from ``pbm.service.errors.ANSWERS``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
from email.utils import formatdate

from flask import Blueprint, abort, current_app, jsonify, request
from sqlalchemy.exc import DBAPIError
from werkzeug.datastructures import WWWAuthenticate
from werkzeug.exceptions import Unauthorized

from ..service import Result, Status
from .forgery import secrets_match


log = logging.getLogger(__name__)
# Fields a webhook form may hold: a provider's post has a few dozen (Mailgun's, with its headers and
# attachments' names); a form of millions of empty fields, which anyone may send where only a
# signature inside the form is checked, would cost seconds to parse before that check.
MAX_FORM_FIELDS = 1000
bp = Blueprint("inbound", __name__)

MAILGUN_MAX_AGE = 15 * 60  # seconds a Mailgun signature stays valid


def _check_secret(settings) -> None:
    secret = settings.inbound_secret
    if not secret:
        return
    signature = request.headers.get("X-PBM-Signature", "")
    auth = request.authorization
    if signature:
        expected = hmac.new(secret.encode(), request.get_data(), hashlib.sha256).hexdigest()
        if not secrets_match(signature.lower().removeprefix("sha256="), expected):
            abort(403, "The X-PBM-Signature does not match the body.")
    elif auth is not None and auth.password is not None:
        if not secrets_match(auth.password, secret):
            abort(403, "The webhook password is wrong.")
    else:  # a 401 names the scheme it wants: some clients send the password only when asked
        raise Unauthorized("This webhook needs the shared secret (basic auth or X-PBM-Signature).",
                           www_authenticate=WWWAuthenticate("basic", {"realm": "pbm inbound mail"}))


def _check_mailgun(settings, form) -> str | None:
    """Verify the Mailgun signature of a form post; returns its token, which the
    caller takes for this request before the mail is handled (``_take_token``)."""
    key = settings.mailgun_signing_key
    if not key:
        return None
    timestamp, token, signature = form.get("timestamp", ""), form.get("token", ""), form.get("signature", "")
    if not (timestamp and token and signature):
        abort(403, "The Mailgun signature fields are missing.")
    expected = hmac.new(key.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()
    if not secrets_match(signature, expected):
        abort(403, "The Mailgun signature does not match.")
    try:
        fresh = abs(int(time.time()) - int(timestamp)) <= MAILGUN_MAX_AGE  # integers: any size compares
    except ValueError:
        fresh = False
    if not fresh:
        abort(403, "The Mailgun signature is too old.")
    return token


def _take_token(server, token: str, raw: bytes, envelope: list[str]) -> None:
    """Take a Mailgun token for this request, or refuse it (403) when another request
    has it: the signature covers the token, not the mail, so a replay could carry
    anything. A retry of this very request (the same mail) may take it again, and is
    then answered as a duplicate."""
    digest = hashlib.sha256(b"\0".join([raw, *(address.encode("utf-8", "replace") for address in envelope)]))
    if not server.take_token(token, digest.hexdigest()):
        abort(403, "This Mailgun signature was used before; a signature is accepted once.")


_HEADER_NAME = re.compile(r"[!-9;-~]{1,100}")  # printable ASCII but the colon (RFC 5322)


def _mailgun_message(form) -> bytes:
    """Rebuild a raw message from Mailgun's parsed fields, so it takes the common path.
    Written as plain lines, each field's line breaks made spaces: Mailgun sends
    decoded headers, which may hold anything (a line break from an encoded word), and
    the common path reads any header value."""
    try:
        headers = [(str(k), str(v)) for k, v in json.loads(form.get("message-headers", "[]"))]
    except (ValueError, TypeError, RecursionError):  # not a list of pairs, or nested thousands deep
        headers = []
    skip = {"content-type", "content-transfer-encoding", "mime-version"}
    lines = [(name, value) for name, value in headers if _HEADER_NAME.fullmatch(name) and name.lower() not in skip]
    given = {name.lower() for name, _ in lines}
    defaults = {"From": form.get("from") or form.get("sender", ""), "To": form.get("recipient", ""),
                "Subject": form.get("subject", ""), "Message-Id": form.get("Message-Id", ""),
                "Date": formatdate(_signed_at(form))}
    lines += [(name, value) for name, value in defaults.items() if value and name.lower() not in given]
    lines += [("MIME-Version", "1.0"), ("Content-Type", 'text/plain; charset="utf-8"'),
              ("Content-Transfer-Encoding", "8bit")]
    head = "".join(f"{name}: {' '.join(value.split())}\r\n" for name, value in lines)
    return (head + "\r\n" + form.get("body-plain", "")).encode("utf-8", "replace")


def _signed_at(form) -> int | None:
    """The time of the form's Mailgun signature (a retry of the request is the same
    mail, Date and all), or None (now) when it has none that is a time."""
    stamp = form.get("timestamp", "")
    return int(stamp) if stamp.isascii() and stamp.isdigit() and len(stamp) <= 11 else None


def _too_large(limit: int) -> str:
    """The 413 sentence, the limit in whole MB when it is some (10 MB), else in bytes."""
    size = f"{limit // 2**20} MB" if limit % 2**20 == 0 else f"{limit:,} bytes"
    return f"The message is larger than {size}."


@bp.post("/inbound/email")
def inbound_email():
    settings = current_app.config["PBM_SETTINGS"]
    server = current_app.extensions["pbm"]
    limit = settings.max_message_bytes
    if request.content_length is not None and request.content_length > limit + 256 * 1024:
        abort(413, _too_large(limit))
    if request.headers.get("Origin"):  # a web page's form or script (any site's): a mail system sends none
        abort(403, "The webhook takes mail from mail systems, not from web pages.")
    _check_secret(settings)
    envelope: list[str] = []
    token = None
    # With a Mailgun key (and no shared secret) every form of the webhook needs its signature.
    mailgun_only = settings.mailgun_signing_key and not settings.inbound_secret
    mimetype = request.mimetype
    if mimetype in ("message/rfc822", "text/plain", "application/octet-stream"):
        if mailgun_only:  # 403 as for a form without them: a signature is no HTTP login a 401 could ask for
            abort(403, "This webhook needs a Mailgun signature (timestamp, token, signature form fields).")
        raw = request.get_data()
    else:
        request.max_form_memory_size = limit + 1  # Flask caps form fields at 500 kB otherwise
        request.max_form_parts = MAX_FORM_FIELDS  # multipart: werkzeug answers 413 past it
        if mimetype == "application/x-www-form-urlencoded" and \
                request.get_data(cache=True).count(b"&") >= MAX_FORM_FIELDS:  # counted before any is parsed
            abort(413, f"The form has more than {MAX_FORM_FIELDS} fields.")
        form = request.form
        if mailgun_only or "signature" in form:
            token = _check_mailgun(settings, form)
        if "email" in form or "body-mime" in form:  # either may be empty: then no message (400 below)
            raw = (form.get("email") or form.get("body-mime") or "").encode("utf-8", "surrogateescape")
        elif "email" in request.files:  # the raw mail sent as a file (curl -F email=@mail.eml)
            raw = request.files["email"].read(limit + 1)
        elif "body-plain" in form or "sender" in form:
            raw = _mailgun_message(form)
        else:
            abort(400, "The request holds no message: send the raw mail as the body "
                       "(Content-Type: message/rfc822) or in the form field 'email'.")
        if form.get("recipient"):
            envelope = [form["recipient"]]
    if not raw.strip():
        abort(400, "The request holds no message.")
    if len(raw) > limit:
        abort(413, _too_large(limit))
    if token:
        try:
            _take_token(server, token, raw, envelope)
        except DBAPIError as error:
            log.warning("database unavailable for a Mailgun token: %s", error.__class__.__name__)
            result = Result(Status.RETRY, error="The server is busy; try again later.")
            return jsonify(result.to_json()), result.answer.http
    result = server.handle_raw(raw, envelope)
    return jsonify(result.to_json()), result.answer.http
