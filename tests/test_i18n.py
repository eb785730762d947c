"""German and English (issue 12, item 5): every page, the play script's texts and
the game help in both; a page's language from the remembered switch, else
Accept-Language; mails in each player's own language (``language`` command).

The central check renders every kind of page twice, in English and in German,
and reads the visible text of both (text nodes and the attributes people see or
hear: aria-label, placeholder, title, alt, data-label). A German text that is
word for word the English one, and holds a word that is not a name or notation,
is a sentence nobody wrapped for translation: the test fails on it.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from sqlmodel import select

from pbm import i18n, movelog
from pbm.gamewords import GAME_WORDS, reason_text
from pbm.db import reading
from pbm.games import REGISTRY, GameText
from pbm.models import Board, InboundMessage, Player
from pbm.web import game_said

from .browser import HAVE_CHROMIUM
from .browser.driving import by_css, click, explanation, open_page, waiter
from .browser.fixtures import browsers, desktop, site  # noqa: F401 (fixtures)
from .conftest import body

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "pbm" / "translations" / "de" / "LC_MESSAGES" / "messages.po"
MAKEFILE = ROOT / "Makefile"  # its KEYWORDS: what marks a sentence for the catalogues
ALICE, BOB = "alice@players.test", "bob@players.test"
GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}

# Words that are the same in both languages: names (players, games, languages),
# formats and notation. Anything else identical on both pages is untranslated.
SAME_IN_BOTH = {"alice", "bob", "anna", "ben", "pbm", "go", "gnu", "great", "kingdom", "dragons", "two", "tigers",
                "deutsch", "english", "json", "sgf", "utc", "komi", "orange", "pass", "resign", "mark", "done",
                "resume"} | set(REGISTRY)
SHOWN_ATTRIBUTES = ("aria-label", "placeholder", "title", "alt", "data-label")


def catalogue():
    with CATALOGUE.open("rb") as po:
        return read_po(po, locale="de")


# -- the catalogue -------------------------------------------------------------


def test_every_marked_sentence_has_a_german_translation():
    """Every string the sources mark (templates, Python, mail templates) is in the
    German catalogue with a translation that is not a guess (fuzzy)."""
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    keywords = {**DEFAULT_KEYWORDS, **dict.fromkeys(re.findall(r"-k (\w+)", MAKEFILE.read_text()), None)}
    assert {"lazy_gettext", "MoveError", "OptionError"} <= keywords.keys()
    marked = {message if isinstance(message, str) else tuple(message) for _, _, message, _, _ in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=keywords)}  # a tuple: singular and plural
    translated = {m.id: m for m in catalogue() if m.id}
    assert marked, "nothing was extracted: babel.cfg does not match the sources"
    missing = sorted(marked - set(translated), key=str)
    assert missing == [], "run `make messages` and translate these"

    def finished(entry) -> bool:
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        return all(forms) and not entry.fuzzy

    assert sorted((m for m in marked if not finished(translated[m])), key=str) == []


def test_the_games_declared_words_are_in_the_catalogue():
    """Side names and option descriptions are declared by the games in English; the
    list that marks them for the catalogue must not miss one."""
    for game in REGISTRY.values():
        for word in game.sides:
            assert word in GAME_WORDS, (game.name, word)
        for option in game.info.options:
            assert option.help in GAME_WORDS, (game.name, option.name)


@pytest.mark.parametrize("kind, seat", [("resign", 0), ("forfeit", 1), ("decline", 1), ("cancel", None),
                                        ("expire", None), ("draw", 0), ("draw", None)])
def test_every_ending_the_server_writes_reads_german(kind, seat):
    """How a game ended when the log, not the rules, ended it (a resignation, a draw
    agreed or open at expiry, ...) is in the reader's language."""
    game = REGISTRY["go"]
    outcome = movelog.ending(game, kind, seat)
    with i18n.language("de"):
        german = reason_text(game, outcome)
    assert german != outcome.reason, (kind, german)
    assert not set(re.findall(r"[a-z]+", outcome.reason)) & set(re.findall(r"[a-z]+", german)) - {"go"}, german


