"""What a reply move costs before any of pbm's own code runs: the floors under
``make bench``'s moves per second, on this machine.

Part of ``make bench``. Three figures, each CPU time (user + system) per unit:

- HTTP: waitress (as ``pbm serve`` runs it, 8 threads) answering a bare WSGI
  application, and a one-route Flask application, that read the body of a
  reply mail and answer a line of JSON; 4 clients on kept connections, as the
  throughput benchmark drives the webhook;
- mail out: pbm's own Maildir transport writing a board mail (into ``tmp/``,
  flushed to disk, renamed into ``new/``, the directory flushed once a move), as
  the delivery thread does for each of the two board mails of a move;
- the budget: the CPU time one move may cost in all, server and clients, for
  500 moves a second on this machine's cores, and what these floors leave of it.

Run: ``.venv/bin/python benchmarks/floors.py [--requests 1500]``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from run import free_port, mail, process_tree_cpu, scratch_dir  # noqa: E402  (the throughput benchmark beside this file)

CLIENTS = 4
TARGET_MOVES_PER_SECOND = 500  # issue 14's reply path
REPLY = mail("pa@bench.test", "pbm+101.abcdefghijklmnopqrst@bench.test", "Re: Great Kingdom Board 101", "E5")
ANSWER = b'{"board": 101, "status": "applied"}'


def bare_wsgi(environ, start_response):
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(ANSWER)))])
    return [ANSWER]


def bare_flask():
    from flask import Flask, request

    app = Flask("floor")

    @app.post("/inbound/email")
    def inbound_email():
        request.get_data()
        return app.response_class(ANSWER, mimetype="application/json")

    return app


def serve(kind: str, port: int) -> None:
    """The server process of one HTTP floor (``--serve``)."""
    from waitress import serve as waitress_serve

    waitress_serve(bare_wsgi if kind == "wsgi" else bare_flask(), host="127.0.0.1", port=port, threads=8,
                   _quiet=True)


def http_floor(kind: str, requests: int) -> tuple[float, float]:
    """(requests a second, server CPU ms a request) of ``kind``'s server under CLIENTS clients."""
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", kind, str(port)])
    try:
        for _ in range(600):
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                probe.request("POST", "/inbound/email", body=REPLY)
                probe.getresponse().read()
                probe.close()
                break
            except OSError:
                time.sleep(0.05)
        failures = []

        def client():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for _ in range(requests // CLIENTS):
                connection.request("POST", "/inbound/email", body=REPLY, headers={"Content-Type": "message/rfc822"})
                response = connection.getresponse()
                if response.read() != ANSWER:
                    failures.append(response.status)
            connection.close()

        before, start = process_tree_cpu(server.pid), time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds, cpu = time.perf_counter() - start, process_tree_cpu(server.pid) - before
        if failures:
            raise SystemExit(f"{kind}: {len(failures)} wrong answers, e.g. HTTP {failures[0]}")
        done = requests // CLIENTS * CLIENTS
        return done / seconds, cpu / done * 1000
    finally:
        server.terminate()
        server.wait(timeout=30)


def maildir_floor(moves: int) -> float:
    """CPU ms per mail of the Maildir transport, two board mails a move, one batch a move."""
    from pbm.config import load_settings
    from pbm.mail.transport import MaildirTransport

    with scratch_dir() as tmp:
        settings = load_settings({"maildir": f"{tmp}/outbox", "mail_backend": "maildir",
                                  "database_url": f"sqlite:///{tmp}/unused.sqlite3"})
        board_mail = (b"Subject: Great Kingdom Board 101\r\n\r\n" + b" 9 . . . O . . X . .\r\n" * 200)[:2900]  # a board mail's size
        before = resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(moves):
            transport = MaildirTransport(settings)
            for _ in range(2):
                transport.send("pbm@bench.test", "pa@bench.test", board_mail)
            transport.close()
        after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / (2 * moves) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--serve", nargs=2, metavar=("KIND", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    cores = os.cpu_count() or 1
    print(f"Floors under a reply move on this machine ({cores} cores): CPU time that comes before any of "
          "pbm's code, per unit")
    floors = {}
    for kind, label in (("wsgi", "waitress, bare WSGI app"), ("flask", "waitress, one-route Flask app")):
        rate, cpu = http_floor(kind, args.requests)
        floors[kind] = cpu
        print(f"  HTTP: {label:<30} {cpu:6.3f} ms a request   ({rate:,.0f} requests/s, {CLIENTS} clients)")
    per_mail = maildir_floor(args.requests // 4)
    print(f"  mail out: Maildir, one board mail     {per_mail:6.3f} ms a mail      (two a move)")
    budget = cores * 1000 / TARGET_MOVES_PER_SECOND
    floor = floors["flask"] + 2 * per_mail
    print(f"  budget for {TARGET_MOVES_PER_SECOND} moves/s: {budget:.2f} ms of CPU a move in all (server and "
          f"clients); these floors take {floor:.2f} ms of it, leaving {budget - floor:.2f} ms for parsing the "
          "mail, the rules, SQL and composing the mails")


if __name__ == "__main__":
    main()
