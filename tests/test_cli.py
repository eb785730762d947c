"""The ``pbm`` command line, run as a real process."""

import json
import mailbox
import os
import re
import signal
import smtplib
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

from .conftest import Outbox, free_port, make_mail, wait_until


def pbm(*args, env, stdin=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "pbm.cli", *args], input=stdin, env=env,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "PBM_INSTANCE_PATH": str(tmp_path / "instance"),
            "PBM_SERVER_ADDRESS": "pbm@pbm.test", "PBM_LOG_LEVEL": "WARNING"}


def test_db_upgrade_then_ingest_then_sweep(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    assert (tmp_path / "instance" / "pbm.sqlite3").exists()
    mail_file = tmp_path / "signup.eml"
    mail_file.write_bytes(make_mail("alice@players.test", "signup alice alicepw"))
    done = pbm("ingest", str(mail_file), env=env)
    assert done.returncode == 0 and done.stdout.decode().startswith("applied")
    again = pbm("ingest", env=env, stdin=mail_file.read_bytes())
    assert again.returncode == 0 and again.stdout.decode().startswith("duplicate")
    box = mailbox.Maildir(str(tmp_path / "instance" / "outbox"), create=False)
    assert len(box) == 1
    swept = pbm("sweep", env=env)
    assert swept.returncode == 0 and swept.stdout.decode().strip() == "reminders=0 expired=0 computer=0 delivered=0"


def test_ingest_exits_75_when_the_database_is_unavailable(env, tmp_path):
    env = {**env, "PBM_DATABASE_URL": f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none"}
    result = pbm("ingest", env=env, stdin=make_mail("alice@players.test", "help"))
    assert result.returncode == 75
    said = result.stderr.decode()
    assert "pbm ingest: the database cannot be reached (OperationalError)" in said
    assert "the mail was not handled; the MTA keeps it and tries again." in said and "starting anyway" not in said


def test_ingest_of_a_mail_without_sender_exits_0_and_says_why(env):
    assert pbm("db", "upgrade", env=env).returncode == 0
    result = pbm("ingest", env=env, stdin=b"Subject: help\n\nhello\n")
    assert result.returncode == 0 and b"no sender" in result.stderr


def test_ingest_of_a_mail_over_the_size_limit_exits_65_so_the_mta_bounces_it(env):
    env = {**env, "PBM_MAX_MESSAGE_BYTES": "2000"}
    assert pbm("db", "upgrade", env=env).returncode == 0
    result = pbm("ingest", env=env, stdin=make_mail("alice@players.test", "help", "x" * 3000))
    assert result.returncode == 65
    assert b"over the limit of 2000 bytes; not handled" in result.stderr


def test_serve_runs_web_scheduler_and_smtp_in_one_process(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    port, smtp_port = free_port(), free_port()
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port),
                                "--smtp-port", str(smtp_port)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        response = wait_until(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2),
                              "pbm serve to answer /healthz")
        with response:
            assert json.load(response) == {"status": "ok", "database": "ok"}
            assert "waitress" in response.headers.get("Server", "")  # a production WSGI server, not Flask's
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as smtp:
            raw = make_mail("alice@players.test", "signup alice alicepw").replace(b"\n", b"\r\n")
            smtp.sendmail("alice@players.test", ["pbm@pbm.test"], raw)
        box = Outbox(str(tmp_path / "instance" / "outbox"))
        wait_until(box.all, "the answer in the Maildir (delivered after the SMTP reply)")
        assert [m["Subject"] for m in box.all()] == ["pbm signup"]
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0].decode()
    assert f"http://127.0.0.1:{port}/" in output and f"127.0.0.1:{smtp_port}" in output