TYPICAL_VALUE = "x" * 10  # a userid, a game's title, a date: what a placeholder is filled with


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_mail_sentence_broken_over_lines_breaks_where_a_line_fits(language):
    """A message written over several lines keeps its line breaks in the mail, and
    lines over 78 characters are wrapped: a line that could run over while its
    sentence goes on below would leave its last words alone on a line. So such a
    line ends its sentence, and an indented line (a command, a table) fits."""
    def filled(line: str) -> str:
        return re.sub(r"%\(\w+\)[sdr]", TYPICAL_VALUE, line)

    too_long = []
    for message in catalogue():
        if not message.id:
            continue
        texts = {"en": message.id, "de": message.string}[language]
        for text in texts if isinstance(texts, tuple) else (texts,):
            lines = text.rstrip("\n").split("\n")
            for line, following in zip(lines, lines[1:]):
                ends = line.rstrip().endswith((".", "!", "?", ":")) or re.search(r"%\(\w+\)s$", line)
                if len(filled(line)) > 78 and (line.startswith(" ") or not ends):
                    too_long.append(line)
    assert too_long == []


# -- reading a page the way a person does -----------------------------------------


class ShownText(HTMLParser):
    """The visible texts of a page, each whitespace-collapsed: text nodes outside
    script, style and anything marked ``lang="en"`` (a game's own sentence), the
    board picture's title and captions and the ASCII diagram's legend included, and
    the attributes in SHOWN_ATTRIBUTES."""

    SKIPPED = {"script", "style"}
    VOID = {"meta", "link", "input", "br", "img", "hr", "source", "area", "base", "col", "embed", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.open: list[bool] = []  # per open element: is its content skipped?
        self.language = ""
        self.script_texts: dict = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.language = attrs.get("lang", "")
        if tag == "body" and attrs.get("data-texts"):
            self.script_texts = json.loads(attrs["data-texts"])
        skipped = (bool(self.open and self.open[-1]) or tag in self.SKIPPED
                   or (attrs.get("lang") == "en" and tag != "html"))
        if not skipped:
            self.texts += [" ".join(attrs[name].split()) for name in SHOWN_ATTRIBUTES if attrs.get(name)]
        if tag not in self.VOID:
            self.open.append(skipped)

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.open:
            self.open.pop()

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not (self.open and self.open[-1]):
            self.texts.append(text)


def shown(response) -> ShownText:
    reader = ShownText()
    reader.feed(response.get_data(as_text=True))
    return reader


def untranslated(german: list[str], english: list[str]) -> list[str]:
    """The German page's texts that are the English page's, word for word, and say
    something in words (not only names, numbers, notation and userids like guest-qxz)."""
    def says_something(text: str) -> bool:
        words = [re.sub(r"\W", "", token) for token in text.split() if not re.search(r"[\d-]", token)]
        return any(len(word) >= 3 and word.lower() not in SAME_IN_BOTH for word in words)

    english = set(english)
    return [text for text in german if text in english and says_something(text)]


# -- a server with every kind of board and room -------------------------------------


def form_fields(client, path: str) -> dict:
    page = client.get(path).get_data(as_text=True)
    return {"csrf": re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1),
            "number": re.search(r'name="number" value="(\d+)"', page).group(1)}


def play(client, path: str, move: str):
    response = client.post(path, data={**form_fields(client, path), "move": move})
    assert response.status_code == 303, response.get_data(as_text=True)[-2000:]


def new_room(client, **fields) -> str:
    response = client.post("/new", data=fields)
    assert response.status_code == 303, response.get_data(as_text=True)[-2000:]
    return response.headers["Location"]


def invitation(host, play_path: str) -> str:
    """The invitation path the host's play page offers."""
    return re.search(r'data-invite href="[^"]*(/join/[a-z0-9]+)"', host.get(play_path).get_data(as_text=True))[1]


