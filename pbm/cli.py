"""The ``pbm`` command line: thin wrappers around the service."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

def _settings():
    from .config import load_settings
    return load_settings()


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def cmd_serve(args) -> int:
    from waitress import create_server

    from . import scheduler, smtpd
    from .web import create_app

    configured = _settings()
    # Links in mails point at this server unless PBM_BASE_URL says otherwise.
    own_url = configured.base_url if os.environ.get("PBM_BASE_URL") else f"http://{args.host}:{args.port}"
    app = create_app({"base_url": own_url})
    try:
        web = create_server(app, host=args.host, port=args.port, threads=args.threads)
    except OSError as error:
        print(f"pbm serve: cannot listen on {args.host}:{args.port} ({error.strerror}); "
              f"choose another port with --port (make run PORT=...).", file=sys.stderr)
        return 1
    server = app.extensions["pbm"]
    settings = server.settings
    jobs = None if args.no_scheduler else scheduler.build(server)
    if jobs:
        jobs.start()
    listener = None
    if args.smtp_port:
        listener = smtpd.controller(server, args.host, args.smtp_port)
        try:
            listener.start()
        except (OSError, RuntimeError) as error:
            print(f"pbm serve: cannot listen for SMTP on {args.host}:{args.smtp_port} ({error}); "
                  "choose another port with --smtp-port (make run SMTP_PORT=...).", file=sys.stderr)
            if jobs:
                jobs.shutdown(wait=False)
            listener.stop()
            return 1
    print(f"pbm is running.\n"
          f"  Web status page:   http://{args.host}:{args.port}/\n"
          + (f"  SMTP for commands: {args.host}:{args.smtp_port} (write to {settings.server_address})\n"
             if listener else "")
          + f"  Outgoing mail:     {settings.mail_backend}"
          + (f" in {settings.maildir}/new" if settings.mail_backend == "maildir" else "")
          + f"\n  Database:          {settings.database_url}\n", flush=True)
    if args.first_steps:
        text = open(args.first_steps).read()
        print(text.replace("{web}", f"http://{args.host}:{args.port}").replace("{smtp}", f"{args.host}:{args.smtp_port}")
              .replace("{outbox}", settings.maildir), flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # systemd's stop: end like Ctrl-C, quietly
    try:
        web.run()
    except KeyboardInterrupt:
        pass
    finally:
        web.close()
        if jobs:
            jobs.shutdown(wait=False)
        if listener:
            listener.stop()
    return 0


def cmd_db_upgrade(args) -> int:
    from .migrate import upgrade

    settings = _settings()
    upgrade(settings.database_url)
    print(f"database is up to date: {settings.database_url}")
    return 0


def cmd_db_rebuild(args) -> int:
    from .service import Service

    report = Service(_settings()).rebuild()
    for line in report:
        print(line)
    print(f"rebuild done: {len(report)} board(s) differed from their move log")
    return 0


def cmd_db_revision(args) -> int:
    from alembic import command

    from .migrate import alembic_config

    command.revision(alembic_config(_settings().database_url), message=args.message, autogenerate=True)
    return 0


def cmd_ingest(args) -> int:
    from .service import Service, Status
    from .service.errors import ANSWERS

    raw = open(args.file, "rb").read() if args.file and args.file != "-" else sys.stdin.buffer.read()
    settings = _settings()
    if len(raw) > settings.max_message_bytes:
        print(f"pbm ingest: message of {len(raw)} bytes is over the limit; not handled", file=sys.stderr)
        return ANSWERS[Status.TOO_LARGE].exit_code
    try:
        result = Service(settings).handle_raw(raw)
    except Exception as error:  # not even the database could be opened: the MTA keeps the mail
        print(f"pbm ingest: temporary failure: {error.__class__.__name__}", file=sys.stderr)
        return ANSWERS[Status.RETRY].exit_code
    stream = sys.stdout if result.answer.exit_code == 0 and result.status != Status.MALFORMED else sys.stderr
    print(f"{result.status.value} board={result.board}" + (f" error={result.error}" if result.error else ""),
          file=stream)
    return result.answer.exit_code


def cmd_smtpd(args) -> int:
    from .service import Service
    from .smtpd import controller

    listener = controller(Service(_settings()), args.host, args.port)
    listener.start()
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

    server = Service(_settings())
    stopping = threading.Event()
    for stop_signal in (signal.SIGTERM, signal.SIGINT):  # systemd's stop and Ctrl-C: end quietly
        signal.signal(stop_signal, lambda *_: stopping.set())
    print("pbm scheduler running (outbox, reminders, expiry); on PostgreSQL one scheduler "
          "process leads and the others stand by", flush=True)
    scheduler.run_leading(server, stopping)
    return 0


def cmd_sweep(args) -> int:
    from . import scheduler
    from .service import Service

    done = scheduler.sweep(Service(_settings()))
    print(" ".join(f"{k}={v}" for k, v in done.items()))
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=os.environ.get("PBM_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("alembic", "apscheduler", "mail.log", "waitress.queue"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    parser = argparse.ArgumentParser(prog="pbm", description="play-by-email game server")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="web server, scheduler and optional SMTP listener")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=5000)
    serve.add_argument("--smtp-port", type=int, default=None)
    serve.add_argument("--threads", type=int, default=64)  # live pages hold one each (pbm.web.live)
    serve.add_argument("--no-scheduler", action="store_true",
                       help="leave the periodic jobs to a separate `pbm scheduler`")
    serve.add_argument("--first-steps", default="", help=argparse.SUPPRESS)  # `make run`'s guide
    serve.set_defaults(func=cmd_serve)

    db = sub.add_parser("db", help="database tasks")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser("upgrade", help="apply migrations").set_defaults(func=cmd_db_upgrade)
    db_sub.add_parser("rebuild", help="replay every board's move log into its cached state, "
                      "reporting boards that differed").set_defaults(func=cmd_db_rebuild)
    revision = db_sub.add_parser("revision", help="write a migration for changed models")
    revision.add_argument("message")
    revision.set_defaults(func=cmd_db_revision)

    ingest = sub.add_parser("ingest", help="process one raw mail (file or stdin)")
    ingest.add_argument("file", nargs="?")
    ingest.set_defaults(func=cmd_ingest)

    smtp = sub.add_parser("smtpd", help="SMTP listener alone")
    smtp.add_argument("--host", default="127.0.0.1")
    smtp.add_argument("--port", type=int, default=2525)
    smtp.set_defaults(func=cmd_smtpd)

    sub.add_parser("scheduler", help="periodic jobs alone").set_defaults(func=cmd_scheduler)
    sub.add_parser("sweep", help="run the periodic jobs once").set_defaults(func=cmd_sweep)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
