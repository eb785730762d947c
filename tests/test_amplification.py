"""What one mail, and one address, can cause is bounded (issue 10.6)."""

from dataclasses import replace

import pytest

from pbm.service.handlers import MAX_BOARDS_PER_MAIL, MAX_INVITATIONS_PER_DAY, MAX_INVITED_BOARDS_PER_DAY
from pbm.service.letters import MAX_ANSWERS_PER_MAIL

from .conftest import body

ANSWERS_PER_HOUR, BOARDS_PER_HOUR = 40, 20  # the settings, lowered so that a test reaches them soon


@pytest.fixture
def low_limits(server):
    server.settings = replace(server.settings, answers_per_hour=ANSWERS_PER_HOUR, boards_per_hour=BOARDS_PER_HOUR)

ALICE, VICTIM = "alice@players.test", "victim@elsewhere.test"


def test_one_mail_gets_at_most_a_few_answers(players, outbox):
    outbox.new()
    assert players.send(VICTIM, "multiple", "help\n" * 50).status == "applied"
    assert len(outbox.to(VICTIM)) == MAX_ANSWERS_PER_MAIL


def test_one_address_gets_at_most_so_many_answers_an_hour(low_limits, players, outbox, caplog):
    for n in range(ANSWERS_PER_HOUR + 5):  # an auto-responder that does not say it is one
        players.send(VICTIM, "Re: your mail", f"I am away (message {n}).")
    assert len(outbox.to(VICTIM)) == ANSWERS_PER_HOUR
    held = [r.getMessage() for r in caplog.records if r.name == "pbm.service.letters"]
    assert held == [f"no answer to {VICTIM}: {ANSWERS_PER_HOUR} mails from that address in the last hour, "
                    "the most answered"] * 5  # the operator sees why, once a mail


def test_one_mail_invites_one_stranger(players, outbox):
    lines = "\n".join(f"greatkingdom challenge alice stranger{n}@elsewhere.test" for n in range(5))
    players.send(ALICE, "multiple", lines)
    invited = [m for m in outbox.all() if m["To"].addresses[0].addr_spec.startswith("stranger")]
    assert len(invited) == 1
    # the four refusals come in one mail (mails of one second arrive in any order)
    refusals, = (body(m) for m in outbox.to(ALICE) if "One mail may invite one new player" in body(m))
    assert refusals.count("One mail may invite one new player") == 4
    assert "4 commands of your mail were refused:" in refusals
    assert "greatkingdom challenge alice stranger3@elsewhere.test" in refusals


def test_a_forged_multiple_mail_causes_one_error_mail(players, outbox):
    """Whoever forged the victim's address, however many refused lines: one mail."""
    lines = "\n".join(f"greatkingdom move 101 alice guess{n} D4" for n in range(20))
    assert players.send(VICTIM, "multiple", lines).status == "rejected"
    answers = outbox.to(VICTIM)
    assert len(answers) == 1 and answers[0]["Subject"] == "pbm error"
    assert "20 commands of your mail were refused:" in body(answers[0])


def test_one_mail_starts_a_few_boards(players, outbox):
    lines = "\n".join("greatkingdom challenge alice bob" for _ in range(MAX_BOARDS_PER_MAIL + 2))
    result = players.send(ALICE, "multiple", lines)
    assert f"One mail may start at most {MAX_BOARDS_PER_MAIL} boards." in result.error
    players.send(ALICE, "greatkingdom games alice")
    assert body(outbox.to(ALICE)[-1]).count("greatkingdom") == MAX_BOARDS_PER_MAIL