def tokens(server, board_id: int) -> tuple[str, str]:
    with reading(server.engine) as session:
        board = session.get(Board, board_id)
        return board.token0, board.token1


@pytest.fixture
def pages(players, server, app):
    """Path -> expected status of every kind of page, on boards in every state."""
    players.send(ALICE, "go challenge alice bob")  # 101: Black (alice) to move, after two moves
    players.send(ALICE, "go move 101 alice alicepw D4", "D4 :-)")
    players.send(BOB, "go move 101 bob bobpw E5")
    players.send(ALICE, "greatkingdom challenge alice bob")  # 102: resigned at once
    players.send(ALICE, "greatkingdom move 102 alice alicepw resign")
    players.send(ALICE, "go challenge alice bob")  # 103: in Go's scoring
    for move in ("alice alicepw pass", "bob bobpw pass"):
        players.send(ALICE if move.startswith("alice") else BOB, f"go move 103 {move}")
    go, kingdom, scoring = tokens(server, 101), tokens(server, 102), tokens(server, 103)

    host = app.test_client()
    same_device = new_room(host, game="go", mode="same-device", name="Anna", guest_name="Ben")
    dragons = new_room(host, game="dragons", mode="same-device", name="Anna", guest_name="Ben")
    tigers = new_room(host, game="twotigers", mode="same-device", name="Anna", guest_name="Ben")
    friend = new_room(host, game="go", mode="friend", name="Anna")
    invite = invitation(host, friend)
    unused = invitation(host, new_room(host, game="go", mode="friend", name="Anna"))
    closed = new_room(host, game="go", mode="friend", name="Anna")
    closed_invite = invitation(host, closed)
    play(host, closed, "resign")
    assert app.test_client().get(invite).status_code == 303  # the guest takes the seat: the room is full
    play(host, same_device, "C3")
    return {
        "/": 200, "/?game=go&player=alice": 200,
        "/games/101": 200, "/games/101?move=1": 200, "/games/102": 200, "/games/103": 200,
        f"/play/{go[0]}": 200, f"/play/{go[1]}": 200, f"/play/{kingdom[0]}": 200, f"/play/{scoring[0]}": 200,
        same_device: 200, same_device + "?move=0": 200, dragons: 200, dragons + "?cell=1n": 200, tigers: 200,
        friend: 200, "/new": 200, "/new?game=dragons": 200, "/new?game=greatkingdom": 200,
        "/new?game=twotigers": 200, "/new?game=twodragons": 200,
        invite: 409, closed_invite: 410, "/join/" + "x" * 20: 404,
        "/games/9999": 404, "/games/101?move=x": 400, "/play/notalink": 404, "/new?game=chess": 404,
        "/language/fr": 404, "/no/such/page": 404, "/standings/go": 200, "/standings/greatkingdom": 200, "/standings/chess": 404,
        ("previewer", unused): 200,
    }


def fetch(app, path, headers):
    client = app.test_client()
    if isinstance(path, tuple):  # an invitation as a link previewer sees it (the seat stays free)
        return client.get(path[1], headers={**headers, "User-Agent": "Slackbot-LinkExpanding 1.0"})
    return client.get(path, headers=headers)


def test_german_pages_have_no_untranslated_text(app, pages):
    seen_german = set()
    for path, status in pages.items():
        german, english = fetch(app, path, GERMAN), fetch(app, path, ENGLISH)
        assert (german.status_code, english.status_code) == (status, status), path
        de, en = shown(german), shown(english)
        assert (de.language, en.language) == ("de", "en"), path
        assert untranslated(de.texts, en.texts) == [], path
        seen_german.update(de.texts)
    assert {"Alle Bretter", "Neues Spiel", "Der Raum ist voll", "Aufgeben", "Weiterspielen", "Spielbare Zellen",
            "alice (Schwarz) gegen bob (Weiß). Du spielst alice (Schwarz)."} <= seen_german


