"""The real mail tier: players' mail goes through a real Postfix, whose pipe
transport from ``deploy/postfix/`` hands each message to ``pbm ingest``; pbm's
own mail goes out through the same Postfix as its SMTP relay, on to the
players' mail server (an aiosmtpd relay here). When ``pbm ingest`` exits 75
(the database cannot be reached) Postfix keeps the message in its deferred
queue and delivers it on its next try. The test asks for that try at once
(``postqueue -f``, as an operator would after mending the database): Postfix
3.7's own deferred-queue scan, even at a one-second delay, was seen to leave
a message that came back from the pipe while a scan ran waiting far longer
than a test should wait.

What it needs: Debian's ``postfix`` package (skipped, saying so, without it)
and root, to start Postfix. Postfix runs from a private configuration
directory (``postfix -c DIR``) with its own queue, data directory and log,
listening on a free port of 127.0.0.1 and relaying everything to the test's
relay: it neither needs nor touches the system's Postfix. The pipe runs
``pbm ingest`` as ``nobody``; when that user cannot start this test's Python
(a Python under /root), the system's Python of the same version runs it with
the project's packages on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import smtplib
import socket
import subprocess
import sys
import sysconfig
import tempfile
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from .conftest import free_port, wait_until
from .test_transport import RecordingRelay

POSTFIX = shutil.which("postfix") or "/usr/sbin/postfix"
ROOT = Path(__file__).resolve().parents[1]
PIPE_USER = "nobody"
ALICE, BOB = "alice@players.test", "bob@players.test"

pytestmark = pytest.mark.skipif(not os.path.exists(POSTFIX),
                                reason="Debian's postfix is not installed (apt-get install postfix)")

# The private instance: everything Postfix writes stays under DIR; mail for
# other domains goes to the players' relay; a deferred mail is tried again
# within a second or two instead of minutes.
MAIN_CF = """\
compatibility_level = 3.6
queue_directory = {dir}/queue
data_directory = {dir}/data
maillog_file = {dir}/maillog
maillog_file_prefixes = {dir}
myhostname = postfix.pbm.test
mydestination =
alias_maps =
alias_database =
local_recipient_maps =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
smtpd_peername_lookup = no
relayhost = [127.0.0.1]:{relay_port}
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
"""

MASTER_CF = """\
127.0.0.1:{port} inet n - n - - smtpd
cleanup   unix  n - n - 0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n - - trivial-rewrite
bounce    unix  - - n - 0 bounce
defer     unix  - - n - 0 bounce
trace     unix  - - n - 0 bounce
verify    unix  - - n - 1 verify
proxymap  unix  - - n - - proxymap
smtp      unix  - - n - - smtp
relay     unix  - - n - - smtp
showq     unix  n - n - - showq
error     unix  - - n - - error
retry     unix  - - n - - error
discard   unix  - - n - - discard
anvil     unix  - - n - 1 anvil
scache    unix  - - n - 1 scache
flush     unix  n - n 1000? 0 flush
pickup    unix  n - n 60 1 pickup
postlog   unix-dgram n - n - 1 postlogd
"""


def imports_pbm(python: str, env: dict | None = None) -> subprocess.CompletedProcess | None:
    """Whether PIPE_USER can start ``python`` and import pbm (None: it cannot even start it)."""
    try:
        return subprocess.run([python, "-c", "import pbm.cli"], user=PIPE_USER, capture_output=True, env=env)
    except PermissionError:
        return None


def ingest_argv(config: Path) -> str:
    """The command the pipe runs (as PIPE_USER): ``pbm ingest`` with this test's pbm."""
    env = f"/usr/bin/env PBM_CONFIG={config}"
    done = imports_pbm(sys.executable)
    if done and done.returncode == 0:
        return f"{env} {sys.executable} -m pbm.cli ingest"
    system_python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    path = f"{ROOT}:{sysconfig.get_paths()['purelib']}"
    done = imports_pbm(system_python, {"PYTHONPATH": path})
    assert done and done.returncode == 0, (f"{PIPE_USER} can start neither {sys.executable} nor {system_python} "
                                           f"with pbm: {done and done.stderr.decode()[-300:]}")
    return f"{env} PYTHONPATH={path} {system_python} -m pbm.cli ingest"


