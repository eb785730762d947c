"""The command language: pbmserv wording, abbreviations, #n, options."""

import pytest

from pbm.commands import Command, CommandError, parse_command


@pytest.mark.parametrize("line, expected", [
    ("help", Command("help")),
    ("greatkingdom help", Command("help", game="greatkingdom")),
    ("Great", Command("help", game="greatkingdom")),
    ("signup Alice SeCret", Command("signup", userid="alice", password="SeCret")),
    ("signup alice pw a@b.test", Command("signup", userid="alice", password="pw", args=("a@b.test",))),
    ("change password alice old new", Command("change_password", userid="alice", password="old",
                                              args=("new",))),
    ("change address alice pw new@x.test", Command("change_address", userid="alice", password="pw",
                                                   args=("new@x.test",))),
    ("greatkingdom move 101 alice pw D4", Command("move", game="greatkingdom", board=101, userid="alice",
                                                  password="pw", move="D4")),
    ("gr mo 101 alice pw d4#7", Command("move", game="greatkingdom", board=101, userid="alice",
                                        password="pw", move="d4", number=7)),
    ("greatkingdom move 101 alice pw mark D4 #12", Command("move", game="greatkingdom", board=101,
                                                           userid="alice", password="pw", move="mark D4",
                                                           number=12)),
    ("greatkingdom resign 101 alice pw", Command("move", game="greatkingdom", board=101, userid="alice",
                                                 password="pw", move="resign")),
    ("greatkingdom show 101#3", Command("show", game="greatkingdom", board=101, number=3)),
    ("greatkingdom history 101", Command("history", game="greatkingdom", board=101)),
    ("greatkingdom games bob", Command("games", game="greatkingdom", userid="bob", args=("all",))),
    ("greatkingdom games bob next", Command("games", game="greatkingdom", userid="bob", args=("next",))),
    ("go games active", Command("games", game="go", args=("active",))),
    ("greatkingdom list", Command("games", game="greatkingdom", args=("all",))),
    ("GREATKINGDOM CHALLENGE alice bob@x.test -size=7 --nagtime=2 --expiretime=5",
     Command("challenge", game="greatkingdom", args=("alice", "bob@x.test"), options={"size": "7"},
             timing={"nagtime": 2.0, "expiretime": 5.0})),
])
def test_commands_parse(line, expected):
    assert parse_command(line) == expected


@pytest.mark.parametrize("line, reason", [
    ("", "no command"),
    ("frobnicate", "neither a command nor a game"),
    ("greatkingdom dance", "not a greatkingdom command"),
    ("greatkingdom move 101 alice pw", "needs more words"),
    ("greatkingdom move abc alice pw D4", "not a board number"),
    ("greatkingdom challenge alice", "exactly two players"),
    ("greatkingdom challenge alice bob --nagtime=soon", "number of days"),
    ("greatkingdom challenge alice bob --color=red", "not a server option"),
    ("h", "'h' could be help or history: write more of it."),
])
def test_bad_commands_get_a_sentence_and_usage(line, reason):
    with pytest.raises(CommandError, match=reason) as error:
        parse_command(line)
    assert error.value.usage