def test_the_check_finds_a_sentence_nobody_wrapped(app, pages):
    """The check above is real: a page with one English sentence more fails it."""
    german, english = fetch(app, "/new", GERMAN), fetch(app, "/new", ENGLISH)
    added = "<p>Choose your game wisely.</p>"
    de, en = ShownText(), ShownText()
    de.feed(german.get_data(as_text=True).replace("</main>", added + "</main>"))
    en.feed(english.get_data(as_text=True).replace("</main>", added + "</main>"))
    assert untranslated(de.texts, en.texts) == ["Choose your game wisely."]


def test_the_play_script_gets_its_sentences_in_the_page_language(app, pages):
    de = shown(fetch(app, "/new", GERMAN)).script_texts
    en = shown(fetch(app, "/new", ENGLISH)).script_texts
    assert de.keys() == en.keys() and de
    assert de["play_move"] == "%(move)s spielen" and en["play_move"] == "Play %(move)s"
    assert [key for key in de if de[key] == en[key]] == []


def test_a_games_own_texts_are_in_the_page_language(app, pages):
    """A game's status line is translated too; one the catalogue lacks stays
    English and is marked so (lang="en") on a German page."""
    page = fetch(app, "/games/103", GERMAN).get_data(as_text=True)
    assert ("Auswertung: tippe eine tote Gruppe an, um sie zu markieren (oder schreibe mark D4), dann Fertig; "
            "Weiterspielen spielt weiter. Zählung: Schwarz 0, Weiß 7,5. Bestätigt von: noch niemand.") in page
    with app.test_request_context(headers=GERMAN):
        app.preprocess_request()
        assert game_said(GameText("Komi %(komi)s.", komi="7.5")) == "Komi 7.5."  # the same in both
        assert game_said(GameText("Unheard of: %(x)s.", x=1)) == '<span lang="en">Unheard of: 1.</span>'


# -- choosing the language -------------------------------------------------------


def test_accept_language_chooses_and_english_is_the_default(client):
    def language(headers):
        return shown(client.get("/", headers=headers)).language

    assert language(GERMAN) == "de"
    assert language({"Accept-Language": "de-AT"}) == "de"
    assert language({"Accept-Language": "fr-FR, en;q=0.5, de;q=0.3"}) == "en"
    assert language({"Accept-Language": "fr"}) == "en"
    assert language({}) == "en"


def test_the_switch_is_remembered_and_beats_accept_language(app):
    browser = app.test_client()
    page = browser.get("/new", headers=ENGLISH).get_data(as_text=True)
    link = re.search(r'href="(/language/de[^"]*)"', page)[1]
    assert link == "/language/de?next=/new"  # on every page, a plain link: no script needed
    answer = browser.get(link, headers=ENGLISH)
    assert answer.status_code == 303 and answer.headers["Location"] == "/new"
    assert "lang=de" in answer.headers["Set-Cookie"] and "Max-Age" in answer.headers["Set-Cookie"]
    again = browser.get("/new", headers=ENGLISH)
    assert shown(again).language == "de" and "Neues Spiel" in shown(again).texts
    browser.get("/language/en?next=/", headers=GERMAN)
    assert shown(browser.get("/", headers=GERMAN)).language == "en"


def test_a_players_own_page_speaks_the_language_they_chose(players, server, app):
    """On their play page a player who chose German by mail reads German whatever the
    browser asks; the switch still wins; the opponent's page follows their browser."""
    players.send(BOB, "language bob bobpw de")
    players.send(ALICE, "go challenge alice bob")
    alice, bob = tokens(server, 101)
    browser = app.test_client()
    assert shown(browser.get(f"/play/{bob}", headers=ENGLISH)).language == "de"
    assert shown(browser.get(f"/play/{alice}", headers=ENGLISH)).language == "en"
    assert shown(browser.get(f"/play/{bob}")).language == "de"  # no Accept-Language at all
    browser.get("/language/en?next=/")
    assert shown(browser.get(f"/play/{bob}", headers=GERMAN)).language == "en"