def test_scheduler_process_sends_what_is_due(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    for raw in (make_mail("alice@players.test", "signup alice alicepw"),
                make_mail("bob@players.test", "signup bob bobpw"),
                make_mail("alice@players.test", "greatkingdom challenge alice bob")):
        assert pbm("ingest", env=env, stdin=raw).returncode == 0
    with sqlite3.connect(tmp_path / "instance" / "pbm.sqlite3") as db:  # the board has been idle for days
        db.execute("UPDATE board SET nag_due_at = '2026-01-01 00:00:00' WHERE id = 101")
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "scheduler"], env={**env, "PBM_LOG_LEVEL": "INFO"},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    box = mailbox.Maildir(str(tmp_path / "instance" / "outbox"), create=False)
    try:
        wait_until(lambda: any(m["Subject"] == "Great Kingdom Board 101 reminder" for m in box),
                   "the scheduler to send the reminder")
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0].decode()
    assert [m["To"] for m in box if m["Subject"] == "Great Kingdom Board 101 reminder"] == ["alice@players.test"]
    assert "pbm scheduler running" in output and "send_reminders: 1" in output


def test_smtpd_alone_takes_mail_like_ingest(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "smtpd", "--port", str(port)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        smtp = wait_until(lambda: smtplib.SMTP("127.0.0.1", port, timeout=30), "pbm smtpd to listen")
        with smtp:
            raw = make_mail("alice@players.test", "signup alice alicepw").replace(b"\n", b"\r\n")
            smtp.sendmail("alice@players.test", ["pbm@pbm.test"], raw)
            refused = None
            try:
                smtp.sendmail("x@players.test", ["pbm@pbm.test"], b"Subject: no sender\r\n\r\nhi\r\n")
            except smtplib.SMTPDataError as error:
                refused = error.smtp_code
        box = Outbox(str(tmp_path / "instance" / "outbox"))
        wait_until(box.all, "the answer in the Maildir (delivered after the SMTP reply)")
        assert [m["Subject"] for m in box.all()] == ["pbm signup"]
        assert refused == 550  # a message without a From: header is refused, not answered
    finally:
        process.terminate()
        process.communicate(timeout=30)


def open_a_board(base: str) -> None:
    """alice and bob sign up and alice challenges bob (board 101), through the webhook of
    the server at ``base``."""
    for raw in (make_mail("alice@players.test", "signup alice alicepw"),
                make_mail("bob@players.test", "signup bob bobpw"),
                make_mail("alice@players.test", "greatkingdom challenge alice bob")):
        request = urllib.request.Request(base + "/inbound/email", data=raw, headers={"Content-Type": "message/rfc822"})
        urllib.request.urlopen(request, timeout=30).read()


def test_serve_logs_a_closed_live_play_page_without_its_token(env, tmp_path):
    """waitress says at INFO when a client leaves while served, naming the path: a live
    play page that is closed is one, and its token is also its seat's reply tag."""
    assert pbm("db", "upgrade", env=env).returncode == 0
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--no-scheduler"],
                                   env={**env, "PBM_LOG_LEVEL": "INFO"}, stdout=output, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2), "pbm serve to start")
        open_a_board(base)
        with sqlite3.connect(tmp_path / "instance" / "pbm.sqlite3") as db:
            token = db.execute("SELECT token1 FROM board WHERE id = 101").fetchone()[0]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as page:  # the page opens, then closes
            page.sendall(f"GET /play/{token}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert page.recv(100).startswith(b"HTTP/1.1 200")
        wait_until(lambda: b"Client disconnected while serving" in log.read_bytes(), "waitress to notice it")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    logged = log.read_text()
    assert "Client disconnected while serving /play/.../events" in logged
    assert token not in logged


def test_serve_links_to_its_own_port_refuses_a_busy_port_and_stops_quietly(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    env = {k: v for k, v in env.items() if k != "PBM_BASE_URL"}
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2), "pbm serve to start")
        open_a_board(base)
        box = Outbox(str(tmp_path / "instance" / "outbox"))
        board_mail = wait_until(lambda: next((m for m in box.all() if m["Subject"] == "Great Kingdom Board 101 alice"),
                                             None), "the board mail (delivered after the answer)")
        assert f"{base}/play/" in board_mail.get_payload(decode=True).decode()
        busy = pbm("serve", "--port", str(port), env=env)
        assert busy.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in busy.stderr.decode()
        assert "choose another port with --port" in busy.stderr.decode()
        assert "Traceback" not in busy.stderr.decode()
    finally:
        process.send_signal(signal.SIGTERM)  # what systemd's stop sends
        output = process.communicate(timeout=30)[0].decode()
    assert process.returncode == 0 and "Traceback" not in output


