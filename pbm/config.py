"""Settings: built-in defaults, then ``config/*.toml``, then ``PBM_*`` environment
variables, then explicit overrides (for tests and ``create_app(overrides)``).

Every value is checked when the settings are loaded: a value pbm cannot use
raises ``SettingsError``, whose sentence names the variable, the value, where
it was set and what is allowed, so a server refuses to start rather than fail
later, mail by mail.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import secrets
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit

import idna

PROJECT_ROOT = Path(__file__).resolve().parent.parent

MAIL_BACKENDS = ("smtp", "maildir", "console")
MAX_DAYS = 365  # the longest reminder or expiry time, as a challenge's --nagtime/--expiretime
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class SettingsError(ValueError):
    """A setting pbm cannot use; ``str()`` is the sentence for the operator."""


@dataclass(frozen=True)
class Settings:
    database_url: str = ""
    server_address: str = "pbm@localhost"
    base_url: str = "http://127.0.0.1:5000"
    mail_backend: str = "maildir"  # one of MAIL_BACKENDS
    maildir: str = ""
    smtp_host: str = "localhost"
    smtp_port: int = 25
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_starttls: bool = False
    inbound_secret: str = ""
    mailgun_signing_key: str = ""
    nag_days: float = 4.0
    expire_days: float = 7.0
    instance_path: str = ""
    max_message_bytes: int = 10 * 1024 * 1024
    secret_key: str = ""
    gnugo_path: str = "/usr/games/gnugo"  # the computer's Go engine (Debian package gnugo)
    gnugo_level: int = 1  # GNU Go's strength, 1 to 10
    computer_seconds: float = 1.0  # time the search player thinks per move (other games)
    new_games_per_hour: int = 20  # games one client address may start on /new per hour
    answers_per_hour: int = 200  # mails from one address per hour that get answers (board mails always go)
    boards_per_hour: int = 100  # new boards a player may be seated at per hour
    trusted_proxy: str = ""  # the reverse proxy's address, whose X-Forwarded-* pbm serve believes (none: nobody's)
    # The settings some file, variable or override gave a value (``pbm serve`` links
    # to its own port unless base_url is among them).
    configured: frozenset = field(default=frozenset(), compare=False)

    @property
    def shown_database_url(self) -> str:
        """The database URL as logs and banners may show it: without its password."""
        from sqlalchemy.engine import make_url

        return make_url(self.database_url).render_as_string(hide_password=True)

    @property
    def server_domain(self) -> str:
        return self.server_address.rpartition("@")[2] or "localhost"

    @property
    def server_local_part(self) -> str:
        return self.server_address.rpartition("@")[0] or "pbm"


# The bounds of the numeric settings: (lowest, highest, whether the lowest is allowed).
BOUNDS = {
    "smtp_port": (1, 65535, True),
    "nag_days": (0, MAX_DAYS, False),
    "expire_days": (0, MAX_DAYS, False),
    "max_message_bytes": (1024, 100 * 1024 * 1024, True),
    "gnugo_level": (1, 10, True),
    "computer_seconds": (0, 60, False),
    "new_games_per_hour": (1, 100_000, True),
    "answers_per_hour": (1, 1_000_000, True),
    "boards_per_hour": (1, 1_000_000, True),
}


def env_name(name: str) -> str:
    return "PBM_" + name.upper()


def _number_range(name: str) -> str:
    low, high, low_allowed = BOUNDS[name]
    return f"from {low} to {high}" if low_allowed else f"more than {low:g} and at most {high:g}"


def _coerce(name: str, kind, value, where: str):
    """``value`` as the setting's type, checked against its bounds."""
    def refuse(what: str) -> SettingsError:
        return SettingsError(f"{env_name(name)} must be {what}, not {str(value)[:80]!r} ({where}).")

    if kind in (bool, "bool"):
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word not in TRUE_WORDS + FALSE_WORDS:
            raise refuse("true or false (also 1/0, yes/no, on/off)")
        return word in TRUE_WORDS
    if kind in (int, "int", float, "float"):
        whole = kind in (int, "int")
        wanted = f"a {'whole ' if whole else ''}number {_number_range(name)}"
        try:
            number = (int(str(value).strip()) if not isinstance(value, int) else value) if whole \
                else float(value)
        except (TypeError, ValueError):
            raise refuse(wanted) from None
        low, high, low_allowed = BOUNDS[name]
        if isinstance(value, bool) or not math.isfinite(number) or number > high \
                or number < low or (number == low and not low_allowed):
            raise refuse(wanted)
        return number
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, str):  # a file's `secret = true` would otherwise be the secret "True"
        raise refuse("a string (written in quotes in a settings file)")
    return value