def test_the_switch_goes_back_only_to_this_site(client):
    for target in ("//evil.test/x", "https://evil.test/", "javascript:alert(1)", "/\\evil.test",
                   "/\t/evil.test", "/\n/evil.test", "/\r\n/evil.test", "/ /evil.test"):
        answer = client.get("/language/de", query_string={"next": target})
        assert answer.status_code == 303 and answer.headers["Location"] == "/", target  # a browser drops tabs
    assert client.get("/language/de", query_string={"next": "/\x00/evil.test"}).status_code == 400  # no NUL anywhere
    answer = client.get("/language/de", query_string={"next": "/games/101?move=3"})
    assert answer.headers["Location"] == "/games/101?move=3"
    assert client.get("/language/xx?next=/").status_code == 404


# -- mails in each player's language -------------------------------------------------


def test_language_by_mail_is_checked_and_answered_in_the_new_language(players, outbox, server):
    assert players.send(ALICE, "language alice wrongpw de").status == "rejected"
    assert "The password for alice is wrong." in body(outbox.new()[-1])
    players.send(ALICE, "language alice alicepw de")
    changed = outbox.new()[-1]
    assert changed["Subject"] == "pbm: Sprache geändert"
    assert "Die Mails an alice sind ab jetzt auf Deutsch." in body(changed)
    players.send(ALICE, "language alice alicepw fr")
    refused = outbox.new()[-1]
    assert "Die Sprache \"fr\" gibt es hier nicht; wähle eine von en, de." in body(refused)
    assert "Sende stattdessen: language <userid> <password> de|en" in body(refused)
    with reading(server.engine) as session:
        assert session.exec(select(Player.language).where(Player.userid == "alice")).one() == "de"
        subjects = session.exec(select(InboundMessage.subject)).all()
    assert "language alice ******** de" in subjects and not any("alicepw" in s for s in subjects)
    players.send(ALICE, "lang alice alicepw en")  # abbreviated, as every command word may be
    assert "The mails to alice are in English from now on." in body(outbox.new()[-1])


def test_a_german_players_board_help_and_error_mails_are_german(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "go challenge alice bob")
    mails = {m["To"].addresses[0].addr_spec: body(m) for m in outbox.new()[-2:]}
    assert "Neue Partie Go auf Brett 101, begonnen von alice." in mails[ALICE]
    assert "Go Brett 101: alice (Schwarz) gegen bob (Weiß)" in mails[ALICE]
    assert "alice ist am Zug." in mails[ALICE]
    assert "Zum Ziehen antworte auf diese Mail mit deinem Zug in der ersten Zeile" in mails[ALICE]
    assert "New game of Go on board 101, started by alice." in mails[BOB]  # bob keeps English
    assert "It is your opponent's turn" in mails[BOB]

    players.send(ALICE, "go help")
    rules = outbox.new()[-1]
    assert rules["Subject"] == "Go Hilfe"
    assert "Zwei Spieler, Schwarz (beginnt) und Weiß" in body(rules)
    assert "Positionelles Superko verbietet jede frühere" in body(rules)  # the seed's wording
    players.send(ALICE, "help")
    general = outbox.new()[-1]
    assert general["Subject"] == "pbm Hilfe" and "language <userid> <password> de|en" in body(general)
    for mail in (rules, general):
        assert all(len(line) <= 78 for line in body(mail).split("\n"))

    players.send(BOB, "go move 101 bob bobpw E5")
    assert "It is not your turn on board 101: it is alice's turn (Black)." in body(outbox.new()[-1])
    players.send(ALICE, "go move 101 alice alicepw D4")
    players.send(ALICE, "go move 101 alice alicepw E5")
    refused = outbox.new()[-1]
    assert "Du bist auf Brett 101 nicht am Zug: bob ist am Zug (Weiß)." in body(refused)
    assert refused["Subject"] == "Go Board 101 Error"  # the interface's form, for mail filters
    players.send(ALICE, "frobnicate 101")
    unknown = outbox.new()[-1]
    assert unknown["Subject"] == "pbm error"
    assert "\"frobnicate\" ist weder ein Befehl noch ein Spiel" in body(unknown)
    players.send(ALICE, "go move 101 alice alicepw")
    assert "Der Befehl move braucht mehr Wörter." in body(outbox.new()[-1])
    players.send(ALICE, "go show abc")
    assert "\"abc\" ist keine Brettnummer (Bretter sind nummeriert wie 101)." in body(outbox.new()[-1])
    players.send(ALICE, "go unsubscribe 101 alice alicepw")  # a command of two forms
    usage = " ".join(body(outbox.new()[-1]).split())
    assert ("Sende stattdessen: <game> subscribe <board> <userid> <password> oder <game> subscribe <userid> "
            "<password> all") in usage
    players.send(ALICE, "go chat 101 alice alicepw")  # a form with a note
    assert "<password> (der Text der Mail ist der Chat)" in " ".join(body(outbox.new()[-1]).split())