# -- interface.md's command line: help, exit statuses, refusals with a sentence ------------


VERBS = {  # each verb of interface.md with the flags it names
    ("serve",): ("--host", "--port", "--smtp-port"),
    ("db", "upgrade"): (),
    ("ingest",): ("FILE",),
    ("smtpd",): ("--host", "--port"),
    ("scheduler",): (),
    ("sweep",): (),
}


def test_help_describes_every_verb_flag_and_default(env):
    overview = pbm("--help", env=env)
    assert overview.returncode == 0
    for verb in ("serve", "db", "ingest", "smtpd", "scheduler", "sweep"):
        assert re.search(rf"^    {verb}\s+\w", overview.stdout.decode(), re.M), verb  # with its summary
    for verb, flags in VERBS.items():
        shown = pbm(*verb, "--help", env=env)
        text = shown.stdout.decode()
        assert shown.returncode == 0 and text.startswith(f"usage: pbm {' '.join(verb)} "), verb
        description = text.split("\n\n")[1]
        assert len(description.split()) >= 3 and description.rstrip().endswith("."), (verb, description)
        for flag in flags:
            line = next(line for line in text.splitlines() if line.strip().startswith(flag))
            explained = line.split(flag, 1)[1].split(None, 1)  # metavar or help, then the help
            assert len(" ".join(explained).split()) >= 2 or flag == "--smtp-port", (verb, line)
    defaults = {"serve": ("default 127.0.0.1", "default 5000", "no SMTP listener"),
                "smtpd": ("default 127.0.0.1", "default 2525")}
    for verb, wanted in defaults.items():
        text = " ".join(pbm(verb, "--help", env=env).stdout.decode().split())
        assert all(w in text for w in wanted), (verb, text)
    ingest = pbm("ingest", "--help", env=env).stdout.decode()
    assert re.search(r"^  0 ", ingest, re.M) and re.search(r"^  75 ", ingest, re.M) and "EX_TEMPFAIL" in ingest


def test_ingest_of_a_file_it_cannot_read_exits_66_with_a_sentence(env, tmp_path):
    for missing in (tmp_path / "no-such.eml", tmp_path):
        result = pbm("ingest", str(missing), env=env)
        assert result.returncode == 66
        assert f"pbm ingest: cannot read {missing}" in result.stderr.decode()
        assert "Traceback" not in result.stderr.decode()


def test_ingest_with_standard_input_closed_exits_66_with_a_sentence(env):
    result = subprocess.run([sys.executable, "-m", "pbm.cli", "ingest"], env=env, capture_output=True, timeout=60,
                            preexec_fn=lambda: os.close(0))  # as `pbm ingest <&-` starts it
    assert result.returncode == 66
    assert result.stderr.decode() == "pbm ingest: standard input is closed: no mail to read; nothing was handled\n"


def test_ingest_of_empty_input_exits_66_with_a_sentence(env, tmp_path):
    empty = tmp_path / "empty.eml"
    empty.write_bytes(b"\n \r\n")
    for result in (pbm("ingest", env=env, stdin=b""), pbm("ingest", str(empty), env=env)):
        assert result.returncode == 66  # not "the message has no sender address": there is no message
        assert result.stderr.decode() == "pbm ingest: the input is empty: no mail to read; nothing was handled\n"


def test_a_setting_pbm_cannot_use_stops_each_command_with_a_sentence(env):
    bad = {**env, "PBM_SMTP_PORT": "abc"}
    sentence = "PBM_SMTP_PORT must be a whole number from 1 to 65535, not 'abc' (set in the environment)."
    for verb in (("sweep",), ("db", "upgrade"), ("serve", "--port", str(free_port())),
                 ("smtpd", "--port", str(free_port()))):
        result = pbm(*verb, env=bad, timeout=30)
        assert result.returncode == 78, verb
        named = " ".join(verb[:2]) if verb[0] == "db" else verb[0]  # the whole command: "pbm db upgrade"
        assert result.stderr.decode() == f"pbm {named}: {sentence}\n", verb
    kept = pbm("ingest", env=bad, stdin=make_mail("alice@players.test", "help"))
    assert kept.returncode == 75  # the MTA keeps the mail until the settings are fixed
    assert sentence in kept.stderr.decode() and "try again later" in kept.stderr.decode()
    loud = pbm("sweep", env={**env, "PBM_LOG_LEVEL": "loud"})
    assert loud.returncode == 78
    assert loud.stderr.decode() == ("pbm: PBM_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, "
                                    "not 'loud' (set in the environment).\n")


