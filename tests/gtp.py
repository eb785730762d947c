"""A small GTP client for GNU Go, the independent Go engine the Go rules are checked against."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"
GNUGO_ARGS = ["--mode", "gtp", "--chinese-rules", "--positional-superko", "--forbid-suicide"]


def gnugo_available() -> bool:
    return Path(GNUGO).exists()


class GnuGo:
    def __init__(self, size: int, komi: float = 7.5):
        self.process = subprocess.Popen([GNUGO, *GNUGO_ARGS, "--komi", str(komi)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send(f"boardsize {size}")
        self.send("clear_board")
        self.send(f"komi {komi}")

    def send(self, command: str) -> str:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            if line == "":
                raise RuntimeError(f"gnugo exited on {command!r}")
            if line.strip() == "" and lines:
                break
            if line.strip():
                lines.append(line.strip())
        answer = " ".join(lines)
        if answer.startswith("?"):
            raise ValueError(f"gnugo refused {command!r}: {answer}")
        return answer[1:].strip()

    def close(self) -> None:
        try:
            self.send("quit")
        except (RuntimeError, ValueError, BrokenPipeError):
            pass
        self.process.wait(timeout=10)
