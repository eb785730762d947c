"""The ``pbm`` command line: its parser, and the one-shot commands (database tasks, ingest,
sweep) as thin wrappers around the service; the long-running ones are in ``cli_servers``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from .cli_servers import cmd_scheduler, cmd_serve, cmd_smtpd, schema_ready
from .config import SettingsError, load_settings

EX_NOINPUT = 66  # sysexits: an input file did not exist, was not readable, or held nothing
EX_CONFIG = 78  # sysexits: a configuration error
EX_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def port_number(text: str) -> int:
    """An argparse type: a TCP port from 1 to 65535."""
    if text.isascii() and text.isdigit() and 1 <= int(text) <= 65535:
        return int(text)
    raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, not {text[:40]!r}")


def positive_number(text: str) -> int:
    """An argparse type: a whole number from 1 to 10000 (threads, worker processes)."""
    if text.isascii() and text.isdigit() and 1 <= int(text) <= 10_000:
        return int(text)
    raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10000, not {text[:40]!r}")


def cmd_db_upgrade(args) -> int:
    from .migrate import SchemaError, upgrade

    settings = load_settings()
    try:
        upgrade(settings.database_url)
    except SchemaError as error:
        print(f"pbm db upgrade: {error}", file=sys.stderr)
        return 1
    print(f"database is up to date: {settings.shown_database_url}")
    return 0


def cmd_db_rebuild(args) -> int:
    from .migrate import schema_problem
    from .service import Service

    server = Service(load_settings())
    if problem := schema_problem(server.engine):  # no tables yet, or another version's: main says so
        print(f"pbm db rebuild: {problem}", file=sys.stderr)
        return 1
    report = server.rebuild()
    for line in report:
        print(line)
    print(f"rebuild done: {len(report)} board(s) differed from their move log")
    return 0


def cmd_db_revision(args) -> int:
    from alembic import command

    from .migrate import alembic_config

    command.revision(alembic_config(load_settings().database_url), message=args.message, autogenerate=True)
    return 0


def cmd_ingest(args) -> int:
    from .service import Service, Status
    from .service.errors import ANSWERS, EX_TEMPFAIL

    try:
        if args.file and args.file != "-":
            raw = open(args.file, "rb").read()
        elif sys.stdin is None:  # started with standard input closed (<&-)
            print("pbm ingest: standard input is closed: no mail to read; nothing was handled", file=sys.stderr)
            return EX_NOINPUT
        else:
            raw = sys.stdin.buffer.read()
    except OSError as error:
        print(f"pbm ingest: cannot read {args.file} ({error.strerror}); nothing was handled", file=sys.stderr)
        return EX_NOINPUT
    if not raw.strip():  # a person's `pbm ingest` at a terminal ended at once, or an empty file: no mail at all
        print("pbm ingest: the input is empty: no mail to read; nothing was handled", file=sys.stderr)
        return EX_NOINPUT
    try:
        settings = load_settings()
    except SettingsError as error:  # the operator's mistake: the MTA keeps the mail until it is fixed
        print(f"pbm ingest: {error} The mail was not handled; try again later.", file=sys.stderr)
        return EX_TEMPFAIL
    if len(raw) > settings.max_message_bytes:
        print(f"pbm ingest: the message of {len(raw)} bytes is over the limit of {settings.max_message_bytes} bytes; "
              "not handled", file=sys.stderr)
        return ANSWERS[Status.TOO_LARGE].exit_code
    try:
        server = Service(settings)
        ready = schema_ready(server, "pbm ingest")  # says what to run when not
        result = server.handle_raw(raw) if ready else None
    except Exception as error:  # not even the database could be opened: the MTA keeps the mail
        print(f"pbm ingest: temporary failure: {error.__class__.__name__}", file=sys.stderr)
        return ANSWERS[Status.RETRY].exit_code
    if result is None:
        print("pbm ingest: the mail was not handled; the MTA keeps it and tries again.", file=sys.stderr)
        return ANSWERS[Status.RETRY].exit_code
    stream = sys.stdout if result.answer.exit_code == 0 and result.status != Status.MALFORMED else sys.stderr
    print(f"{result.status.value} board={result.board}" + (f" error={result.error}" if result.error else ""),
          file=stream)
    return result.answer.exit_code


def cmd_sweep(args) -> int:
    from . import scheduler
    from .service import Service

    from .migrate import schema_problem

    server = Service(load_settings())
    if problem := schema_problem(server.engine):  # a database that cannot be reached: main says so
        print(f"pbm sweep: {problem}", file=sys.stderr)
        return 1
    done = scheduler.sweep(server)
    print(" ".join(f"{k}={v}" for k, v in done.items()))
    return 0


INGEST_EXITS = """exit status:
  0   the mail was handled: applied, rejected (an error mail was queued), a duplicate,
      ignored (an auto-reply or bounce), or unusable (no sender: the reason on stderr)
  65  the mail is over the size limit (EX_DATAERR): the MTA bounces it to its sender
  66  FILE cannot be read, or the input is empty
  75  try again later (EX_TEMPFAIL): the database cannot be reached or the settings
      are broken; the MTA keeps the mail and retries"""

SETTINGS_NOTE = ("Settings come from config/default.toml (or the file PBM_CONFIG names) and PBM_* "
                 "environment variables; a value pbm cannot use stops it with a sentence (exit status 78).")


def build_parser() -> argparse.ArgumentParser:
    """The command line: every verb with its description, flags and defaults."""
    parser = argparse.ArgumentParser(prog="pbm", description="pbm, a play-by-email game server.",
                                     epilog=SETTINGS_NOTE)
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    parser.verbs = {}  # "db upgrade": its parser, which says what it takes when given more

    def verb(parent, name: str, summary: str, description: str = "", **kw):
        made = parent.add_parser(name, help=summary, description=description or summary + ".", **kw)
        parser.verbs[made.prog.removeprefix("pbm ")] = made
        return made

    serve = verb(sub, "serve", "web server, scheduler and, with --smtp-port, SMTP listener in one process",
                 "Run the web server (waitress), the periodic jobs and, with --smtp-port, an SMTP listener "
                 "for incoming mail, in one process: the embedded default. With --workers N the web "
                 "server runs in N worker processes (restarted when one dies) and the rest stays in "
                 "this one. Links in mails point at this server unless PBM_BASE_URL is set. Exit status "
                 "1 when a port is taken.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    serve.add_argument("--port", type=port_number, default=5000, help="web port (default %(default)s)")
    serve.add_argument("--smtp-port", type=port_number, default=None, metavar="SMTP_PORT",
                       help="also take incoming mail by SMTP on this port (default: no SMTP listener)")
    serve.add_argument("--threads", type=positive_number, default=64,  # live pages hold one each (pbm.web.live)
                       help="web server threads (of each worker process); each open live page holds one "
                            "(default %(default)s)")
    serve.add_argument("--workers", type=positive_number, default=1,
                       help="web server processes, for more than one core; the scheduler and the SMTP "
                            "listener stay in the first process (default %(default)s: all in one process)")
    serve.add_argument("--no-scheduler", action="store_true",
                       help="leave the periodic jobs to a separate `pbm scheduler`")
    serve.add_argument("--first-steps", default="", help=argparse.SUPPRESS)  # `make run`'s guide
    serve.add_argument("--listen-fds", default="", help=argparse.SUPPRESS)  # a worker's sockets (pbm.serving)
    serve.add_argument("--lifeline-fd", type=int, default=-1, help=argparse.SUPPRESS)  # and its parent's pipe
    serve.add_argument("--connections-fd", type=int, default=-1, help=argparse.SUPPRESS)  # the workers' table
    serve.add_argument("--worker-slot", type=int, default=0, help=argparse.SUPPRESS)  # ... and its slot there
    serve.set_defaults(func=cmd_serve)

    db = verb(sub, "db", "database tasks: upgrade, rebuild, revision")
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="task")
    verb(db_sub, "upgrade", "apply migrations", "Create the database or apply the migrations it lacks "
         "(PBM_DATABASE_URL).").set_defaults(func=cmd_db_upgrade)
    verb(db_sub, "rebuild", "replay every board's move log into its cached state, reporting boards that "
         "differed").set_defaults(func=cmd_db_rebuild)
    revision = verb(db_sub, "revision", "write a migration for changed models (development)")
    revision.add_argument("message", help="what changed, for the migration's name")
    revision.set_defaults(func=cmd_db_revision)

    ingest = verb(sub, "ingest", "process one raw mail from FILE or standard input (an MTA pipe)",
                  "Process one raw RFC 5322 mail from FILE or standard input, as an MTA pipe\n"
                  "delivers it; answers are mailed as for any other mail.",
                  epilog=INGEST_EXITS, formatter_class=argparse.RawDescriptionHelpFormatter)
    ingest.add_argument("file", nargs="?", metavar="FILE", help="the mail; standard input when omitted or -")
    ingest.set_defaults(func=cmd_ingest)

    smtp = verb(sub, "smtpd", "the SMTP listener alone",
                "Take incoming mail by SMTP; every accepted message goes the way of `pbm ingest`. "
                "Exit status 1 when the port is taken.")
    smtp.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    smtp.add_argument("--port", type=port_number, default=2525, help="SMTP port (default %(default)s)")
    smtp.set_defaults(func=cmd_smtpd)

    verb(sub, "scheduler", "the periodic jobs alone (reminders, expiry, mail delivery)",
         "Run the periodic jobs (reminders, expiry, mail delivery and retries) until stopped; on "
         "PostgreSQL several may run, one leads.").set_defaults(func=cmd_scheduler)
    verb(sub, "sweep", "run the periodic jobs once, now",
         "Run the periodic jobs once and print what they did.").set_defaults(func=cmd_sweep)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the usage of the verb given, not of pbm as a whole
        verb = " ".join(filter(None, (args.command, getattr(args, "db_command", None))))
        parser.verbs[verb].error(f"unrecognized arguments: {' '.join(extra)}")
    given = os.environ.get("PBM_LOG_LEVEL", "").strip()
    level = given.upper() or "INFO"
    if level not in LOG_LEVELS:
        print(f"pbm: PBM_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {given[:40]!r} (set in the "
              "environment).", file=sys.stderr)
        from .service.errors import EX_TEMPFAIL

        return EX_TEMPFAIL if args.command == "ingest" else EX_CONFIG  # ingest: the MTA keeps the mail
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("alembic", "apscheduler", "mail.log", "waitress.queue"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    from sqlalchemy.exc import DBAPIError

    command = " ".join(filter(None, (args.command, getattr(args, "db_command", None))))  # "db upgrade"
    try:
        return args.func(args)
    except KeyboardInterrupt:  # Ctrl-C before a server was up (once up, it stops quietly with 0)
        return EX_INTERRUPTED
    except SettingsError as error:
        print(f"pbm {command}: {error}", file=sys.stderr)
        return EX_CONFIG
    except DBAPIError as error:  # the database is down, or refuses this user
        reason = (str(error.orig or error).strip().splitlines() or [""])[0][:300]
        print(f"pbm {command}: the database cannot be used ({error.__class__.__name__}: {reason}); "
              "check that it runs and PBM_DATABASE_URL.", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