@pytest.mark.parametrize("verb", ["serve", "smtpd"])
def test_a_port_out_of_range_is_refused_before_starting(env, verb):
    for flag in (("--port",) if verb == "smtpd" else ("--port", "--smtp-port")):
        result = pbm(verb, flag, "99999", env=env)
        assert result.returncode == 2
        assert f"argument {flag}: must be a port number from 1 to 65535, not '99999'" in result.stderr.decode()


def test_a_settings_file_with_settings_outside_its_pbm_table_is_refused(env, tmp_path):
    config = tmp_path / "pbm.toml"
    config.write_text('smtp_port = 587\n[pbm]\nserver_address = "pbm@pbm.test"\n')
    result = pbm("sweep", env={**env, "PBM_CONFIG": str(config)})
    assert result.returncode == 78
    assert result.stderr.decode() == (f"pbm sweep: The settings file {config} has smtp_port outside its [pbm] table; "
                                      "pbm reads its settings from that table only.\n")


def test_ingest_on_a_database_without_tables_says_to_upgrade_and_keeps_the_mail(env):
    result = pbm("ingest", env=env, stdin=make_mail("alice@players.test", "help"))
    assert result.returncode == 75
    stderr = result.stderr.decode()
    assert "has no tables yet: run `pbm db upgrade` first" in stderr and "the MTA keeps it" in stderr


@pytest.mark.parametrize("verb", ["serve", "smtpd", "scheduler", "sweep"])
def test_a_server_on_a_database_without_tables_says_to_upgrade_and_stops(env, verb):
    result = pbm(verb, *(("--port", str(free_port())) if verb in ("serve", "smtpd") else ()), env=env)
    assert result.returncode == 1
    stderr = result.stderr.decode()
    assert f"pbm {verb}: the database sqlite:///" in stderr
    assert "has no tables yet: run `pbm db upgrade` first (make run does)." in stderr and "Traceback" not in stderr


def test_db_rebuild_on_a_database_without_tables_says_to_upgrade(env):
    result = pbm("db", "rebuild", env=env)
    assert result.returncode == 1
    stderr = result.stderr.decode()
    assert stderr.startswith("pbm db rebuild: the database sqlite:///"), stderr  # not "no such table: board"
    assert "has no tables yet: run `pbm db upgrade` first (make run does)." in stderr and "Traceback" not in stderr


def test_a_server_on_an_older_schema_names_both_and_stops(env, tmp_path):
    from alembic.script import ScriptDirectory

    from pbm.migrate import alembic_config, upgrade

    (tmp_path / "instance").mkdir()
    url = f"sqlite:///{tmp_path / 'instance' / 'pbm.sqlite3'}"
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    older = ScriptDirectory.from_config(alembic_config(url)).get_revision(head).down_revision
    upgrade(url, older)  # the schema before this version's
    result = pbm("serve", "--port", str(free_port()), env=env)
    assert result.returncode == 1
    assert f"has schema {older}, and this version of pbm needs {head}: run `pbm db upgrade` first." in \
        result.stderr.decode()


def test_smtpd_refuses_a_busy_port_with_a_sentence(env):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = pbm("smtpd", "--port", str(port), env=env)
    assert result.returncode == 1
    stderr = result.stderr.decode()
    assert f"pbm smtpd: cannot listen for SMTP on 127.0.0.1:{port}" in stderr
    assert "choose another port with --port." in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("command", [("serve",), ("serve", "--workers", "2"), ("smtpd",)])
