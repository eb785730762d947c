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
    ("go show 101 #3", Command("show", game="go", board=101, number=3)),  # spaced, as "D4 #12" may be
    ("go show 101 # 3", Command("show", game="go", board=101, number=3)),
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
    ("greatkingdom show 101#99999999999999999999", r"\"#99999999999999999999\" is not a move number .*101#12"),
    ("greatkingdom show 101#x", "\"#x\" is not a move number"),
    ("greatkingdom challenge alice", "exactly two players"),
    ("greatkingdom challenge alice bob --nagtime=soon", "number of days"),
    ("greatkingdom challenge alice bob --color=red", "not a server option"),
    ("h", "\"h\" could be help or history: write more of it."),
    # A word too many may be a slip (which board? which address?): refused, never dropped.
    ("go resign 113 bob secret2 extra", "The resign command takes no more words than that."),
    ("signup zed pass4 zed@example.com extra", "The signup command takes no more words than that."),
    ("signoff bob secret2 now", "The signoff command takes no more words than that."),
    ("change password bob old new extra", "The change command takes no more words than that."),
    ("language bob pw de please", "The language command takes no more words than that."),
    ("go show 101 102", "The show command takes no more words than that."),
    ("go chat 101 bob pw hello there", "The chat command takes no more words than that."),
    ("vacation bob pw 5 days", "The vacation command takes no more words than that."),
    ("help go extra", "The help command takes no more words than that."),
    ("go help extra", "The help command takes no more words than that."),
    ("go standings extra", "The standings command takes no more words than that."),
    ("go games alice next extra", "The games command takes no more words than that."),  # not '"next" is neither'
    ("all show alice next extra", "The all show command takes no more words than that."),
    ("help gox", "\"gox\" is neither a command nor a game; games are "),
    ("go challenge alice bob --e=3 -=9", "\"-=9\" names no option: write the option's name after the dash"),
    ("go challenge alice bob --=3", "\"--=3\" names no option"),
])
def test_bad_commands_get_a_sentence_and_usage(line, reason):
    with pytest.raises(CommandError, match=reason) as error:
        parse_command(line)
    assert error.value.usage


# Abbreviations (pbmserv): a prefix stands for the one word it begins; a prefix of
# several is refused with every candidate named; words that cannot be taken back
# are written in full.

@pytest.mark.parametrize("line, candidates", [
    ("s 101", "\"s\" could be show, signoff, or signup: write more of it."),
    ("si alice pw", "\"si\" could be signoff or signup: write more of it."),
    ("l", "\"l\" could be language or list: write more of it."),
    ("g", "\"g\" could be games, go, or greatkingdom: write more of it."),
    ("t", "\"t\" could be twodragons or twotigers: write more of it."),
    ("m 101", "\"m\" could be message, move, or multiple: write more of it."),
    ("go c alice bob", "\"c\" could be challenge, chat, or confirm: write more of it."),
    ("go s 101", "\"s\" could be show, standings, submit, or subscribe: write more of it."),
    ("go r 101 alice pw", "\"r\" could be ratings, reject, or resign: write more of it."),
    ("go re 101 alice pw", "\"re\" could be reject or resign: write more of it."),
    ("go l", "\"l\" could be limit or list: write more of it."),
    ("go su 101 alice pw", "\"su\" could be submit or subscribe: write more of it."),
])
def test_an_ambiguous_prefix_is_refused_with_the_candidates_named(line, candidates):
    with pytest.raises(CommandError) as error:
        parse_command(line)
    assert str(error.value) == candidates


@pytest.mark.parametrize("line, expected", [
    ("c password alice old new", Command("change_password", userid="alice", password="old", args=("new",))),
    ("sh 101", Command("show", board=101)),
    ("signu alice pw", Command("signup", userid="alice", password="pw")),
    ("la alice pw de", Command("language", userid="alice", password="pw", args=("de",))),
    ("li", Command("games", args=("all",))),
    ("ga bob next", Command("games", userid="bob", args=("next",))),
    ("gr", Command("help", game="greatkingdom")),
    ("go chal alice bob", Command("challenge", game="go", args=("alice", "bob"))),
    ("go chat 101 alice pw", Command("chat", game="go", board=101, userid="alice", password="pw")),
    ("go co 101 alice pw", Command("confirm", game="go", board=101, userid="alice", password="pw")),
    ("go sh 101", Command("show", game="go", board=101)),
    ("go st", Command("standings", game="go")),
    ("go subm 101 alice pw D4", Command("submit", game="go", board=101, userid="alice", password="pw",
                                        move="D4")),
    ("go subs 101 alice pw", Command("subscribe", game="go", board=101, userid="alice", password="pw")),
    ("go ra", Command("standings", game="go")),
    ("go rej alice pw", Command("reject", game="go", userid="alice", password="pw")),
    ("go lim alice pw 2", Command("limit", game="go", userid="alice", password="pw", args=("2",))),
    ("go lis", Command("games", game="go", args=("all",))),
    ("go challenge alice bob -si=13 -k=0.5 --nag=2 --exp=5",
     Command("challenge", game="go", args=("alice", "bob"), options={"size": "13", "komi": "0.5"},
             timing={"nagtime": 2.0, "expiretime": 5.0})),
    ("dragons challenge alice bob -t --forf=3",
     Command("challenge", game="dragons", args=("alice", "bob"), options={"tantrix": ""},  # bare: the game reads it as true
             timing={"expiretime": 3.0})),
])
def test_a_prefix_of_one_word_stands_for_it(line, expected):
    assert parse_command(line) == expected


