"""Settings (interface.md "Settings"): each PBM_* variable is read with its
default, a value pbm cannot use stops it at startup with a sentence naming the
variable, and README's settings table lists every setting."""

import re
from pathlib import Path

import pytest

from pbm import create_app
from pbm.config import MAIL_BACKENDS, PROJECT_ROOT, Settings, SettingsError, load_settings
from pbm.mail.transport import TRANSPORTS

NO_FILE = {"PBM_CONFIG": ""}  # the built-in defaults and config/default.toml only


def test_the_defaults_interface_md_states():
    settings = load_settings(environ=NO_FILE)
    instance = PROJECT_ROOT / "instance"
    assert settings.database_url == f"sqlite:///{instance / 'pbm.sqlite3'}"
    assert settings.server_address == "pbm@localhost"
    assert settings.base_url == "http://127.0.0.1:5000"
    assert settings.mail_backend == "maildir" and settings.maildir == str(instance / "outbox")
    assert (settings.smtp_host, settings.smtp_port, settings.smtp_starttls) == ("localhost", 25, False)
    assert settings.inbound_secret == "" and settings.mailgun_signing_key == ""
    assert (settings.nag_days, settings.expire_days) == (4, 7)


@pytest.mark.parametrize("url", ["postgresql://pbm:pw@db.example/pbm", "postgres://pbm:pw@db.example/pbm",
                                 "postgresql+psycopg2://pbm:pw@db.example/pbm"])
def test_a_postgresql_url_without_a_driver_uses_psycopg_3(url):
    settings = load_settings(environ={**NO_FILE, "PBM_DATABASE_URL": url})
    assert settings.database_url == "postgresql+psycopg://pbm:pw@db.example/pbm"


def test_with_only_a_short_expiry_chosen_the_reminder_comes_at_half_of_it():
    settings = load_settings(environ={**NO_FILE, "PBM_EXPIRE_DAYS": "3"})
    assert (settings.nag_days, settings.expire_days) == (1.5, 3)
    assert load_settings(environ={**NO_FILE, "PBM_EXPIRE_DAYS": "5"}).nag_days == 4


def test_every_variable_is_read_from_the_environment():
    environ = {"PBM_DATABASE_URL": "postgresql+psycopg://pbm@db.example/pbm", "PBM_SERVER_ADDRESS": "games@x.test",
               "PBM_BASE_URL": "https://games.x.test/", "PBM_MAIL_BACKEND": "smtp", "PBM_MAILDIR": "/srv/outbox",
               "PBM_SMTP_HOST": "relay.x.test", "PBM_SMTP_PORT": "587", "PBM_SMTP_USER": "u",
               "PBM_SMTP_PASSWORD": "p", "PBM_SMTP_STARTTLS": "yes", "PBM_INBOUND_SECRET": "s",
               "PBM_MAILGUN_SIGNING_KEY": "k", "PBM_NAG_DAYS": "2.5", "PBM_EXPIRE_DAYS": "10"}
    settings = load_settings(environ={**NO_FILE, **environ})
    assert settings.database_url == "postgresql+psycopg://pbm@db.example/pbm"
    assert (settings.server_address, settings.base_url) == ("games@x.test", "https://games.x.test")
    assert (settings.mail_backend, settings.maildir) == ("smtp", "/srv/outbox")
    assert (settings.smtp_host, settings.smtp_port, settings.smtp_user, settings.smtp_password,
            settings.smtp_starttls) == ("relay.x.test", 587, "u", "p", True)
    assert (settings.inbound_secret, settings.mailgun_signing_key) == ("s", "k")
    assert (settings.nag_days, settings.expire_days) == (2.5, 10)