@pytest.mark.parametrize("host", ["999.1.1.1", "nonexistent.invalid", "192.0.2.7", "x?y"])
def test_a_host_that_cannot_be_listened_on_is_a_sentence_about_the_host(env, command, host):
    assert pbm("db", "upgrade", env=env).returncode == 0
    result = pbm(*command, "--host", host, "--port", str(free_port()), env=env)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in stderr, stderr
    assert "cannot listen" in stderr and f"{host}:" in stderr
    assert "choose an address of this machine with --host (127.0.0.1 or 0.0.0.0)." in stderr


@pytest.mark.parametrize("command", [("db", "upgrade"), ("db", "rebuild"), ("sweep",)])
def test_a_database_that_cannot_be_reached_is_a_sentence_not_a_traceback(env, command):
    env = {**env, "PBM_DATABASE_URL": f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none"}
    result = pbm(*command, env=env)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"pbm {' '.join(command)}: the database cannot be used (OperationalError: ")
    assert stderr.rstrip().endswith("check that it runs and PBM_DATABASE_URL.")


def test_serve_links_to_the_base_url_of_a_settings_file(env, tmp_path):
    config = tmp_path / "pbm.toml"
    config.write_text('[pbm]\nbase_url = "https://games.example.org"\n')
    env = {**{k: v for k, v in env.items() if k != "PBM_BASE_URL"}, "PBM_CONFIG": str(config)}
    assert pbm("db", "upgrade", env=env).returncode == 0
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--no-scheduler"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2), "pbm serve to start")
        open_a_board(base)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    box = mailbox.Maildir(str(tmp_path / "instance" / "outbox"), create=False)
    board_mail = next(m for m in box if m["Subject"] == "Great Kingdom Board 101 alice")
    assert "https://games.example.org/play/" in board_mail.get_payload(decode=True).decode()


def test_db_upgrade_without_the_checkouts_migrations_says_how_to_install(env, tmp_path):
    """A plain `pip install` copies the package alone: pbm db upgrade says what to do."""
    import shutil

    from pbm.config import PROJECT_ROOT

    installed = tmp_path / "site"
    shutil.copytree(PROJECT_ROOT / "pbm", installed / "pbm", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run([sys.executable, "-m", "pbm.cli", "db", "upgrade"], cwd=tmp_path, capture_output=True,
                            env={**env, "PYTHONPATH": str(installed)}, timeout=60)
    stderr = result.stderr.decode()
    assert result.returncode == 78 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"pbm db upgrade: pbm cannot find its migrations in {installed / 'migrations'}: "
                             "install pbm from its checkout with `pip install -e <checkout>`")


def test_links_point_to_the_machine_s_name_when_serve_listens_on_every_interface():
    import socket

    from pbm.cli_servers import own_address

    assert own_address("0.0.0.0", 5000) == f"http://{socket.getfqdn()}:5000"  # 0.0.0.0 leads nowhere in a mail
    assert own_address("127.0.0.1", 5600) == "http://127.0.0.1:5600"
    assert own_address("::1", 5000) == "http://[::1]:5000"


def test_a_folder_pbm_cannot_make_is_a_setting_not_a_traceback(env, tmp_path):
    """An instance folder (or Maildir, or SQLite file's folder) where a file stands is
    refused at start, as a setting, by every command; ingest keeps the mail."""
    (tmp_path / "afile").write_text("not a folder")
    bad = {**env, "PBM_INSTANCE_PATH": str(tmp_path / "afile")}
    sentence = (f"PBM_INSTANCE_PATH must name a folder pbm can make and write (a file stands where a folder must "
                f"be: '{tmp_path / 'afile'}'; set in the environment).")
    for verb in (("db", "upgrade"), ("serve", "--port", str(free_port())), ("smtpd", "--port", str(free_port())),
                 ("scheduler",), ("sweep",)):
        result = pbm(*verb, env=bad, timeout=30)
        named = " ".join(verb[:2]) if verb[0] == "db" else verb[0]
        assert (result.returncode, result.stderr.decode()) == (78, f"pbm {named}: {sentence}\n"), verb
    kept = pbm("ingest", env=bad, stdin=make_mail("alice@players.test", "help"))
    assert kept.returncode == 75 and sentence in kept.stderr.decode()


