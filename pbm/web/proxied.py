"""Behind a reverse proxy (``PBM_TRUSTED_PROXY``): a request that comes from the
proxy's address is taken as the client sent it, its address, scheme, host and port
read from the proxy's ``X-Forwarded-For``/``-Proto``/``-Host``/``-Port`` (its last
entry: the one this proxy wrote); from any other peer those headers are dropped.
The same for every WSGI server (``pbm serve``'s waitress, gunicorn): without it
every client of the proxy is the proxy, and shares its per-address quotas.
(waitress is told to leave these headers to the app: ``serving.WAITRESS``.)"""

from __future__ import annotations

from werkzeug.middleware.proxy_fix import ProxyFix

FORWARDED = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_X_FORWARDED_PORT")


class FromTrustedProxy:
    """WSGI middleware: ``ProxyFix`` for requests from ``proxy`` only ("": nobody's)."""

    def __init__(self, app, proxy: str):
        self.app, self.proxy = app, proxy
        self.forwarded = ProxyFix(app, x_for=1, x_proto=1, x_host=1, x_port=1)

    def __call__(self, environ, start_response):
        if self.proxy and environ.get("REMOTE_ADDR") == self.proxy:
            return self.forwarded(environ, start_response)
        for name in FORWARDED:
            environ.pop(name, None)
        return self.app(environ, start_response)
