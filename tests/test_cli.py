"""The ``pbm`` command line, run as a real process."""

import json
import mailbox
import os
import signal
import smtplib
import sqlite3
import subprocess
import sys
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
    assert b"try again later" in result.stderr


def test_ingest_of_a_mail_without_sender_exits_0_and_says_why(env):
    assert pbm("db", "upgrade", env=env).returncode == 0
    result = pbm("ingest", env=env, stdin=b"Subject: help\n\nhello\n")
    assert result.returncode == 0 and b"no sender" in result.stderr


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


def test_serve_links_to_its_own_port_refuses_a_busy_port_and_stops_quietly(env, tmp_path):
    assert pbm("db", "upgrade", env=env).returncode == 0
    env = {k: v for k, v in env.items() if k != "PBM_BASE_URL"}
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "pbm.cli", "serve", "--port", str(port)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2), "pbm serve to start")
        for raw in (make_mail("alice@players.test", "signup alice alicepw"),
                    make_mail("bob@players.test", "signup bob bobpw"),
                    make_mail("alice@players.test", "greatkingdom challenge alice bob")):
            request = urllib.request.Request(base + "/inbound/email", data=raw,
                                             headers={"Content-Type": "message/rfc822"})
            urllib.request.urlopen(request, timeout=30).read()
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
