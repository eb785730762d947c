"""The last places where a German reader (``language ... de``, or a browser asking
for German) met English: the diagrams' legends and Go's capture line, Go's
result, the mails about an account's addresses, the invitation mailed from
``/new``, the board picture's words, and the server's own error pages."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import pytest

from pbm import i18n
from pbm import gamewords
from pbm.gamewords import game_sentence
from pbm.games import REGISTRY, get_game
from pbm.db import reading
from pbm.models import Board
from pbm.render import board_svg

from .conftest import body
from .test_i18n import ALICE, BOB, ENGLISH, GERMAN, shown

SVG = "{http://www.w3.org/2000/svg}"
WORK = "alice@work.test"


def flat(message) -> str:
    return " ".join(body(message).split())


def to(message) -> str:
    return message["To"].addresses[0].addr_spec


def reply_to(message) -> str:
    return message["Reply-To"].addresses[0].addr_spec


def positions(game, games: int = 4, moves: int = 120):
    """States along a few seeded random games (Go on to its scoring and end)."""
    for seed in range(games):
        rnd = random.Random(seed)
        state = game.initial_state(game.parse_options({}))
        for _ in range(moves):
            yield state
            legal = game.legal_moves(state)
            if not legal:
                break
            actors = game.actors(state)
            state = game.apply(state, actors[0] if len(actors) == 1 else rnd.choice(actors), rnd.choice(legal))


# -- 1. the diagrams' legends --------------------------------------------------------


def test_a_go_diagram_keeps_its_drawing_and_speaks_german_beneath_it():
    go = get_game("go")
    start = go.initial_state({"size": 9})
    state = go.apply(start, 0, go.parse_move("E5", start))
    english = go.diagram(state)
    with i18n.language("de"):
        german = game_sentence(english)
    assert english.split("\n")[-2:] == ["X Black  O White  (X) the last move",
                                        "Captured so far: by Black 0, by White 0"]
    assert german.split("\n")[-2:] == ["X Schwarz  O Weiß  (X) der letzte Zug",
                                       "Bisher geschlagen: von Schwarz 0, von Weiß 0"]
    assert german.split("\n")[:-2] == english.split("\n")[:-2]  # the drawing: byte for byte
    with i18n.language("en"):
        assert game_sentence(english) == english


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_games_legend_is_german_for_a_german_reader(name):
    """Whatever the position (last move, dead stones, areas, destroyed castles, gaps,
    legal points): the drawing stays as it is, no legend line stays English, and
    the German lines fit a mail (78 characters)."""
    game = get_game(name)
    english_words = re.compile(r"the last move|last move|Captured|castle|dead|area|goat|tiger|edge colours|"
                               r"must be filled|where the player|Playable cells|Black|White")
    seen = 0
    for state in positions(game):
        for legal in (False, True):
            english = game.diagram(state, legal=legal)
            with i18n.language("de"):
                german = game_sentence(english)
            assert german != english, name
            assert not english_words.search(german), german
            assert all(len(line) <= 78 for line in german.split("\n")), german
            drawing = [line for line in english.split("\n") if line in german.split("\n")]
            assert len(drawing) >= len(english.split("\n")) - (3 if name == "dragons" else 2)
            seen += 1
    assert seen > 100


def test_a_german_players_board_mail_help_and_pages_show_the_legend_in_german(players, outbox, app):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "go challenge alice bob")
    players.send(ALICE, "go move 101 alice alicepw D4")
    mails = {to(m): body(m) for m in outbox.new()[-2:]}
    assert "X Schwarz  O Weiß  (X) der letzte Zug" in mails[ALICE]
    assert "Bisher geschlagen: von Schwarz 0, von Weiß 0" in mails[ALICE]
    assert "X Black  O White  (X) the last move" in mails[BOB]  # bob reads English
    assert "Captured so far: by Black 0, by White 0" in mails[BOB]

    players.send(ALICE, "go help")
    assert "X Schwarz  O Weiß  (X) der letzte Zug" in body(outbox.new()[-1])
    players.send(ALICE, "go preview 101 E5")
    assert "Bisher geschlagen: von Schwarz 0, von Weiß 0" in body(outbox.new()[-1])

    client = app.test_client()
    assert "Bisher geschlagen: von Schwarz 0" in client.get("/games/101.txt", headers=GERMAN).get_data(as_text=True)
    assert "Captured so far: by Black 0" in client.get("/games/101.txt", headers=ENGLISH).get_data(as_text=True)
    page = client.get("/games/101", headers=GERMAN).get_data(as_text=True)
    assert "X Schwarz  O Weiß  (X) der letzte Zug" in re.search(r'<pre class="diagram">(.*?)</pre>', page, re.S)[1]


# -- 2. Go's result ---------------------------------------------------------------


def test_gos_result_names_the_sides_in_the_readers_language(players, outbox, app):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "go challenge alice bob")
    for sender, move in ((ALICE, "pass"), (BOB, "pass"), (ALICE, "done"), (BOB, "done")):
        assert players.send(sender, f"go move 101 {sender.split('@')[0]} {sender.split('@')[0]}pw {move}").status \
            == "applied"
    mails = {to(m): flat(m) for m in outbox.new()[-2:]}
    assert "W+7.5 (Schwarz 0, Weiß 7,5)." in mails[ALICE]
    assert "W+7.5 (Black 0, White 7.5)." in mails[BOB]
    page = shown(app.test_client().get("/games/101", headers=GERMAN))
    assert any("W+7.5 (Schwarz 0, Weiß 7,5)." in text for text in page.texts)


def test_every_games_count_is_translated_and_keeps_its_figures():
    with i18n.language("de"):
        # the figures as German writes them; SGF's result stays as it is
        assert gamewords.score_text(get_game("go"), "B+2.5 (Black 41, White 38.5)") == "B+2.5 (Schwarz 41, Weiß 38,5)"
        assert gamewords.score_text(get_game("go"), "Black 40, White 40, draw") == "Schwarz 40, Weiß 40, unentschieden"
        assert gamewords.score_text(get_game("greatkingdom"), "Blue 9, Orange 4") == "Blau 9, Orange 4"
        assert gamewords.score_text(get_game("twodragons"), "White 12, Black 9") == "Weiß 12, Schwarz 9"
        assert gamewords.score_text(get_game("dragons"), "O 7, X 5") == "O 7, X 5"
    assert gamewords.score_text(get_game("go"), "W+7.5 (Black 0, White 7.5)") == "W+7.5 (Black 0, White 7.5)"


# -- 3. the mails about an account's addresses -----------------------------------------


def test_a_games_options_are_described_and_refused_in_german(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "go help")
    help_text = flat(outbox.new()[-1])
    assert "-size: Brettgröße, 9 13 19 (Standard 9)" in help_text
    assert re.search(r"-komi: .*, -100 bis 100 \(Standard 7.5\)", help_text)
    assert "(default" not in help_text
    players.send(ALICE, "dragons help")
    assert re.search(r"-tantrix: .*, true oder false \(Standard false\)", flat(outbox.new()[-1]))
    players.send(ALICE, "go challenge alice bob -size=7")
    assert "-size muss 9, 13 oder 19 sein, nicht \"7\"." in flat(outbox.new()[-1])
    players.send(ALICE, "twotigers challenge alice bob -x=1")
    assert "(Optionen: keine)" in flat(outbox.new()[-1])


def test_a_games_reason_with_figures_is_german_and_survives_the_database(players, outbox, app):
    """A reason such as "territory after two passes (Blue needs 3 more)" keeps its
    figures apart in the stored outcome, so a German reader gets it in German."""
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "greatkingdom challenge alice bob")
    for sender, move in ((ALICE, "D4"), (BOB, "pass"), (ALICE, "pass")):
        userid = "alice" if sender == ALICE else "bob"
        assert players.send(sender, f"greatkingdom move 101 {userid} {userid}pw {move}").status == "applied"
    mails = {to(m): flat(m) for m in outbox.new()[-2:]}
    assert "Gebiet nach zweimal Passen (Blau braucht 3 mehr)" in mails[ALICE]
    assert "Territory after two passes (Blue needs 3 more)" in mails[BOB]
    page = app.test_client().get("/games/101", headers=GERMAN).get_data(as_text=True)
    assert "Gebiet nach zweimal Passen (Blau braucht 3 mehr)" in page


def test_every_games_reason_with_figures_has_its_german():
    from pbm.games.base import GameText, Outcome

    for reason in (GameText("a loop of %(count)s %(colour)s tiles", count=7, colour="X"),
                   GameText("siege: %(side)s destroyed %(castles)s", side="Orange", castles="D4, E5"),
                   GameText("only %(count)s goats are left, too few to trap the tigers", count=6)):
        stored = Outcome.from_json(Outcome(0, reason, kind="loop").to_json())
        assert stored.reason == reason and stored.to_json()["reason"] == str(reason)
        with i18n.language("de"):
            german = gamewords.reason_text(REGISTRY["dragons"], stored)
        assert german != str(reason) and not re.search(r"\b(of|tiles|destroyed|goats|left)\b", german), german
    old = Outcome.from_json({"winner": 0, "reason": "a loop of 7 X tiles", "score": None, "kind": "loop"})
    assert old.reason == "a loop of 7 X tiles"  # a board ended before: as it was stored


def test_add_and_its_confirmation_speak_the_accounts_language(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    assert players.send(ALICE, f"add alice alicepw {WORK}").status == "applied"
    ask = outbox.to(WORK)[-1]
    assert ask["Subject"] == f"pbm: bitte {WORK} bestätigen"
    assert outbox.to(ALICE)[-1]["Subject"] == f"pbm: Bestätigung an {WORK} geschickt"
    assert players.send(WORK, "Re: confirm", "yes", to=reply_to(ask)).status == "applied"
    added = outbox.new()[-2:]
    assert {to(m) for m in added} == {ALICE, WORK}
    assert [m["Subject"] for m in added] == ["pbm: Adresse hinzugefügt"] * 2
    # what the account's added address is answered is in the account's language too
    players.send(WORK, "go show abc")
    assert "\"abc\" ist keine Brettnummer" in flat(outbox.to(WORK)[-1])


def test_add_from_the_new_address_itself_is_answered_in_the_accounts_language(players, outbox):
    """A From proves nothing, so the address confirms by a reply even then."""
    players.send(ALICE, "language alice alicepw de")
    outbox.new()
    assert players.send(WORK, "add alice alicepw alice@work.test").status == "applied"
    [ask] = outbox.new()
    assert to(ask) == WORK and ask["Subject"] == "pbm: bitte alice@work.test bestätigen"
    assert players.send(WORK, "Re: x", "yes", to=reply_to(ask)).status == "applied"
    assert [m["Subject"] for m in outbox.new()[-2:]] == ["pbm: Adresse hinzugefügt"] * 2


def test_change_address_and_its_confirmation_speak_the_accounts_language(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "change address alice alicepw alice@new.test")
    ask = outbox.to("alice@new.test")[-1]
    assert ask["Subject"] == "pbm: bitte alice@new.test bestätigen"
    assert "Jemand möchte das pbm-Konto alice auf diese Adresse umziehen." in flat(ask)
    assert players.send("alice@new.test", "Re: x", "yes", to=reply_to(ask)).status == "applied"
    changed = outbox.new()[-2:]
    assert {to(m) for m in changed} == {ALICE, "alice@new.test"}
    assert [m["Subject"] for m in changed] == ["pbm: Adresse geändert"] * 2


def test_the_signoff_mail_speaks_the_accounts_language(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "signoff alice alicepw")
    assert outbox.to(ALICE)[-1]["Subject"] == "pbm: Konto alice geschlossen"


# -- 4. the invitation from /new ----------------------------------------------------


def test_the_invitation_mail_speaks_the_language_of_the_page_the_host_used(players, outbox, app):
    players.send(ALICE, "language alice alicepw de")  # the address's account is not asked
    outbox.new()
    german = app.test_client().post("/new", headers=GERMAN, data={"game": "go", "mode": "friend",
                                                                   "email": "host@players.test"})
    assert german.status_code == 303
    mail = outbox.new()[-1]
    assert to(mail) == "host@players.test" and mail["Subject"] == "Go Brett 101: dein Einladungslink"
    assert "Du hast eine Partie Go mit einem Freund begonnen (Brett 101)." in flat(mail)
    english = app.test_client().post("/new", headers=ENGLISH, data={"game": "go", "mode": "friend", "email": ALICE})
    assert english.status_code == 303
    mail = outbox.new()[-1]
    assert to(mail) == ALICE and mail["Subject"] == "Go Board 102: your invitation link"
    assert "You started a game of Go to play with a friend (board 102)." in flat(mail)


# -- 5. the board picture's words -------------------------------------------------------


def picture_words(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [root.get("aria-label"), root.find(SVG + "title").text] + \
        [e.text for e in root.iter(SVG + "text") if "caption" in (e.get("class") or "")]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_board_pictures_title_and_captions_are_german_on_a_german_page(name):
    game = get_game(name)
    for number, state in enumerate(positions(game, games=1, moves=40)):
        if number == 0 and name != "dragons":
            continue  # an empty board: nothing to compare but the numbers
        english = picture_words(board_svg(name, state, move_number=number, last_move=None))
        with i18n.language("de"):
            german = picture_words(board_svg(name, state, move_number=number, last_move=None))
        assert len(german) == len(english) >= 3, name
        for de, en in zip(german, english):
            assert de != en, (name, de)


def test_the_board_picture_on_a_german_page_says_the_last_move_in_german(players, app):
    players.send(ALICE, "go challenge alice bob")
    players.send(ALICE, "go move 101 alice alicepw D4")
    page = app.test_client().get("/games/101", headers=GERMAN).get_data(as_text=True)
    title = re.search(r"<svg[^>]*>\s*<title>([^<]*)</title>", page)[1]
    assert title == "Go 9x9 nach Zug 1: Steine 1 schwarz, 0 weiß; letzter Zug D4"
    assert "Geschlagen von Schwarz 0, von Weiß 0" in page


# -- 6. the server's own error pages ---------------------------------------------------------


def test_an_unknown_address_is_a_page_in_the_requests_language(client):
    german = client.get("/no/such/page", headers=GERMAN)
    assert german.status_code == 404 and german.mimetype == "text/html"
    assert shown(german).language == "de"
    assert "Unter dieser Adresse gibt es keine Seite; prüfe sie oder fang bei der Liste aller Bretter an." \
        in shown(german).texts
    assert "requested URL" not in german.get_data(as_text=True)
    english = client.get("/no/such/page", headers=ENGLISH)
    assert "There is no page at this address; check it, or start from the list of all boards." \
        in shown(english).texts


def test_a_method_a_route_does_not_take_is_405_in_the_requests_language(client):
    answer = client.post("/healthz", headers=GERMAN)
    assert answer.status_code == 405 and "GET" in answer.headers["Allow"]
    assert "Diese Adresse beantwortet keine POST-Anfragen." in shown(answer).texts
    assert "This address does not answer POST requests." in shown(client.post("/healthz", headers=ENGLISH)).texts


def test_json_text_and_the_webhook_keep_their_own_forms(client):
    missing = client.get("/games/nothing.json", headers=GERMAN)
    assert missing.status_code == 404 and missing.json == {
        "status": "error",
        "error": "Unter dieser Adresse gibt es keine Seite; prüfe sie oder fang bei der Liste aller Bretter an."}
    text = client.get("/games/nothing.txt", headers=GERMAN)
    assert text.status_code == 404 and text.mimetype == "text/plain"
    assert text.get_data(as_text=True).startswith("Unter dieser Adresse gibt es keine Seite")
    webhook = client.get("/inbound/email", headers=GERMAN)  # mail systems are answered in English
    assert webhook.status_code == 405 and webhook.json == {
        "status": "error", "error": "This address does not answer GET requests."}
    assert "POST" in webhook.headers["Allow"]
    assert client.get("/games/9999", headers=GERMAN).status_code == 404  # a route's own sentence stays
    assert "Es gibt kein Brett 9999." in shown(client.get("/games/9999", headers=GERMAN)).texts


def test_the_standings_mail_heads_its_columns_in_the_readers_language(players, outbox):
    assert players.send(ALICE, "language alice alicepw de").status == "applied"
    assert players.send(ALICE, "greatkingdom challenge alice bob").status == "applied"
    assert players.send(BOB, "greatkingdom resign 101 bob bobpw").status == "applied"
    assert players.send(ALICE, "greatkingdom standings").status == "applied"
    table = body(outbox.to(ALICE)[-1])
    head = next(line for line in table.splitlines() if "Spieler" in line)
    assert head.split() == ["Spieler", "Wertung", "Spiele", "gew.", "verl.", "Remis"]
    row = next(line for line in table.splitlines() if " alice " in line)
    assert len(row) == len(head)  # the columns stay aligned


def test_the_english_welcome_tells_a_german_newcomer_how_to_get_german(players, outbox):
    players.send("hans@players.test", "signup hans geheim1")
    welcome = body(outbox.to("hans@players.test")[-1])
    assert "Mails auf Deutsch: language hans <Passwort> de" in welcome


def test_a_refused_decline_tells_a_german_player_the_move_word_to_send(players, outbox):
    """"resign" is the move a German player sends too; its German word ("aufgegeben")
    only names it in the move list."""
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "greatkingdom challenge alice bob")
    refused = players.send(ALICE, "greatkingdom move 101 alice alicepw decline")
    assert refused.status == "rejected"
    said = " ".join(body(outbox.to(ALICE)[-1]).split())
    assert "Sende stattdessen: resign" in said and "aufgegeben" not in said


def test_a_german_error_mail_quotes_the_mail_under_the_german_word_for_subject(players, outbox):
    players.send(BOB, "language bob bobpw de")
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    assert players.send(BOB, "greatkingdom move 101 bob bobpw Z9").status == "rejected"
    error = body(outbox.to(BOB)[-1])
    assert "Deine Nachricht war:\n> Betreff: greatkingdom move 101 bob bobpw Z9" in error  # to its sender only
    assert "Subject:" not in error


# -- 7. what a German reader still met in English forms (the probe of 2026-12) ---------------


def test_the_count_of_a_boards_watchers_is_a_german_sentence(players, outbox, app):
    """"Watched by 1" counts, it names nobody: in German the count takes its noun,
    singular or plural (dative), in the show mail and on the board's page."""
    for userid in ("carol", "dave"):
        players.send(f"{userid}@players.test", f"signup {userid} {userid}pw")
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send("carol@players.test", "greatkingdom subscribe 101 carol carolpw")
    players.send(ALICE, "greatkingdom show 101")
    assert "Beobachtet von 1 Spieler." in body(outbox.new()[-1])
    page = app.test_client().get("/games/101", headers=GERMAN).get_data(as_text=True)
    assert 'data-watchers="1">Beobachtet von 1 Spieler</p>' in page
    players.send("dave@players.test", "greatkingdom subscribe 101 dave davepw")
    players.send(ALICE, "greatkingdom show 101")
    assert "Beobachtet von 2 Spielern." in body(outbox.new()[-1])
    page = app.test_client().get("/games/101", headers=GERMAN).get_data(as_text=True)
    assert 'data-watchers="2">Beobachtet von 2 Spielern</p>' in page
    players.send(BOB, "greatkingdom show 101")  # bob reads English, as before
    assert "Watched by 2." in body(outbox.new()[-1])


