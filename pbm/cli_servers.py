"""The ``pbm`` commands that run until stopped: ``serve`` (web, jobs and perhaps SMTP
in one process), ``smtpd`` and ``scheduler``; and the checks they start with (the
schema, the addresses they listen on). ``pbm.cli`` parses the command line."""

from __future__ import annotations

import errno
import logging
import signal
import sys
import threading

from .config import SettingsError, load_settings, web_address

HOST_ADVICE = "choose an address of this machine with --host (127.0.0.1 or 0.0.0.0)."


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def cmd_serve(args) -> int:
    from waitress import create_server

    from . import scheduler, serving
    from .service import Service
    from .web import PrivateLinksHidden, create_app

    logging.getLogger("waitress").addFilter(PrivateLinksHidden())

    configured = load_settings()
    # Links in mails point at this server unless base_url is set (PBM_BASE_URL or a settings file).
    own_url = None if "base_url" in configured.configured else own_address(args.host, args.port)
    overrides = {"base_url": own_url} if own_url else None
    if own_url and not web_address(own_url):  # no web address has this host (x?y): nor has this machine
        print(f"pbm serve: cannot listen on {args.host}:{args.port}; {HOST_ADVICE}", file=sys.stderr)
        return 1
    if args.listen_fds:  # one of the workers of a `pbm serve --workers N`
        return serving.run_worker(create_app(overrides), args.listen_fds, args.lifeline_fd, args.threads,
                                  args.connections_fd, args.worker_slot)
    try:
        if args.workers == 1:
            app = create_app(overrides)
            server = app.extensions["pbm"]
            web = create_server(app, host=args.host, port=args.port, threads=args.threads, **serving.WAITRESS)
        else:
            web = serving.Workers(args.workers, serving.bind(args.host, args.port), [
                sys.executable, "-m", "pbm.cli", "serve", "--host", args.host, "--port", str(args.port),
                "--threads", str(args.threads)])
            server = Service(load_settings(overrides))
    except SettingsError:
        raise  # (a ValueError too) said by main as a setting
    except (OSError, ValueError) as error:  # waitress: ValueError for a host it cannot resolve
        print(f"pbm serve: cannot listen on {args.host}:{args.port} ({getattr(error, 'strerror', None) or error}); "
              + _listen_advice(error, "--port (make run PORT=...)"), file=sys.stderr)
        return 1
    if not schema_ready(server, "pbm serve"):
        web.close()
        return 1
    settings = server.settings
    jobs = None if args.no_scheduler else scheduler.build(server)
    if jobs:
        jobs.start()
    listener = None
    if args.smtp_port:
        listener = _listen_smtp(server, args.host, args.smtp_port, "pbm serve", "--smtp-port (make run SMTP_PORT=...)")
        if listener is None:
            if jobs:
                jobs.shutdown(wait=False)
            web.close()
            return 1
    print(f"pbm is running.\n"
          f"  Web status page:   http://{args.host}:{args.port}/\n"
          + (f"  Web workers:       {args.workers} processes\n" if args.workers > 1 else "")
          + (f"  SMTP for commands: {args.host}:{args.smtp_port} (write to {settings.server_address})\n"
             if listener else "")
          + f"  Outgoing mail:     {settings.mail_backend}"
          + (f" in {settings.maildir}/new" if settings.mail_backend == "maildir" else "")
          + f"\n  Database:          {settings.shown_database_url}"
          + f"\n  Links in mails:    {settings.base_url}/ (PBM_BASE_URL sets them)\n", flush=True)
    if args.first_steps:  # make run's guide (deploy/first-game.txt)
        _print_first_steps(args, settings)
    signal.signal(signal.SIGTERM, _interrupt)  # systemd's stop: end like Ctrl-C, quietly
    try:
        serving.serve_until_stopped(web)
    finally:
        if jobs:
            jobs.shutdown(wait=False)
        if listener:
            listener.stop()
    return 0