def test_requests_queues_and_their_refusals_reach_a_german_player_in_german(players, outbox):
    """The notes of a board mail (undo, draw offers, queued moves) are written for each
    reader; the refusals of requests, queue, submit/confirm, watching and challenge
    control, and the ambiguity of an abbreviation, in the sender's language."""
    def flat(message) -> str:
        return " ".join(body(message).split())

    def last(address):
        return [m for m in outbox.all() if m["To"].addresses[0].addr_spec == address][-1]

    players.send(BOB, "language bob bobpw de")
    players.send(ALICE, "go challenge alice bob")
    players.send(BOB, "go queue 101 bob bobpw E5")
    queued = last(BOB)
    assert queued["Subject"] == "Go Brett 101 vorgemerkt" and "Vorgemerkt auf Brett 101: E5." in flat(queued)
    players.send(ALICE, "go move 101 alice alicepw D4")
    assert "Der vorgemerkte Zug E5 von bob wurde gespielt (Zug 2)." in flat(last(BOB))
    assert "bob's queued move E5 was played (move 2)." in flat(last(ALICE))  # alice reads English

    players.send(ALICE, "go move 101 alice alicepw undo")
    players.send(BOB, "go move 101 bob bobpw reject")
    assert "bob hat die Bitte von alice um Rücknahme von Zug 1 abgelehnt." in flat(last(BOB))
    assert "bob rejected alice's request to take back move 1." in flat(last(ALICE))
    assert "Go Brett 101: alice (Schwarz) gegen bob (Weiß)" in flat(last(BOB))  # not alice's English board
    assert "Go Board 101: alice (Black) vs bob (White)" in flat(last(ALICE))
    players.send(ALICE, "go move 101 alice alicepw C3")
    players.send(ALICE, "go move 101 alice alicepw propose")
    players.send(BOB, "go move 101 bob bobpw undo")
    assert ("Auf Brett 101 ist schon eine Anfrage offen (das Remisangebot von alice); es kann nur eine zur Zeit "
            "offen sein") in flat(last(BOB))
    players.send(BOB, "go move 101 bob bobpw F5")
    assert "bob hat gezogen, statt zu antworten, und damit das Remisangebot von alice abgelehnt." in flat(last(BOB))

    refusals = [
        ("go queue 101 bob bobpw undo",
         "Vormerken lässt sich nur ein Zug auf dem Brett; schick undo mit dem Befehl move."),
        ("go submit 101 bob bobpw G5",
         "Du bist auf Brett 101 nicht am Zug; einen Zug für später kannst du mit dem Befehl queue vormerken."),
        ("go confirm 101 bob bobpw",
         "Du hast auf Brett 101 keinen Zug eingereicht, also gibt es nichts zu bestätigen."),
        ("go move 101 bob bobpw accept", "Auf Brett 101 ist keine Anfrage offen, auf die accept antworten könnte"),
        ("go subscribe 101 bob bobpw", "bob spielt auf Brett 101; dessen Mails kommen ohnehin."),
        ("go re 101 bob bobpw", "\"re\" könnte reject oder resign heißen: schreib mehr davon."),
        ("go resig 101 bob bobpw", "\"resig\" wäre resign, und das wird ausgeschrieben"),
        ("vacation bob bobpw off", "bob ist nicht im Urlaub."),
        ("go games bob active", None),
    ]
    for line, sentence in refusals:
        players.send(BOB, line)
        if sentence:
            assert sentence in flat(last(BOB)), line
    assert "Go-Bretter von bob (laufend):" in flat(last(BOB))
    assert "101 go alice gegen bob Zug 4 alice am Zug" in flat(last(BOB))