def test_two_tigers_sides_are_plural_and_the_reasons_never_decline_them_wrongly(players, outbox, server):
    """The Two Tigers sides are plurals (die Ziegen, die Tiger): "Zeitüberschreitung von
    Ziegen" or "Absage von Tiger" is broken German; the reasons name the side in
    brackets, as "Aufgabe (Ziegen)" does."""
    from datetime import timedelta

    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "twotigers challenge alice bob")
    players.send(BOB, "twotigers move 101 bob bobpw decline")
    declined = flat(outbox.to(ALICE)[-1])
    assert "Partie abgebrochen: Absage (Tiger) vor dem ersten Zug." in declined
    players.send(ALICE, "twotigers challenge alice bob")
    players.send(ALICE, "twotigers move 102 alice alicepw b5-b4")
    players.send(BOB, "twotigers move 102 bob bobpw c4-c5")
    with reading(server.engine) as session:
        expiry = session.get(Board, 102).expire_due_at
    assert server.expire_boards(now=expiry + timedelta(seconds=1)) == 1
    expired = flat(outbox.to(ALICE)[-1])
    assert "Gewonnen hat bob. Zeitüberschreitung (Ziegen)." in expired
    assert not re.search(r"von (Ziegen|Tiger)\b", declined + expired)


def test_a_stranger_invited_by_a_german_player_is_written_to_in_german(players, outbox):
    """Whoever challenges a new address knows its owner: the invitation and the
    invited player's later mails are in the challenger's language (until they sign
    up and choose), and a German invitation says how to get English."""
    friend = "freund@players.test"
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, f"go challenge alice {friend}")
    invitation = flat(outbox.to(friend)[-1])
    assert "alice fordert dich zu einer Partie Go heraus (Brett 101)." in invitation
    assert "Go Brett 101: alice (Schwarz) gegen freund (Weiß)" in invitation
    assert "Mails in English, once you have signed up: language freund <password> en" in invitation
    players.send(ALICE, "go move 101 alice alicepw D4")
    assert "freund ist am Zug." in flat(outbox.to(friend)[-1])
    players.send(friend, "go move 101 freund x E5")  # no password yet: refused, in German
    assert "freund hat noch kein Passwort" in flat(outbox.to(friend)[-1])
    players.send(BOB, "go challenge bob stranger@players.test")  # bob writes English: as before
    assert "bob has challenged you to a game of Go (board 102)." in flat(outbox.to("stranger@players.test")[-1])
    assert "Mails in English" not in flat(outbox.to("stranger@players.test")[-1])


@pytest.mark.parametrize("name", sorted(name for name in REGISTRY if get_game(name).info.options))
def test_a_german_games_help_heads_its_options_with_the_usage_line_whole(players, outbox, name):
    """The options' heading wrapped at 78 characters left "...):" alone on a line for
    the longer game names, and its usage said "-option=wert" where usage lines are
    the same in both languages ("-option=value", as the general help writes it)."""
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, f"{name} help")
    lines = body(outbox.new()[-1]).split("\n")
    at = lines.index("Optionen der Herausforderung:")
    assert lines[at + 1] == f"    {name} challenge <user1> <user2> -option=value ..."