def test_ingest_keeps_the_mail_when_the_log_level_is_broken(env):
    kept = pbm("ingest", env={**env, "PBM_LOG_LEVEL": "loud"}, stdin=make_mail("alice@players.test", "help"))
    assert kept.returncode == 75  # 78 would make Postfix bounce the mail
    assert "PBM_LOG_LEVEL must be one of DEBUG" in kept.stderr.decode()


def test_a_database_a_newer_pbm_made_is_named_so_and_left_alone(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    database = tmp_path / "instance" / "pbm.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'deadbeef1234'")
    known = "has a schema this version of pbm does not know (Can't locate revision identified by 'deadbeef1234')"
    upgraded = pbm("db", "upgrade", env=env)
    assert upgraded.returncode == 1 and "Traceback" not in upgraded.stderr.decode()
    assert upgraded.stderr.decode() == (f"pbm db upgrade: the database sqlite:///{database} {known}; it was made by "
                                        "a newer pbm: run that one, or restore a backup.\n")
    served = pbm("serve", "--port", str(free_port()), env=env)
    assert served.returncode == 1 and known in served.stderr.decode() and "run `pbm db upgrade`" not in \
        served.stderr.decode()
    kept = pbm("ingest", env=env, stdin=make_mail("alice@players.test", "signup alice alicepw"))
    assert kept.returncode == 75 and known in kept.stderr.decode()
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT count(*) FROM player").fetchone() == (0,)  # the mail was not handled


def test_the_database_password_is_never_printed(env, postgres_url):
    if postgres_url is None:
        pytest.skip("PostgreSQL lane: no server answers")
    from sqlalchemy.engine import make_url

    with_password = make_url(postgres_url).set(password="s3cretpw").render_as_string(hide_password=False)
    env = {**env, "PBM_DATABASE_URL": with_password}  # the test server trusts every local user
    upgraded = pbm("db", "upgrade", env=env)
    assert upgraded.returncode == 0 and "***" in upgraded.stdout.decode()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--no-scheduler"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        banner = wait_until(lambda: server.stdout.readline().decode() if server.poll() is None else "exited",
                            "the banner's database line", timeout=60)
        while "Database:" not in banner and banner != "exited":
            banner = server.stdout.readline().decode()
        assert "Database:" in banner and "***" in banner
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert "s3cretpw" not in upgraded.stdout.decode() + upgraded.stderr.decode() + banner + out.decode() + err.decode()


def test_serve_on_a_taken_smtp_port_says_one_sentence_and_nothing_more(env):
    assert pbm("db", "upgrade", env=env).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = pbm("serve", "--port", str(free_port()), "--smtp-port", str(port), env=env)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and stderr.startswith(f"pbm serve: cannot listen for SMTP on 127.0.0.1:{port} (")
    assert stderr.count("\n") == 1 and stderr.endswith("choose another port with --smtp-port (make run "
                                                       "SMTP_PORT=...).\n")  # no asyncio noise after it


def test_ctrl_c_while_a_command_starts_ends_it_quietly(env):
    """Ctrl-C before the server is up (the first second of make run: imports, the schema
    check, the listeners) ends pbm with 130 (128 + SIGINT), without a traceback."""
    starting = ("import sys\n"
                "import pbm.cli as cli\n"
                "def serve(args):\n"
                "    raise KeyboardInterrupt\n"
                "cli.cmd_serve = serve\n"
                "sys.exit(cli.main(['serve']))\n")
    done = subprocess.run([sys.executable, "-c", starting], env=env, capture_output=True, timeout=60)
    assert done.returncode == 130 and b"Traceback" not in done.stderr, done.stderr.decode()


def test_the_first_steps_of_make_run_without_swaks_play_a_first_game(env, tmp_path):
    """The README's and make run's curl lines, run as printed against a running server."""
    from pathlib import Path

    assert pbm("db", "upgrade", env=env).returncode == 0
    port = free_port()
    guide = Path(__file__).parent.parent / "deploy" / "first-game.txt"
    server = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--first-steps",
                               str(guide)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        printed = []
        wait_until(lambda: printed.append(server.stdout.readline().decode()) or "the boards are at" in printed[-1],
                   "the first steps", timeout=60)
        text = "".join(printed)
        script = text[text.index("  send() {"):text.index("\nEvery board mail")]
        assert "pbm@pbm.test" in script  # the server's own address, not pbm@localhost
        done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60)
        answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
        assert [a["status"] for a in answers] == ["applied"] * 5, answers
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)