def _check(settings: Settings, where: dict) -> None:
    """Refuse values that no part of pbm could use."""
    def refuse(name: str, what: str) -> SettingsError:
        value = getattr(settings, name)
        return SettingsError(f"{env_name(name)} must be {what}, not {value!r} ({where.get(name, 'the default')}).")

    if settings.mail_backend not in MAIL_BACKENDS:
        raise refuse("mail_backend", "one of " + ", ".join(MAIL_BACKENDS))
    from .mail.outbound import writable_address  # (it builds on these settings)

    if "@" not in settings.server_address.strip("@") or not writable_address(settings.server_address):
        raise refuse("server_address", "a mail address like pbm@games.example.org")
    if not web_address(settings.base_url):
        raise refuse("base_url", "an http:// or https:// address like https://games.example.org")
    if not host_name(settings.smtp_host):
        raise refuse("smtp_host", "the name or IP address of the mail relay (its port goes in PBM_SMTP_PORT)")
    if settings.trusted_proxy and not ip_address(settings.trusted_proxy):
        raise refuse("trusted_proxy", "the IP address the reverse proxy connects from, like 127.0.0.1 or ::1")
    if "nag_days" in settings.configured and settings.nag_days >= settings.expire_days:
        raise SettingsError(f"PBM_NAG_DAYS ({settings.nag_days:g}, {where.get('nag_days')}) must be less than "
                            f"PBM_EXPIRE_DAYS ({settings.expire_days:g}, {where.get('expire_days', 'the default')}): "
                            "the reminder comes before the expiry.")
    if settings.database_url:
        _check_database_url(settings.database_url, where.get("database_url", "the default"))


def ip_address(text: str) -> str:
    """``text`` as the IP address a connection comes from is written ("::1", not "0::1"), or ""."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return ""


def web_address(url: str) -> bool:
    """Whether ``url`` is an http(s) address that links in mails can start with: a host
    name, a port from 1 to 65535 if any, no user, query, fragment or blank."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a bracketed host that is no IPv6 address; a port not a number, or out of range
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and "@" not in parts.netloc \
        and port != 0 and not parts.query and not parts.fragment


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