@pytest.mark.parametrize("line, short, word", [
    ("signof alice pw", "signof", "signoff"),
    ("go res 101 alice pw", "res", "resign"),
    ("resig 101 alice pw", "resig", "resign"),
])
def test_words_that_cannot_be_taken_back_are_never_abbreviated(line, short, word):
    with pytest.raises(CommandError) as error:
        parse_command(line)
    assert str(error.value) == f"\"{short}\" would be {word}, which is written in full: it cannot be taken back."
    assert parse_command(line.replace(short, word, 1)).verb in ("signoff", "move")


@pytest.mark.parametrize("line, usage", [
    ("go r 101 alice pw", "<game> standings   or   <game> ratings   or   <game> reject <userid> <password>   or   "
                          "<game> resign <board> <userid> <password>"),  # ratings is standings
    ("go games alice a", "<game> games [<userid>] [next | active | all]"),  # a filter, not the command "all"
    ("all show alice a", "all show <userid> [next | active]"),
    ("t", "twodragons help   or   twotigers help"),  # a game's help shows how to play it
])
def test_an_ambiguous_word_is_answered_with_the_forms_it_could_stand_in(line, usage):
    with pytest.raises(CommandError) as error:
        parse_command(line)
    assert str(error.value.usage) == usage


def test_the_ambiguity_sentence_and_its_usage_name_the_candidates_in_the_readers_language():
    from pbm import i18n

    with pytest.raises(CommandError) as error:
        parse_command("go re 101 alice pw")
    assert str(error.value.usage) == "<game> reject <userid> <password>   or   <game> resign <board> <userid> <password>"
    with i18n.language("de"):
        assert str(error.value) == "\"re\" könnte reject oder resign heißen: schreib mehr davon."


@pytest.mark.parametrize("line, stored", [
    ("signo alice secret1", "signo alice ********"),  # refused (in full), yet never stored with its password
    ("go res 101 alice secret1", "go res 101 alice ********"),
    ("go re 101 alice secret1", "go re 101 alice ********"),  # reject or resign: each reading is redacted
    ("si alice secret1", "si alice ********"),
    ("ch pa alice old1 new1", "ch pa alice ******** ********"),
    ("go mo 101 alice secret1 D4", "go mo 101 alice ******** D4"),
])
def test_a_refused_abbreviation_is_stored_without_its_password(line, stored):
    from pbm.command_passwords import redact

    assert redact(line) == stored


@pytest.mark.parametrize("line, stored", [
    ('"signoff alice secret1"', "signoff alice ********"),  # read without its quotes: the last word is the password
    ("\u201cchange password alice old1 new1\u201d", "change password alice ******** ********"),
    ('"go move 101 alice secret1 D4"', "go move 101 alice ******** D4"),
])
def test_a_quoted_command_line_is_stored_without_its_password(line, stored):
    from pbm.command_passwords import redact

    assert redact(line) == stored


@pytest.mark.parametrize("typed, shown", [
    ("drago\u202ens", "drago\ufffdns"),  # a character that turns the text around is shown as U+FFFD
    ("go\x1b[31m", "go\ufffd[31m"),  # so is a control (a terminal's colour escape)
    ("dragons\\\\", "dragons\\\\"),  # backslashes as typed, not doubled
    ("o'clo\"ck", "o'clo\"ck"),  # quotes of both kinds as typed, the sentence's stay double
])
def test_a_word_a_refusal_repeats_is_shown_as_typed_in_double_quotes(typed, shown):
    with pytest.raises(CommandError) as error:
        parse_command(f"{typed} show 101")
    assert str(error.value).startswith(f"\"{shown}\" is neither a command nor a game; games are ")


@pytest.mark.parametrize("days", ["0", "-1", "366", "1e-320", "5e-324", "1e-12"])
def test_a_deadline_the_clock_reads_as_no_time_at_all_is_refused(days):
    # 1e-12 days is 86 nanoseconds: the clock's microseconds read it as 0, a board expired at its start
    with pytest.raises(CommandError, match="--expiretime must be more than 0 and at most 365 days."):
        parse_command(f"go challenge alice bob --expiretime={days}")
    assert parse_command("go challenge alice bob --expiretime=0.00001").timing == {"expiretime": 0.00001}
