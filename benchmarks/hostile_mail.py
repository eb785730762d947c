"""Hostile mail against the mail reader: how long ``parse_mail`` plus
``visible_reply`` and ``split_command`` take on crafted inputs of up to
10 MB (the server's message limit), and how much memory they need.

Each case runs in its own child process with a time and memory limit, so a
case that blows up is reported as such instead of taking the machine down.
Prints one line per case, worst first. A figure, not a pass/fail test.

    .venv/bin/python benchmarks/hostile_mail.py [--limit-seconds 60] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import base64
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MB = 1024 * 1024
SIZE = 10 * MB - 4096  # under the server's 10 MB limit, headers included
HEAD = b"From: mallory@players.test\nTo: pbm+101.abcdefghij@pbm.test\nSubject: Re: Go Board 101 bob\n"


def _plain(body: bytes, headers: bytes = b"") -> bytes:
    return HEAD + headers + b"Content-Type: text/plain; charset=utf-8\n\n" + body


def _html(body: bytes) -> bytes:
    return HEAD + b"Content-Type: text/html; charset=utf-8\n\n" + body


def _fill(unit: bytes, size: int = SIZE) -> bytes:
    return unit * (size // len(unit))


def _nested_parts(depth: int) -> bytes:
    opening = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (i, i) for i in range(depth))
    closing = b"".join(b"\n--b%d--\n" % i for i in reversed(range(depth)))
    return HEAD + opening + b"Content-Type: text/plain\n\nD4\n" + closing


CASES = {
    # the probe of issue 10: nested blockquotes multiplied every line by its depth
    "html nested blockquote 208 KiB": lambda: _html(_fill(b"<blockquote>x\n", 208 * 1024)),
    "html nested blockquote 10 MB": lambda: _html(_fill(b"<blockquote>x\n")),
    "html nested blockquote, one line": lambda: _html(_fill(b"<blockquote>x")),
    "html many breaks": lambda: _html(_fill(b"<br>")),
    "html unterminated tag": lambda: _html(b"D4<a " + _fill(b"x")),
    "html unterminated comment": lambda: _html(b"D4<!-- " + _fill(b"x")),
    "html entities": lambda: _html(_fill(b"&amp;")),
    "plain one 10 MB line": lambda: _plain(_fill(b"a")),
    "plain one 10 MB line of words": lambda: _plain(_fill(b"ab ")),
    "plain short lines": lambda: _plain(_fill(b"x\n")),
    "plain blank lines": lambda: _plain(b"D4" + _fill(b"\n")),
    "plain quoted lines": lambda: _plain(_fill(b"> x\n")),
    "plain 'On ...' lines": lambda: _plain(_fill(b"On " + b"x " * 400 + b"\n")),
    "plain one 'On ...' line": lambda: _plain(b"On " + _fill(b"x ")),
    "plain 'From:' lines": lambda: _plain(_fill(b"From: x\n")),
    "plain 'Le ...' lines": lambda: _plain(_fill(b"Le " + b"x " * 400 + b"\n")),
    "plain signature dashes": lambda: _plain(_fill(b"-- \n")),
    "plain 'Am ...' line": lambda: _plain(b"Am " + _fill(b"x ")),
    "plain underscores": lambda: _plain(_fill(b"x" + b"_" * 40 + b"\n")),
    "base64 body": lambda: _plain(base64.encodebytes(_fill(b"ab ", SIZE * 3 // 4 - 200_000)),
                                  b"Content-Transfer-Encoding: base64\n"),
    "subject 10 MB": lambda: HEAD.replace(b"Subject: Re:", b"Subject: " + _fill(b"a ") + b"Re:") + b"\nD4\n",
    "subject encoded words": lambda: HEAD.replace(b"Subject: Re:", b"Subject: " + _fill(b"=?utf-8?q?a?= ")
                                                  + b"Re:") + b"\nD4\n",
    "to: many addresses": lambda: HEAD + b"Cc: " + _fill(b"a@b.test, ") + b"\n\nD4\n",
    "many headers": lambda: _fill(b"X-Junk: y\n") + HEAD + b"\nD4\n",
    "nested multipart 2000 deep": lambda: _nested_parts(2000),
    "many parts": lambda: HEAD + b"Content-Type: multipart/mixed; boundary=b\n\n"
                          + _fill(b"--b\nContent-Type: text/plain\n\nx\n") + b"--b--\n",
}


def run_case(name: str) -> dict:
    """In the child: build the input, then time reading it."""
    from pbm.mail.inbound import MalformedMail, parse_mail
    from pbm.mail.replies import split_command, visible_reply

    raw = CASES[name]()
    start = time.perf_counter()
    outcome = "read"
    try:
        mail = parse_mail(raw)
        line, comment = split_command(visible_reply(mail.body))
        if getattr(mail, "too_large", False):
            outcome = "too large"
        detail = f"line {len(line)} chars, comment {len(comment)} chars"
    except MalformedMail as error:
        outcome, detail = "MalformedMail", str(error)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"name": name, "bytes": len(raw), "seconds": seconds, "peak_bytes": peak,
            "outcome": outcome, "detail": detail}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit-seconds", type=float, default=60.0)
    parser.add_argument("--limit-memory-mb", type=int, default=4096)
    parser.add_argument("--only", nargs="*", default=None, help="case names (default: all)")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child's entry point
    args = parser.parse_args()
    if args.case:
        limit = args.limit_memory_mb * MB
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        print(json.dumps(run_case(args.case)))
        return
    results = []
    for name in args.only or CASES:
        try:
            child = subprocess.run([sys.executable, __file__, "--case", name,
                                    "--limit-memory-mb", str(args.limit_memory_mb)],
                                   capture_output=True, text=True, timeout=args.limit_seconds)
            if child.returncode == 0:
                results.append(json.loads(child.stdout))
            else:
                last = (child.stderr.strip().splitlines() or ["no output"])[-1]
                results.append({"name": name, "seconds": float("inf"), "outcome": "crashed", "detail": last})
        except subprocess.TimeoutExpired:
            results.append({"name": name, "seconds": float("inf"), "outcome": "timeout",
                            "detail": f"over {args.limit_seconds:.0f} s"})
        print(f"  ran {name}", file=sys.stderr, flush=True)
    results.sort(key=lambda r: r["seconds"], reverse=True)
    print(f"{'case':36} {'input':>9} {'seconds':>8} {'peak MB':>8}  outcome")
    for r in results:
        size = f"{r['bytes'] / MB:.2f} MB" if "bytes" in r else "-"
        peak = f"{r['peak_bytes'] / MB:.0f}" if "peak_bytes" in r else "-"
        print(f"{r['name']:36} {size:>9} {r['seconds']:8.3f} {peak:>8}  {r['outcome']}: {r['detail']}")


if __name__ == "__main__":
    main()