def test_many_challengers_together_cannot_flood_an_invited_address(players, outbox):
    """Each challenger is within its own limits; the invited address has its own."""
    for n in range(MAX_INVITED_BOARDS_PER_DAY + 2):
        players.send(f"att{n}@evil.test", f"signup att{n} pw-att{n}")
    results = [players.send(f"att{n}@evil.test", f"greatkingdom challenge att{n} {VICTIM}")
               for n in range(MAX_INVITED_BOARDS_PER_DAY + 2)]
    assert [r.status for r in results] == ["applied"] * MAX_INVITED_BOARDS_PER_DAY + ["rejected"] * 2
    assert results[-1].error.startswith(f"{VICTIM} was invited to {MAX_INVITED_BOARDS_PER_DAY} games in the last day "
                                        "and has not answered yet, the most allowed; try again tomorrow.")
    assert len(outbox.to(VICTIM)) == MAX_INVITED_BOARDS_PER_DAY
    invited = VICTIM.split("@")[0]  # the userid the invitation gave the address
    by_userid = players.send("bob@players.test", f"greatkingdom challenge bob {invited}")
    assert by_userid.error.startswith(f"{invited} was invited to {MAX_INVITED_BOARDS_PER_DAY} games in the last day")
    assert VICTIM not in by_userid.error  # bob never typed the address: the refusal does not tell it him



def test_the_tag_spellings_of_one_inbox_are_one_invited_address(players, outbox):
    """victim+1@, victim+2@ ... reach one inbox: the day's invitations count for it."""
    local, domain = VICTIM.split("@")
    players.send("eve@evil.test", "signup eve evepw")
    results = [players.send("eve@evil.test", f"greatkingdom challenge eve {local}+{n}@{domain}")
               for n in range(MAX_INVITED_BOARDS_PER_DAY + 2)]
    assert [r.status for r in results] == ["applied"] * MAX_INVITED_BOARDS_PER_DAY + ["rejected"] * 2
    assert results[-1].error.startswith(f"{local}+{MAX_INVITED_BOARDS_PER_DAY + 1}@{domain} was invited to "
                                        f"{MAX_INVITED_BOARDS_PER_DAY} games in the last day")
    reached = [m for m in outbox.all() if m["To"].addresses[0].domain == domain]
    assert len(reached) == MAX_INVITED_BOARDS_PER_DAY
    assert players.send("eve@evil.test", f"greatkingdom challenge eve other@{domain}").status == "applied"

def test_a_player_is_seated_at_a_few_new_boards_an_hour_whoever_challenges(low_limits, players, outbox):
    for n in range(BOARDS_PER_HOUR + 1):
        players.send(f"att{n}@evil.test", f"signup att{n} pw-att{n}")
    results = [players.send(f"att{n}@evil.test", f"greatkingdom challenge att{n} bob")
               for n in range(BOARDS_PER_HOUR + 1)]
    assert [r.status for r in results[:-1]] == ["applied"] * BOARDS_PER_HOUR
    assert results[-1].error.startswith(f"bob was seated at {BOARDS_PER_HOUR} new boards in the last hour")


def test_a_long_history_mail_lists_the_last_moves_and_links_the_record(players, outbox, monkeypatch):
    from pbm.service import queries

    monkeypatch.setattr(queries, "HISTORY_MOVES", 6)  # the mail's limit, small enough to reach quickly
    players.send(ALICE, "go challenge alice bob")
    for n in range(1, 9):  # passes cost nothing to play; two in a row open scoring, so resume
        who, pw = ("alice", "alicepw") if n % 2 else ("bob", "bobpw")
        players.send(f"{who}@players.test", f"go move 101 {who} {pw} pass")
        if n % 2 == 0:
            players.send(f"{who}@players.test", f"go move 101 {who} {pw} resume")
    players.send("watcher@players.test", "go history 101")
    history = body(outbox.to("watcher@players.test")[-1])
    assert "moves are left out here; the whole record is at" in " ".join(history.split())
    assert "http://pbm.test/games/101.txt" in history
    assert history.count(" pass") + history.count(" resume") == 6