class PrivatePostfix:
    """A Postfix of its own under a fresh directory (world-readable: Postfix's
    daemons and the pipe user must reach it), configured from ``deploy/postfix/``
    for the domain pbm.test, relaying other mail to ``relay_port``."""

    def __init__(self, relay_port: int):
        self.dir = Path(tempfile.mkdtemp(prefix="pbm-postfix-"))
        self.dir.chmod(0o755)
        self.port = free_port()
        self.pbm_dir = self.dir / "pbm"  # what pbm ingest reads and writes, owned by the pipe user
        for sub in ("etc", "queue", "data", "pbm"):
            (self.dir / sub).mkdir()
        shutil.chown(self.dir / "data", "postfix")
        shutil.chown(self.pbm_dir, PIPE_USER)
        self.pbm_config = self.pbm_dir / "pbm.toml"
        try:
            self._configure(relay_port)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _configure(self, relay_port: int) -> None:
        """Postfix's main.cf and master.cf: the private instance, plus pbm's part from deploy/."""
        deploy_main = (ROOT / "deploy/postfix/main.cf").read_text().replace("games.example.org", "pbm.test")
        (self.dir / "etc/main.cf").write_text(MAIN_CF.format(dir=self.dir, relay_port=relay_port) + deploy_main)
        deploy_master = (ROOT / "deploy/postfix/master.cf").read_text()
        assert "user=pbm argv=" in deploy_master
        deploy_master = re.sub(r"user=pbm argv=.*", f"user={PIPE_USER} argv={ingest_argv(self.pbm_config)}",
                               deploy_master)
        (self.dir / "etc/master.cf").write_text(MASTER_CF.format(port=self.port) + deploy_master)

    def start(self) -> None:
        started = subprocess.run([POSTFIX, "-c", str(self.dir / "etc"), "start"], capture_output=True, text=True)
        assert started.returncode == 0, started.stderr
        wait_until(lambda: socket.create_connection(("127.0.0.1", self.port), timeout=1).close() or True,
                   "Postfix to listen")

    def stop(self) -> None:
        pid_file = self.dir / "queue/pid/master.pid"
        if pid_file.exists():
            master = pid_file.read_text().strip()
            subprocess.run([POSTFIX, "-c", str(self.dir / "etc"), "stop"], capture_output=True)
            wait_until(lambda: not os.path.exists(f"/proc/{master}"), "Postfix to stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def configure_pbm(self, database_url: str) -> None:
        """What ``pbm ingest`` reads at its next start (PBM_CONFIG): the database,
        and this Postfix as the relay for pbm's own mail."""
        self.pbm_config.write_text(
            f'[pbm]\ndatabase_url = "{database_url}"\nserver_address = "pbm@pbm.test"\n'
            f'base_url = "http://pbm.test"\ninstance_path = "{self.pbm_dir}"\nmail_backend = "smtp"\n'
            f'smtp_host = "127.0.0.1"\nsmtp_port = {self.port}\n')
        self.pbm_config.chmod(0o644)

    def retry_now(self) -> None:
        """Ask Postfix to try its deferred mail again now (``postqueue -f``), as an
        operator would, rather than wait for its next scan of the deferred queue."""
        subprocess.run([shutil.which("postqueue") or "/usr/sbin/postqueue", "-c", str(self.dir / "etc"), "-f"],
                       check=True, capture_output=True)

    def pipe_deliveries(self, status: str) -> list[str]:
        """The log lines of the pipe to pbm ending with ``status`` (sent, deferred, bounced)."""
        log = self.dir / "maillog"
        lines = log.read_text().splitlines() if log.exists() else []
        return [line for line in lines if "relay=pbm," in line and f"status={status}" in line]

    def send(self, sender: str, recipient: str, subject: str, text: str = "") -> None:
        """A player's mail, handed to this Postfix over SMTP."""
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, recipient, subject
        message["Message-ID"] = make_msgid(domain="players.test")
        message.set_content(text or "\n")
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.send_message(message)


@pytest.fixture
def players_relay():
    """The players' mail server, where Postfix delivers everything pbm sends."""
    with RecordingRelay() as relay:
        yield relay


@pytest.fixture
def postfix(players_relay):
    if os.geteuid() != 0:
        pytest.fail("starting a private Postfix needs root (CI runs as root)")
    instance = PrivatePostfix(players_relay.port)
    try:
        instance.start()
        yield instance
    finally:
        instance.stop()


@pytest.fixture
def pbm_database(database_url, postfix) -> str:
    """The test's database as the pipe user can open it: a SQLite file is copied
    into the pipe user's directory; PostgreSQL is reached over TCP."""
    if not database_url.startswith("sqlite"):
        return database_url
    path = postfix.pbm_dir / "pbm.sqlite3"
    shutil.copy(make_url(database_url).database, path)
    shutil.chown(path, PIPE_USER)
    return f"sqlite:///{path}"


def delivered(relay: RecordingRelay, recipient: str, subject: str):
    return [m for m in relay.messages() if m["To"].addresses[0].addr_spec == recipient and m["Subject"] == subject]


def through(postfix, condition, what: str):
    """``wait_until`` for mail passing through Postfix and pbm: a failure shows the
    end of Postfix's log (the pipe's exit, the relay's answers), so that a slow or
    lost delivery can be told apart."""
    try:
        return wait_until(condition, what)
    except AssertionError as failure:
        log = postfix.dir / "maillog"
        tail = "\n".join(log.read_text().splitlines()[-30:]) if log.exists() else "(no log)"
        raise AssertionError(f"{failure}\nthe end of Postfix's log:\n{tail}") from None


def test_mail_goes_through_postfix_to_pbm_ingest_and_pbm_answers_through_postfix(
        postfix, players_relay, pbm_database):
    postfix.configure_pbm(f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none")  # no database there
    postfix.send(ALICE, "pbm@pbm.test", "signup alice alicepw")
    through(postfix, lambda: postfix.pipe_deliveries("deferred"),
            "Postfix to keep the mail pbm ingest could not take")
    assert "temporary failure" in postfix.pipe_deliveries("deferred")[0]
    assert players_relay.accepted == [] and postfix.pipe_deliveries("sent") == []

    postfix.configure_pbm(pbm_database)  # the database is back: Postfix's next try gets through
    postfix.retry_now()
    through(postfix, lambda: delivered(players_relay, ALICE, "pbm signup"),
            "alice's welcome, after Postfix retried")
    postfix.send(BOB, "pbm@pbm.test", "signup bob bobpw")
    through(postfix, lambda: delivered(players_relay, BOB, "pbm signup"), "bob's welcome")
    postfix.send(ALICE, "pbm@pbm.test", "greatkingdom challenge alice bob")
    board = through(postfix, lambda: delivered(players_relay, ALICE, "Great Kingdom Board 101 alice"),
                    "the new board")[0]
    reply_to = board["Reply-To"].addresses[0].addr_spec
    assert reply_to.startswith("pbm+101.") and reply_to.endswith("@pbm.test")

    postfix.send(ALICE, reply_to, "Re: Great Kingdom Board 101 alice", "D4\n")  # replying is playing
    through(postfix, lambda: delivered(players_relay, BOB, "Great Kingdom Board 101 bob"),
            "bob's board after alice's move")

    # Each mail went to pbm ingest until it took it (Postfix logs it once pbm ingest has exited).
    through(postfix, lambda: len(postfix.pipe_deliveries("sent")) == 4, "Postfix to log the fourth delivery to pbm")
    assert postfix.pipe_deliveries("bounced") == []
    assert [len(delivered(players_relay, ALICE, "pbm signup")), len(delivered(players_relay, BOB, "pbm signup"))] == [1, 1]
    for message in players_relay.messages():  # pbm's mail went out through Postfix
        assert "postfix.pbm.test" in str(message["Received"])
