"""Settings: built-in defaults, then ``config/*.toml``, then ``PBM_*`` environment
variables, then explicit overrides (for tests and ``create_app(overrides)``)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    database_url: str = ""
    server_address: str = "pbm@localhost"
    base_url: str = "http://127.0.0.1:5000"
    mail_backend: str = "maildir"  # smtp | maildir | console
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

    @property
    def server_domain(self) -> str:
        return self.server_address.rpartition("@")[2] or "localhost"

    @property
    def server_local_part(self) -> str:
        return self.server_address.rpartition("@")[0] or "pbm"


def _coerce(kind, value):
    if kind in (bool, "bool"):
        return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")
    if kind in (int, "int"):
        return int(value)
    if kind in (float, "float"):
        return float(value)
    return str(value)


def load_settings(overrides: dict | None = None, environ=None) -> Settings:
    """Resolve the settings; relative paths are taken from the project root."""
    environ = os.environ if environ is None else environ
    values: dict = {}
    config_file = Path(environ.get("PBM_CONFIG", PROJECT_ROOT / "config" / "default.toml"))
    if config_file.exists():
        values.update(tomllib.loads(config_file.read_text()).get("pbm", {}))
    for f in fields(Settings):
        env = environ.get("PBM_" + f.name.upper())
        if env is not None and env != "":
            values[f.name] = env
    for key, value in (overrides or {}).items():
        values[key.lower().removeprefix("pbm_")] = value
    known = {f.name: f.type for f in fields(Settings)}
    settings = Settings(**{k: _coerce(known[k], v) for k, v in values.items() if k in known})

    instance = Path(settings.instance_path or PROJECT_ROOT / "instance")
    if not instance.is_absolute():
        instance = PROJECT_ROOT / instance
    maildir = Path(settings.maildir or instance / "outbox")
    if not maildir.is_absolute():
        maildir = PROJECT_ROOT / maildir
    database_url = settings.database_url or f"sqlite:///{instance / 'pbm.sqlite3'}"
    return replace(settings, instance_path=str(instance), maildir=str(maildir),
                   database_url=database_url)