def test_an_error_mail_quotes_a_bounded_part_of_the_mail(players, outbox):
    """The refused mail is quoted, but at most about 60 lines of it, however long its
    lines: an error mail to a forged sender is never the forger's 100 KB."""
    from pbm.mail.inbound import MAX_BODY_CHARS

    for text in ("x" * (MAX_BODY_CHARS + 1), "word " * 19_000, "x" * 90_000):
        players.send(VICTIM, "frobnicate", text)
        answer = body(outbox.to(VICTIM)[-1])
        quoted = [line for line in answer.split("\n") if line.startswith(">")]
        assert 1 <= len(quoted) <= 61 and quoted[-1] == "> [...]"
        assert len(answer.encode()) < 8_000


@pytest.mark.parametrize("command", ["signup zed zedpw9 {stranger}", "add alice alicepw {stranger}",
                                     "greatkingdom challenge alice {stranger}"])
def test_an_address_over_its_hourly_mails_asks_no_stranger(low_limits, players, outbox, command):
    """Confirmations and invitations go to addresses nobody has answered from: an address
    that sent more than the hour's mails gets no answers, and makes the server mail no
    stranger either (each mail of a flood would mail another one)."""
    for n in range(ANSWERS_PER_HOUR):
        players.send(ALICE, "help")
    stranger = "stranger@elsewhere.test"
    result = players.send(ALICE, command.format(stranger=stranger))
    assert result.status == "rejected"
    assert result.error.startswith(f"You sent more than {ANSWERS_PER_HOUR} mails in the last hour; try again later.")
    assert outbox.to(stranger) == []


def test_one_account_invites_a_few_strangers_a_day(players, outbox):
    """One invitation a mail, but not one with every mail: a player invites at most so
    many addresses a day that have not answered; a further challenge to one of them,
    and to a player with an account, still starts a board."""
    results = [players.send(ALICE, f"greatkingdom challenge alice stranger{n}@elsewhere.test")
               for n in range(MAX_INVITATIONS_PER_DAY + 1)]
    assert [r.status for r in results] == ["applied"] * MAX_INVITATIONS_PER_DAY + ["rejected"]
    assert results[-1].error.startswith(f"alice has invited {MAX_INVITATIONS_PER_DAY} new players in the last day "
                                        "who have not answered yet, the most allowed; try again tomorrow.")
    reached = {m["To"].addresses[0].addr_spec for m in outbox.all() if m["To"].addresses[0].domain == "elsewhere.test"}
    assert len(reached) == MAX_INVITATIONS_PER_DAY
    assert players.send(ALICE, "greatkingdom challenge alice stranger0@elsewhere.test").status == "applied"
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    players.send("stranger1@elsewhere.test", "signup carol carolpw")  # one has answered: room for another
    assert players.send(ALICE, "greatkingdom challenge alice late@elsewhere.test").status == "applied"


def test_a_long_games_list_lists_the_newest_boards_and_links_the_rest(players, outbox, monkeypatch):
    """One short mail ("go list") must not be answered with every board the server has."""
    from pbm.service import queries

    monkeypatch.setattr(queries, "LISTED_BOARDS", 3)  # the mail's limit, small enough to reach quickly
    players.send(ALICE, "multiple", "greatkingdom challenge alice bob\n" * 5)  # boards 101 to 105
    players.send("watcher@players.test", "greatkingdom games alice")
    listed = body(outbox.to("watcher@players.test")[-1])
    assert [n for n in range(101, 106) if f"  {n}  " in f" {listed}"] == [103, 104, 105]
    assert "The 2 oldest boards are left out here; all of them are listed at" in " ".join(listed.split())
    assert "http://pbm.test/?game=greatkingdom&player=alice" in listed
    players.send("watcher@players.test", "list")  # every board of every game: the same limit
    listed = body(outbox.to("watcher@players.test")[-1])
    assert [n for n in range(101, 106) if f"  {n}  " in f" {listed}"] == [103, 104, 105]
    assert "http://pbm.test/\n" in listed + "\n"