def test_upgrades_started_together_on_postgresql_run_one_after_the_other(env):
    from .conftest import empty_postgres_database

    with empty_postgres_database("pbm_upgrade") as url:
        if url is None:
            pytest.skip("PostgreSQL lane: no server answers")
        env = {**env, "PBM_DATABASE_URL": url}
        started = [subprocess.Popen([sys.executable, "-m", "pbm.cli", "db", "upgrade"], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
        ended = [(process.wait(timeout=120), process.stderr.read().decode()) for process in started]
        for process in started:
            process.stdout.close()
            process.stderr.close()
        assert ended == [(0, "")] * 3


@pytest.mark.parametrize("workers", ["0", "abc", "-2"])
def test_gunicorn_refuses_a_number_of_workers_that_serves_nobody(env, workers):
    from pathlib import Path

    conf = Path(__file__).parent.parent / "deploy" / "gunicorn.conf.py"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    result = subprocess.run([str(gunicorn), "-c", str(conf), "pbm:create_app()"], capture_output=True, timeout=60,
                            env={**env, "PBM_WORKERS": workers, "PBM_BIND": f"127.0.0.1:{free_port()}"})
    assert result.returncode == 78
    assert result.stderr.decode().endswith(f"pbm (gunicorn): PBM_WORKERS must be a whole number from 1 to 1000, not "
                                           f"{workers!r} (set in the environment).\n")


@pytest.mark.parametrize("verb", [("sweep",), ("db", "upgrade"), ("serve",), ("ingest",)])
def test_an_unknown_option_is_answered_with_the_usage_of_the_verb_given(env, verb):
    result = pbm(*verb, "--bogus", env=env)
    named = " ".join(verb)
    assert result.returncode == 2
    assert result.stderr.decode().startswith(f"usage: pbm {named} [-h]")
    assert result.stderr.decode().endswith(f"pbm {named}: error: unrecognized arguments: --bogus\n")


FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "games.example.org"}


def through_proxy(base: str, path: str, client: str, form: dict | None = None):
    """``path`` asked as a reverse proxy asks it for ``client`` (X-Forwarded-*): the answer's
    status and headers."""
    request = urllib.request.Request(base + path, headers={**FORWARDED, "X-Forwarded-For": client},
                                     data=urllib.parse.urlencode(form).encode() if form else None)
    opener = urllib.request.build_opener(NoRedirects)
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, answer.headers
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.mark.parametrize("trusted, workers", [(True, 1), (False, 1), (True, 2)])
def test_serve_trusts_the_forwarded_headers_of_the_trusted_proxy_only(env, trusted, workers):
    """Behind an HTTPS reverse proxy (PBM_TRUSTED_PROXY, its address), a page asked over
    https sets Secure cookies and Strict-Transport-Security, and each client counts
    as itself for the /new quota; without the setting, anyone's X-Forwarded-* is ignored.
    With ``--workers 2`` each worker trusts the proxy too (and counts its own quota)."""
    env = {**env, "PBM_NEW_GAMES_PER_HOUR": "1", **({"PBM_TRUSTED_PROXY": "127.0.0.1"} if trusted else {})}
    assert pbm("db", "upgrade", env=env).returncode == 0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port), "--no-scheduler",
                                "--workers", str(workers)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2), "pbm serve to start")
        status, headers = through_proxy(base, "/new", "203.0.113.5")
        assert status == 200
        cookie = headers["Set-Cookie"]
        assert cookie.startswith("pbm_form=") and ("; Secure" in cookie) == trusted
        assert ("Strict-Transport-Security" in headers) == trusted
        if workers > 1:
            return
        game = {"game": "go", "mode": "same-device"}
        assert through_proxy(base, "/new", "203.0.113.5", game)[0] == 303
        assert through_proxy(base, "/new", "203.0.113.5", game)[0] == 429
        assert through_proxy(base, "/new", "203.0.113.6", game)[0] == (303 if trusted else 429)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
