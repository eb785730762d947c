"""gunicorn settings for pbm's production web tier:

    gunicorn -c deploy/gunicorn.conf.py 'pbm:create_app()'

Several worker processes on PostgreSQL. Each worker builds its own application
(no ``preload_app``: a database connection must never cross a fork) and, once
a live page streams from it, LISTENs for the commits of every other process,
so a move made through any worker (or ``pbm ingest``, or another machine)
reaches the pages open on all of them. Run the periodic jobs beside it as
``pbm scheduler`` (any number of them: one leads, see ``pbm/scheduler.py``).

Every value can be overridden on the command line or by ``GUNICORN_CMD_ARGS``.
"""

import logging
import multiprocessing
import os
import re
import sys

from gunicorn.glogging import Logger

bind = os.environ.get("PBM_BIND", "127.0.0.1:5000")
# Requests are short and part of their time is spent waiting on
# PostgreSQL, so two workers a core keep the cores busy.
_workers = os.environ.get("PBM_WORKERS", "").strip() or str(2 * multiprocessing.cpu_count())
if not (_workers.isascii() and _workers.isdigit() and 1 <= int(_workers) <= 1000):  # 0 would serve nobody
    print(f"pbm (gunicorn): PBM_WORKERS must be a whole number from 1 to 1000, not {_workers[:40]!r} (set in the "
          "environment).", file=sys.stderr)
    sys.exit(78)
workers = int(_workers)
# Live pages hold a connection and a thread each for up to 25 s
# (pbm.web.live.MAX_STREAMS per process): threads, not sync workers, so an open
# page never blocks a move. 64 threads = 56 live pages + 8 for everything else.
worker_class = "gthread"
threads = 64
keepalive = 5           # behind a reverse proxy that reuses its connections
accesslog = "-"


PRIVATE = re.compile(r"(/(?:play|join|unsubscribe)/)[^/?\s]+")  # as pbm.web.logged_path hides them


class PrivateLinksFilter(logging.Filter):
    """A record of the error log without a private link's secret, in its sentence and in
    its traceback: gunicorn names the path of each request at debug level ("GET
    /play/<token>"), of one it could not read ("Invalid HTTP request line: ...") and of
    one that failed ("Error handling request /play/<token>/events")."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = PRIVATE.sub(r"\1...", record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = PRIVATE.sub(r"\1...", record.exc_text)
        return True


class PrivateLinksHidden(Logger):
    """The logs without the secrets in private links: a play page's token is also its
    seat's reply tag, and an invitation takes a seat (``/play/<token>``,
    ``/join/<invite>``, and their event streams; ``/unsubscribe/<token>``)."""

    PRIVATE = PRIVATE
    FILTER = PrivateLinksFilter()

    def setup(self, cfg):
        super().setup(cfg)
        self.error_log.addFilter(self.FILTER)  # (once: a reload's setup finds it there)

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for name in ("r", "U"):  # the request line and the path
            atoms[name] = PRIVATE.sub(r"\1...", atoms[name])
        return atoms


logger_class = PrivateLinksHidden
# gunicorn's other defaults stand: a stopping worker gets 30 s (graceful_timeout)
# to finish, more than a stream lasts; gunicorn takes the scheme of X-Forwarded-Proto
# from 127.0.0.1 only, where the reverse proxy runs, and the app the client's address
# from PBM_TRUSTED_PROXY's X-Forwarded-For (pbm/web/proxied.py). The proxy must not buffer the event
# streams (/games/<n>/events, /play/<token>/events).


def worker_int(worker):
    """A worker told to stop at once (SIGINT, SIGQUIT): end the event streams of its
    live pages now, rather than at their next heartbeat, so the worker can exit;
    each page reconnects (to a worker still running) and catches up."""
    from pbm.service import events

    events.reset_streams()


def on_starting(server):
    """Check the settings once, before any worker starts: a value pbm cannot use stops
    gunicorn with pbm's one sentence and exit status 78 (EX_CONFIG), as the ``pbm``
    command does, instead of every worker failing with a traceback."""
    import sys

    from pbm.config import SettingsError, load_settings

    try:
        load_settings()
    except SettingsError as error:
        print(f"pbm (gunicorn): {error}", file=sys.stderr)
        sys.exit(78)