def test_a_mail_too_large_to_read_is_refused_in_the_readers_language(players, outbox):
    from pbm.mail.inbound import MAX_BODY_CHARS

    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "help", "x" * (MAX_BODY_CHARS + 1))
    said = " ".join(body(outbox.new()[-1]).split())
    assert "Diese Mail ist zu groß zum Lesen: ihr Text ist länger als" in said
    assert "Schicke den Befehl in einer kurzen, einfachen Mail." in said
    players.send(BOB, "help", "x" * (MAX_BODY_CHARS + 1))
    assert "This mail is too large to read: its text is over" in " ".join(body(outbox.new()[-1]).split())


def test_a_german_players_history_names_taken_back_moves_in_german(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "greatkingdom challenge alice bob")
    players.send(ALICE, "greatkingdom move 101 alice alicepw D4")
    players.send(BOB, "greatkingdom move 101 bob bobpw F6")
    players.send(BOB, "greatkingdom move 101 bob bobpw undo")
    players.send(ALICE, "greatkingdom move 101 alice alicepw accept")
    players.send(ALICE, "greatkingdom history 101")
    said = " ".join(body(outbox.new()[-1]).split())
    assert "F6 (zurückgenommen)" in said and "Rücknahme angenommen (Zug 2 zurückgenommen)" in said
    players.send(BOB, "greatkingdom history 101")
    assert "F6 (taken back)" in " ".join(body(outbox.new()[-1]).split())  # bob reads English


def test_a_german_expiry_mail_names_the_servers_entry_and_its_days_in_german(players, outbox, server):
    from datetime import timedelta

    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "greatkingdom challenge alice bob --nagtime=0.25 --expiretime=0.5")
    with reading(server.engine) as session:
        expiry = session.get(Board, 101).expire_due_at
    outbox.new()
    assert server.expire_boards(now=expiry + timedelta(seconds=1)) == 1
    mails = {m["To"].addresses[0].addr_spec: body(m) for m in outbox.new()}
    assert "   1. Server       abgesagt" in mails[ALICE]  # the server's move-list entry
    assert "Brett 101 ist abgelaufen: 0,5 Tage lang kam kein Zug." in " ".join(mails[ALICE].split())
    assert "   1. server       cancel" in mails[BOB]  # bob reads English
    assert "Board 101 has expired: no move arrived in 0.5 days." in " ".join(mails[BOB].split())


def test_plural_forms_follow_the_number(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "vacation alice alicepw 1")
    assert "im Urlaub (1 Tag)." in body(outbox.new()[-1])
    players.send(ALICE, "vacation alice alicepw off")
    players.send(ALICE, "vacation alice alicepw 3")
    assert "im Urlaub (3 Tage)." in body(outbox.new()[-1])
    players.send(BOB, "vacation bob bobpw 3")
    english = body(outbox.new()[-1])
    assert "bob is on vacation until" in english and "(3 days)." in english


def test_a_move_from_a_german_page_mails_each_player_in_their_own_language(players, outbox, server, app):
    players.send(ALICE, "go challenge alice bob")
    outbox.new()
    page = f"/play/{tokens(server, 101)[0]}"
    browser = app.test_client()
    browser.get(page, headers=GERMAN)
    response = browser.post(page, headers=GERMAN, data={**form_fields(browser, page), "move": "D4"})
    assert response.status_code == 303
    mails = {m["To"].addresses[0].addr_spec: body(m) for m in outbox.new()}
    assert "It is bob's turn." in mails[BOB] and "It is bob's turn." in mails[ALICE]
    refused = browser.post(page, headers=GERMAN, data={**form_fields(browser, page), "move": "E5"})
    assert "Du bist auf Brett 101 nicht am Zug: bob ist am Zug (Weiß)." in refused.get_data(as_text=True)