@pytest.mark.parametrize("variable, value, sentence", [
    ("PBM_SMTP_PORT", "abc", "PBM_SMTP_PORT must be a whole number from 1 to 65535, not 'abc' "
                             "(set in the environment)."),
    ("PBM_SMTP_PORT", "70000", "PBM_SMTP_PORT must be a whole number from 1 to 65535, not '70000'"),
    ("PBM_NAG_DAYS", "x", "PBM_NAG_DAYS must be a number more than 0 and at most 365, not 'x'"),
    ("PBM_NAG_DAYS", "-1", "PBM_NAG_DAYS must be a number more than 0 and at most 365, not '-1'"),
    ("PBM_NAG_DAYS", "nan", "PBM_NAG_DAYS must be a number more than 0 and at most 365, not 'nan'"),
    ("PBM_EXPIRE_DAYS", "0", "PBM_EXPIRE_DAYS must be a number more than 0 and at most 365, not '0'"),
    ("PBM_EXPIRE_DAYS", "inf", "PBM_EXPIRE_DAYS must be a number more than 0 and at most 365, not 'inf'"),
    ("PBM_NAG_DAYS", "9", "PBM_NAG_DAYS (9, set in the environment) must be less than PBM_EXPIRE_DAYS (7, the "
                          "default): the reminder comes before the expiry."),
    ("PBM_MAIL_BACKEND", "smtps", "PBM_MAIL_BACKEND must be one of smtp, maildir, console, not 'smtps'"),
    ("PBM_SMTP_STARTTLS", "maybe", "PBM_SMTP_STARTTLS must be true or false (also 1/0, yes/no, on/off), "
                                   "not 'maybe'"),
    ("PBM_SERVER_ADDRESS", "pbm", "PBM_SERVER_ADDRESS must be a mail address like pbm@games.example.org, "
                                  "not 'pbm'"),
    ("PBM_BASE_URL", "games.example.org", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_DATABASE_URL", "nonsense", "PBM_DATABASE_URL must be a SQLAlchemy URL of SQLite"),
    ("PBM_DATABASE_URL", "postgresql://", "PBM_DATABASE_URL must name the PostgreSQL database (postgresql://user@host/"
                                          "db), not 'postgresql://' (set in the environment)."),
    ("PBM_DATABASE_URL", "postgresql://pbm@db.example", "PBM_DATABASE_URL must name the PostgreSQL database"),
    ("PBM_DATABASE_URL", "sqlite://", "PBM_DATABASE_URL must name the SQLite file (sqlite:///path/pbm.sqlite3), "
                                      "not 'sqlite://'"),
    ("PBM_DATABASE_URL", "sqlite:///:memory:", "PBM_DATABASE_URL must name the SQLite file"),
    ("PBM_DATABASE_URL", "mysql://pbm@db/pbm", "(postgresql://user@host/db), not "
                                                    "'mysql://pbm@db/pbm'"),
    ("PBM_GNUGO_LEVEL", "42", "PBM_GNUGO_LEVEL must be a whole number from 1 to 10, not '42'"),
    ("PBM_COMPUTER_SECONDS", "0", "PBM_COMPUTER_SECONDS must be a number more than 0 and at most 60"),
    ("PBM_NEW_GAMES_PER_HOUR", "0", "PBM_NEW_GAMES_PER_HOUR must be a whole number from 1 to 100000"),
    ("PBM_MAX_MESSAGE_BYTES", "5", "PBM_MAX_MESSAGE_BYTES must be a whole number from 1024 to 104857600"),
    # a port SQLAlchemy cannot read fails in make_url with ValueError, not ArgumentError
    ("PBM_DATABASE_URL", "postgresql://u@h:abc/db", "PBM_DATABASE_URL must be a SQLAlchemy URL of SQLite"),
    ("PBM_DATABASE_URL", "postgresql://u@[::1/db", "PBM_DATABASE_URL must be a SQLAlchemy URL of SQLite"),
    # addresses the mail writer could not put in a From (each mail would fail, and be retried forever)
    ("PBM_SERVER_ADDRESS", "pbm@example.org.", "PBM_SERVER_ADDRESS must be a mail address like"),
    ("PBM_SERVER_ADDRESS", "<pbm@x.org>", "PBM_SERVER_ADDRESS must be a mail address like"),
    ("PBM_SERVER_ADDRESS", "pbm@x,y.org", "PBM_SERVER_ADDRESS must be a mail address like"),
    ("PBM_SERVER_ADDRESS", 'p"b@example.org', "PBM_SERVER_ADDRESS must be a mail address like"),
    # links in every mail start with it
    ("PBM_BASE_URL", "http://exa mple.org", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://host:abc", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://host:99999", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://:5000", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://user@", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://[::1", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "http://[zz]/", "PBM_BASE_URL must be an http:// or https:// address"),
    ("PBM_BASE_URL", "https://[pbm.example.org]/", "PBM_BASE_URL must be an http:// or https:// address"),
    # a relay no connection could be opened to: every mail would fail for days
    ("PBM_SMTP_HOST", "relay..example.org", "PBM_SMTP_HOST must be the name or IP address of the mail relay (its "
                                            "port goes in PBM_SMTP_PORT), not 'relay..example.org'"),
    ("PBM_SMTP_HOST", "mail." + "x" * 64 + ".example.org", "PBM_SMTP_HOST must be the name or IP address"),
    ("PBM_SMTP_HOST", "127.0.0.1:25", "PBM_SMTP_HOST must be the name or IP address"),
    ("PBM_SMTP_HOST", "-relay.example.org", "PBM_SMTP_HOST must be the name or IP address"),
    ("PBM_SMTP_HOST", " ", "PBM_SMTP_HOST must be the name or IP address"),
    ("PBM_TRUSTED_PROXY", "nginx.internal", "PBM_TRUSTED_PROXY must be the IP address the reverse proxy connects "
                                            "from, like 127.0.0.1 or ::1, not 'nginx.internal' (set in the "
                                            "environment)."),
    ("PBM_TRUSTED_PROXY", "*", "PBM_TRUSTED_PROXY must be the IP address"),  # anyone's headers: never
    ("PBM_TRUSTED_PROXY", "10.0.0.0/8", "PBM_TRUSTED_PROXY must be the IP address"),
    # folders pbm could neither make nor write, found at start rather than mail by mail
    ("PBM_MAILDIR", "/etc/passwd", "PBM_MAILDIR must name a folder pbm can make and write (a file stands where a "
                                   "folder must be: '/etc/passwd'; set in the environment)."),
    ("PBM_MAILDIR", "/etc/passwd/box", "(a file stands where a folder must be: '/etc/passwd';"),
    ("PBM_INSTANCE_PATH", "/etc/passwd", "PBM_INSTANCE_PATH must name a folder pbm can make and write"),
    ("PBM_DATABASE_URL", "sqlite:////etc/passwd/x.db", "PBM_DATABASE_URL must name a folder pbm can make and write"),
])
def test_a_value_pbm_cannot_use_stops_it_with_a_sentence(variable, value, sentence):
    with pytest.raises(SettingsError) as refused:
        load_settings(environ={**NO_FILE, variable: value})
    assert sentence in str(refused.value)


def test_create_app_refuses_a_bad_override_and_names_where_it_came_from(tmp_path):
    with pytest.raises(SettingsError, match=r"PBM_MAIL_BACKEND must be one of smtp, maildir, console, "
                                            r"not 'smtps' \(given to create_app\)\."):
        create_app({"instance_path": str(tmp_path), "mail_backend": "smtps"})


def test_the_addresses_and_urls_a_server_uses_are_taken():
    for variable, value in (("PBM_BASE_URL", "https://games.example.org:8443/pbm"),
                            ("PBM_BASE_URL", "http://[::1]:5000"), ("PBM_SERVER_ADDRESS", "pbm@localhost"),
                            ("PBM_SERVER_ADDRESS", "pbm+games@games.example.org"), ("PBM_SMTP_HOST", "localhost"),
                            ("PBM_SMTP_HOST", "smtp.example.org."), ("PBM_SMTP_HOST", "::1"),
                            ("PBM_SMTP_HOST", "192.0.2.25"), ("PBM_SMTP_HOST", "mail_relay.internal"),
                            ("PBM_SMTP_HOST", "relais.bücher.example")):
        settings = load_settings(environ={**NO_FILE, variable: value})
        assert value in (settings.base_url, settings.server_address, settings.smtp_host)


def test_the_maildir_is_checked_only_where_mail_goes_there(tmp_path):
    settings = load_settings(environ={**NO_FILE, "PBM_MAIL_BACKEND": "smtp", "PBM_MAILDIR": "/etc/passwd"})
    assert settings.mail_backend == "smtp"


def test_create_app_refuses_an_override_it_does_not_know(tmp_path):
    with pytest.raises(SettingsError, match=r"create_app was given 'databse_url', which pbm does not know; the "
                                            r"settings are: answers_per_hour, base_url, "):
        create_app({"instance_path": str(tmp_path), "databse_url": f"sqlite:///{tmp_path}/x.sqlite3"})


def test_every_backend_the_settings_allow_has_a_transport():
    assert set(MAIL_BACKENDS) == set(TRANSPORTS)


def test_settings_files_are_checked_and_the_environment_wins(tmp_path):
    config = tmp_path / "pbm.toml"
    config.write_text('[pbm]\nsmtp_port = 587\nnag_days = 2\nbase_url = "https://games.x.test"\n')
    settings = load_settings(environ={"PBM_CONFIG": str(config), "PBM_NAG_DAYS": "3"})
    assert (settings.smtp_port, settings.nag_days, settings.base_url) == (587, 3, "https://games.x.test")
    assert "base_url" in settings.configured
    config.write_text('[pbm]\nsmtp_port = "many"\n')
    with pytest.raises(SettingsError, match=f"PBM_SMTP_PORT must be a whole number from 1 to 65535, not 'many' "
                                            f"\\(set in {re.escape(str(config))}\\)"):
        load_settings(environ={"PBM_CONFIG": str(config)})
    config.write_text('[pbm]\nnag_days = 8\n')
    with pytest.raises(SettingsError, match=re.escape(f"PBM_NAG_DAYS (8, set in {config}) must be less than "
                                                      "PBM_EXPIRE_DAYS (7, the default)")):
        load_settings(environ={"PBM_CONFIG": str(config)})
    config.write_text('[pbm]\nsmtp_prot = 587\n')
    with pytest.raises(SettingsError, match="sets smtp_prot, which pbm does not know"):
        load_settings(environ={"PBM_CONFIG": str(config)})
    config.write_text('[pbm]\nsmtp_port = \n')
    with pytest.raises(SettingsError, match=f"The settings file {re.escape(str(config))} cannot be read"):
        load_settings(environ={"PBM_CONFIG": str(config)})
    with pytest.raises(SettingsError, match="PBM_CONFIG names '/no/such/pbm.toml', which does not exist."):
        load_settings(environ={"PBM_CONFIG": "/no/such/pbm.toml"})
    for table in ("pbm = 5", "pbm = []", "pbm = [1]", 'pbm = "x"'):
        config.write_text(table + "\n")
        with pytest.raises(SettingsError, match=f"The settings file {re.escape(str(config))} has pbm = ..., which "
                                                "must be the \\[pbm\\] table of settings."):
            load_settings(environ={"PBM_CONFIG": str(config)})
    config.write_text('[pbm]\ninbound_secret = true\n')  # not the secret "True"
    with pytest.raises(SettingsError, match="PBM_INBOUND_SECRET must be a string \\(written in quotes in a settings "
                                            "file\\), not 'True'"):
        load_settings(environ={"PBM_CONFIG": str(config)})


def test_the_trusted_proxy_is_written_as_its_connections_come_from_it():
    assert load_settings(environ=NO_FILE).trusted_proxy == ""  # nobody's X-Forwarded-* believed
    assert load_settings(environ={**NO_FILE, "PBM_TRUSTED_PROXY": " 0:0::1"}).trusted_proxy == "::1"
    assert load_settings(environ={**NO_FILE, "PBM_TRUSTED_PROXY": "127.0.0.1"}).trusted_proxy == "127.0.0.1"


def test_readme_settings_table_lists_every_setting_with_its_bounds():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("### Settings"):readme.index("### Durability")]
    for name in Settings.__dataclass_fields__:
        if name != "configured":
            assert f"`PBM_{name.upper()}`" in table, name
    for bounds in ("1 to 65535", "more than 0 and at most 365", "less than `PBM_EXPIRE_DAYS`", "1 to 10",
                   "more than 0 and at most 60", "1 to 100000", "1024 to 104857600", "`PBM_CONFIG`",
                   "`PBM_LOG_LEVEL`", "exit status 78"):
        assert bounds in table, bounds


def test_overrides_win_over_the_environment_with_or_without_the_prefix():
    environ = {**NO_FILE, "PBM_SMTP_PORT": "27", "PBM_NAG_DAYS": "3"}
    settings = load_settings({"smtp_port": 26, "PBM_NAG_DAYS": 2}, environ=environ)
    assert (settings.smtp_port, settings.nag_days) == (26, 2)