def _print_first_steps(args, settings) -> None:
    """The guide ``make run`` prints, with this server's addresses filled in."""
    try:
        with open(args.first_steps) as guide:
            text = guide.read()
    except OSError as error:  # a missing guide costs the guide, not the server
        print(f"pbm serve: cannot read {args.first_steps} ({error.strerror})", file=sys.stderr)
        return
    for name, value in (("web", f"http://{args.host}:{args.port}"), ("smtp", f"{args.host}:{args.smtp_port}"),
                        ("server", settings.server_address), ("outbox", settings.maildir)):
        text = text.replace("{" + name + "}", value)
    print(text, flush=True)


def _listen_smtp(server, host: str, port: int, command: str, option: str):
    """The started SMTP listener, or None after saying on stderr why it cannot listen."""
    from . import smtpd

    listener = smtpd.controller(server, host, port)
    try:
        listener.start()
    except (OSError, RuntimeError) as error:
        print(f"{command}: cannot listen for SMTP on {host}:{port} ({error}); " + _listen_advice(error, option),
              file=sys.stderr)
        listener.stop()
        listener.loop.close()  # aiosmtpd leaves a loop that never bound open; unclosed, its collection may fail loudly
        return None
    return listener


def _listen_advice(error: BaseException, port_option: str) -> str:
    """What to change when a listener cannot start: the port when it is taken,
    otherwise the host (an address this machine does not have, or a name it cannot
    resolve)."""
    while error.__cause__ is not None and not isinstance(error, OSError):
        error = error.__cause__
    if isinstance(error, OSError) and error.errno in (errno.EADDRINUSE, errno.EACCES):
        return f"choose another port with {port_option}."
    return HOST_ADVICE


def own_address(host: str, port: int) -> str:
    """Where the links in mails point when no base URL is set: this server's address;
    when it listens on every interface (0.0.0.0, ::), this machine's name, which a
    player's browser can reach where 0.0.0.0 leads nowhere."""
    import socket

    if host in ("0.0.0.0", "::", ""):
        host = socket.getfqdn()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def schema_ready(server, program: str) -> bool:
    """Whether the database holds the schema this pbm needs; says what to run when not.
    A database that cannot be reached now is left to the server's own retries."""
    from sqlalchemy.exc import DBAPIError

    from .migrate import schema_problem

    try:
        problem = schema_problem(server.engine)
    except DBAPIError as error:
        if program == "pbm ingest":  # one mail, not a server that starts: the MTA keeps it
            print(f"{program}: the database cannot be reached ({error.__class__.__name__})", file=sys.stderr)
            return False
        waits = "its jobs wait" if program == "pbm scheduler" else "every mail is answered busy"
        print(f"{program}: the database cannot be reached yet ({error.__class__.__name__}); starting anyway, "
              f"and {waits} until it can", file=sys.stderr)
        return True
    if problem:
        print(f"{program}: {problem}", file=sys.stderr)
        return False
    return True


def cmd_smtpd(args) -> int:
    from .service import Service

    server = Service(load_settings())
    listener = _listen_smtp(server, args.host, args.port, "pbm smtpd", "--port")
    if listener is None:
        return 1
    if not schema_ready(server, "pbm smtpd"):
        listener.stop()
        return 1
    print(f"pbm smtpd listening on {args.host}:{args.port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        listener.stop()
    return 0


def cmd_scheduler(args) -> int:
    from . import scheduler
    from .service import Service

    server = Service(load_settings())
    if not schema_ready(server, "pbm scheduler"):
        return 1
    stopping = threading.Event()
    for stop_signal in (signal.SIGTERM, signal.SIGINT):  # systemd's stop and Ctrl-C: end quietly
        signal.signal(stop_signal, lambda *_: stopping.set())
    print("pbm scheduler running (outbox, reminders, expiry); on PostgreSQL one scheduler "
          "process leads and the others stand by", flush=True)
    scheduler.run_leading(server, stopping)
    return 0