def test_a_games_refusal_is_german_for_a_german_reader(players, outbox, server, app):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "go challenge alice bob")
    players.send(ALICE, "go move 101 alice alicepw D4")
    players.send(BOB, "go move 101 bob bobpw E5")
    players.send(ALICE, "go move 101 alice alicepw E5")
    refused = body(outbox.new()[-1])
    assert "E5 ist schon besetzt; wähle einen freien Punkt." in refused
    assert 'Sende stattdessen: einen Zug in der Notation von Go (sende "go help")' in refused
    players.send(ALICE, "go move 101 alice alicepw Z9")
    unknown = " ".join(body(outbox.new()[-1]).split())
    assert ("Z9 liegt außerhalb des Bretts; die Punkte gehen von A1 bis J9. Ein Go-Zug ist ein Punkt wie D4, "
            "oder pass.") in unknown
    players.send(BOB, "go move 101 bob bobpw D4")  # bob reads English, from the same game
    assert "It is not your turn on board 101" in body(outbox.new()[-1])

    explain = f"/play/{tokens(server, 101)[0]}/explain?move=E5"
    assert app.test_client().get(explain, headers=GERMAN).json == {
        "error": "E5 ist schon besetzt; wähle einen freien Punkt."}
    english = app.test_client()
    english.get("/language/en?next=/")  # alice's page speaks her German unless she switches
    assert english.get(explain, headers=ENGLISH).json == {
        "error": "E5 is already occupied; choose an empty point."}


# -- the play script in a real browser -------------------------------------------------


@pytest.mark.skipif(not HAVE_CHROMIUM, reason="Chromium and chromedriver are not installed")
def test_the_play_script_speaks_german_on_a_german_page(site, desktop, request):
    board = site.board("go", moves=["D5"])
    open_page(desktop, board.play_url(1))
    desktop.execute_script("localStorage.setItem('pbm.confirm', '1')")  # taps select first (Settings)
    request.addfinalizer(lambda: desktop.execute_script("localStorage.removeItem('pbm.confirm')"))
    assert by_css(desktop, "html").get_attribute("lang") == "en"  # Chromium asks for en-US
    click(desktop, '[data-language="de"]')  # the switch: a plain link, remembered in a cookie
    waiter(desktop).until(lambda d: by_css(d, "html").get_attribute("lang") == "de")
    waiter(desktop).until(lambda d: d.execute_script("return document.readyState") == "complete")
    click(desktop, '[data-point="D5"]')  # occupied: the server's sentence, in German
    assert explanation(desktop) == "D5 ist schon besetzt; wähle einen freien Punkt."
    click(desktop, '[data-point="E5"]')
    waiter(desktop).until(lambda d: by_css(d, '[data-action="play"]').text == "E5 spielen")
    assert by_css(desktop, "[data-selection-text]").text == (
        "E5 gewählt: tippe noch einmal darauf oder drücke Spielen.")
    click(desktop, '[data-action="resign"]')  # armed: asks once more, in German
    assert by_css(desktop, '[data-action="resign"]').text == "Wirklich aufgeben? Noch einmal klicken"
    open_page(desktop, board.url)  # another page: the choice is remembered
    assert by_css(desktop, "html").get_attribute("lang") == "de"
    assert by_css(desktop, "[data-status]").text == "bob ist am Zug (Weiß)."


def test_a_german_subscription_mail_leaves_no_word_alone_on_a_line(players, outbox):
    players.send(ALICE, "language alice alicepw de")
    players.send(ALICE, "twotigers subscribe alice alicepw all")
    lines = body(outbox.new()[-1]).split("\n")
    assert lines[0].startswith("alice beobachtet jetzt jedes neue Brett von Two Tigers")
    assert [line for line in lines if len(line.split()) == 1 and not line.startswith(" ")] == []
    assert all(len(line) <= 78 for line in lines)