def host_name(host: str) -> bool:
    """Whether ``host`` is an IP address or a host name a connection can be opened to:
    labels of 1 to 63 letters, digits, hyphens (and underscores, which some local
    names have), 253 characters at most, in IDNA's ASCII form for other letters."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    name = host.removesuffix(".")
    try:
        name = name if name.isascii() else idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError:
        return False
    return 0 < len(name) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in name.split("."))


def folder_problem(folder: Path) -> tuple[str, Path] | None:
    """Why this process could not make or write ``folder`` ("a file stands where a folder
    must be", "a folder is not writable") and the path at fault, or None. Looks, makes
    nothing: the folders are made when first needed."""
    for path in (folder, *folder.parents):
        if path.is_dir():
            return None if os.access(path, os.W_OK | os.X_OK) else ("a folder is not writable", path)
        if path.exists():
            return "a file stands where a folder must be", path
    return None


def _check_folders(settings: Settings, where: dict) -> None:
    """Refuse an instance folder, Maildir or SQLite file's folder that cannot be made or written."""
    from sqlalchemy.engine import make_url

    from .db import sqlite_file

    wanted = {"instance_path": settings.instance_path}
    if settings.mail_backend == "maildir":
        wanted["maildir"] = settings.maildir
    parsed = make_url(settings.database_url)
    if parsed.get_backend_name() == "sqlite" and (database := sqlite_file(parsed)) is not None:
        wanted["database_url"] = str(database.absolute().parent)
    for name, folder in wanted.items():
        if (problem := folder_problem(Path(folder))) is not None:
            reason, path = problem
            raise SettingsError(f"{env_name(name)} must name a folder pbm can make and write ({reason}: "
                                f"{str(path)[:200]!r}; {where.get(name, 'the default')}).")


# PostgreSQL URLs without a driver (and psycopg2's) are taken as psycopg 3's, the driver pbm installs.
POSTGRESQL_DRIVERS = ("postgres", "postgresql", "postgresql+psycopg2", "postgresql+psycopg")


def _check_database_url(url: str, where: str) -> None:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    wanted = ("a SQLAlchemy URL of SQLite (sqlite:///path/pbm.sqlite3) or PostgreSQL "
              "(postgresql://user@host/db)")
    try:
        parsed = make_url(url)
        parsed.port  # noqa: B018  (a port that is no number fails here, or later at connecting)
    except (ArgumentError, ValueError):
        parsed = None
    if parsed is None or parsed.drivername not in ("sqlite", "sqlite+pysqlite", *POSTGRESQL_DRIVERS):
        raise SettingsError(f"PBM_DATABASE_URL must be {wanted}, not {url[:200]!r} ({where}).")
    if parsed.drivername in POSTGRESQL_DRIVERS and not (parsed.database or parsed.query.get("dbname")):
        # libpq would pick a database by the user's name: pbm's tables made in whatever that is
        raise SettingsError(f"PBM_DATABASE_URL must name the PostgreSQL database (postgresql://user@host/db), "
                            f"not {url[:200]!r} ({where}).")
    if parsed.drivername not in POSTGRESQL_DRIVERS and parsed.database in (None, "", ":memory:"):
        # every connection would open a database of its own, empty
        raise SettingsError(f"PBM_DATABASE_URL must name the SQLite file (sqlite:///path/pbm.sqlite3), "
                            f"not {url[:200]!r} ({where}).")


def _with_driver(url: str) -> str:
    """``url`` naming psycopg 3 when it is a PostgreSQL URL."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.drivername in POSTGRESQL_DRIVERS:
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return url


def _read_file(config_file: Path, named: bool) -> dict:
    """The ``[pbm]`` table of the settings file; a file named by PBM_CONFIG must exist,
    and nothing may stand outside the table (a setting written there would be ignored)."""
    if not config_file.exists():
        if named:
            raise SettingsError(f"PBM_CONFIG names {str(config_file)!r}, which does not exist.")
        return {}
    try:
        document = tomllib.loads(config_file.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise SettingsError(f"The settings file {config_file} cannot be read: {error}.") from None
    outside = sorted(key for key in document if key != "pbm")
    if outside:
        raise SettingsError(f"The settings file {config_file} has {', '.join(outside)} outside its [pbm] table; "
                            "pbm reads its settings from that table only.")
    table = document.get("pbm", {})
    if not isinstance(table, dict):
        raise SettingsError(f"The settings file {config_file} has pbm = ..., which must be the [pbm] table of "
                            "settings.")
    known = {f.name for f in fields(Settings)} - {"configured"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise SettingsError(f"The settings file {config_file} sets {', '.join(unknown)}, which pbm does not know; "
                            f"the settings are: {', '.join(sorted(known))}.")
    return table


def load_settings(overrides: dict | None = None, environ=None) -> Settings:
    """Resolve and check the settings; relative paths are taken from the project root.
    Raises ``SettingsError`` for a value pbm cannot use or a settings file it cannot read."""
    environ = os.environ if environ is None else environ
    named = bool(environ.get("PBM_CONFIG"))
    config_file = Path(environ.get("PBM_CONFIG") or PROJECT_ROOT / "config" / "default.toml")
    values: dict = {}
    where: dict = {}
    for key, value in _read_file(config_file, named).items():
        values[key], where[key] = value, f"set in {config_file}"
    known = {f.name: f.type for f in fields(Settings) if f.name != "configured"}
    for name in known:
        env = environ.get(env_name(name))
        if env is not None and env != "":
            values[name], where[name] = env, "set in the environment"
    for key, value in (overrides or {}).items():
        name = key.lower().removeprefix("pbm_")
        if name not in known:
            raise SettingsError(f"create_app was given {key!r}, which pbm does not know; the settings are: "
                                f"{', '.join(sorted(known))}.")
        values[name], where[name] = value, "given to create_app"
    chosen = {k: v for k, v in values.items() if k in known}
    settings = Settings(**{k: _coerce(k, known[k], v, where[k]) for k, v in chosen.items()},
                        configured=frozenset(chosen))
    _check(settings, where)

    instance = Path(settings.instance_path or PROJECT_ROOT / "instance")
    if not instance.is_absolute():
        instance = PROJECT_ROOT / instance
    maildir = Path(settings.maildir or instance / "outbox")
    if not maildir.is_absolute():
        maildir = PROJECT_ROOT / maildir
    if "nag_days" not in settings.configured and settings.nag_days >= settings.expire_days:
        settings = replace(settings, nag_days=settings.expire_days / 2)  # only the expiry was chosen
    database_url = _with_driver(settings.database_url) if settings.database_url else f"sqlite:///{instance / 'pbm.sqlite3'}"
    settings = replace(settings, instance_path=str(instance), maildir=str(maildir), database_url=database_url,
                       base_url=settings.base_url.rstrip("/"), trusted_proxy=ip_address(settings.trusted_proxy))
    _check_folders(settings, where)
    return settings


def secret_key(settings: Settings) -> str:
    """The key that signs the pages' forms and cookies and the links in mails: the
    configured one, or one made once and kept under instance/ (every process of the
    instance reads the same)."""
    return settings.secret_key or _instance_key(settings.instance_path)


def _instance_key(instance_path: str) -> str:
    """The key made once and kept under ``instance_path``."""
    path = Path(instance_path) / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Several processes may start at once: the key is written whole under another
    # name and linked into place, so the first one made wins and every process
    # reads that one (a reader never sees a half-written file).
    if not path.exists():
        draft = path.with_name(f"secret_key.{os.getpid()}.{secrets.token_hex(4)}")
        draft.write_text(secrets.token_hex(32))
        draft.chmod(0o600)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()
