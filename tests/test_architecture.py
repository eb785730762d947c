"""Imports point inward: game rules stay pure (no web, database, mail, clock or global random)."""

import ast
from pathlib import Path

import pbm.games

FORBIDDEN_MODULES = {"flask", "sqlmodel", "sqlalchemy", "smtplib", "email", "apscheduler", "random"}


def test_game_modules_are_pure():
    for path in Path(pbm.games.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                names = []
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN_MODULES, f"{path.name} imports {name}"
            if isinstance(node, ast.Attribute) and node.attr in ("now", "utcnow", "today"):
                raise AssertionError(f"{path.name} reads the clock")


def test_every_refusal_a_mail_can_get_says_what_to_send_instead():
    """interface.md: an error mail gives the reason, then what to send instead. Every
    PlayerError the service raises names it (``usage``), except those of the pages'
    own forms (``service.rooms``), which show the form again instead."""
    service = Path(pbm.games.__file__).parent.parent / "service"
    bare = []
    for path in sorted(service.glob("*.py")):
        if path.name == "rooms.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "PlayerError" \
                    and len(node.args) < 2 and not any(keyword.arg == "usage" for keyword in node.keywords):
                bare.append(f"{path.name}:{node.lineno}")
    assert bare == []
