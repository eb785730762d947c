"""What the opponent receives of a reply: the sender's own words only.

Samples in tests/mail_samples/replies/ are replies to a board mail as Gmail,
Outlook, Apple Mail and Thunderbird write them, in English, German and
French, plain text and HTML; beside each ``.eml`` is the expected visible
text (``.txt``)."""

import quopri
from pathlib import Path

import pytest

from tests.conftest import body
from pbm.mail.inbound import (
    MAX_BODY_CHARS,
    MAX_COMMAND_LINE,
    MAX_REPLY_CHARS,
    parse_mail,
)
from pbm.mail.htmltext import html_to_text
from pbm.mail.replies import split_command, visible_reply

SAMPLES = sorted(Path(__file__).parent.joinpath("mail_samples", "replies").glob("*.eml"))
SERVER = {"base_url": "http://pbm.test", "server_address": "pbm@pbm.test"}


def test_there_is_a_sample_of_every_client_in_every_language():
    names = {p.stem for p in SAMPLES}
    for client in ("gmail", "outlook", "apple", "thunderbird"):
        for language in ("en", "de", "fr"):
            assert any(n.startswith(f"{client}-{language}-") for n in names), (client, language)


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_reply_is_read_as_its_writer_wrote_it(sample):
    mail = parse_mail(sample.read_bytes())
    assert mail.too_large is None
    assert visible_reply(mail.body, **SERVER) == sample.with_suffix(".txt").read_text(encoding="utf-8").strip()


@pytest.mark.parametrize("text, expected", [
    # the rules added to the reply parser, one by one
    ("D5\nok\n\nLe dim. 29 nov. 2026 à 10:00, pbm <pbm@pbm.test> a\nécrit :\nold", "D5\nok"),
    ("D5\nok\n\nOn Sun, Nov 29, 2026 at 10:00 AM pbm <pbm+1.a@pbm.test>\nwrote:\nold", "D5\nok"),
    ("D5\nok\n\nAm 29.11.2026 um 10:00 schrieb pbm <pbm@pbm.test>:\nold", "D5\nok"),
    ("D5\nok\n\n---------- Forwarded message ---------\nold", "D5\nok"),
    ("D5\nok\n\n---------- Weitergeleitete Nachricht ---------\nold", "D5\nok"),
    ("D5\nok\n\n-----Message d'origine-----\nold", "D5\nok"),
    ("D5\nok\n________________________________\nold", "D5\nok"),
    ("D5\nok\n\n-- \nBob", "D5\nok"),
    ("D5\nok\n\nVon meinem iPhone gesendet", "D5\nok"),
    ("D5\nok\n\nEnvoyé de mon iPad", "D5\nok"),
    ("D5\nok\n\nGet Outlook for Android<https://aka.ms/AAb9ysg>", "D5\nok"),
    # the default signatures of phone and web mail programs
    ("D5\nok\n\nVon meinem Samsung Galaxy Smartphone gesendet.", "D5\nok"),
    ("D5\nok\n\nSent from Yahoo Mail on Android", "D5\nok"),
    ("D5\nok\n\nSent from Yahoo Mail for iPhone", "D5\nok"),
    ("D5\nok\n\nSent from Mail for Windows", "D5\nok"),
    ("D5\nok\n\nSent from Outlook", "D5\nok"),
    ("D5\nok\n\nSent with Proton Mail secure email.", "D5\nok"),
    ("D5\nok\n\nGesendet mit der GMX Mail App", "D5\nok"),
    ("D5\nok\n\nGesendet mit der WEB.DE Mail App", "D5\nok"),
    ("D5\nok\n\nDiese Nachricht wurde von meinem Android-Mobiltelefon mit GMX Mail gesendet.", "D5\nok"),
    ("D5\nok\n\nEnvoyé à partir de Outlook pour Android", "D5\nok"),
    # a comment that says where it was sent from stays
    ("D5\nSent from the train, more tonight", "D5\nSent from the train, more tonight"),
    # a reply written below the quote keeps its words
    ("On Sun, Nov 29, 2026 at 10:00 AM pbm wrote:\n> board\n\nD5\nok", "D5\nok"),
    # lists and ordinary words are no signature
    ("D5\n- first this\n- then that", "D5\n- first this\n- then that"),
    ("multiple\ngo show 101\ngo games alice", "multiple\ngo show 101\ngo games alice"),
    ("D5\nThanks, you too.\nBest, and good luck", "D5\nThanks, you too.\nBest, and good luck"),
])
def test_attributions_separators_and_signatures_end_the_reply(text, expected):
    assert visible_reply(text) == expected


@pytest.mark.parametrize("text", [
    # inline PGP, as Mailvelope and older Enigmail sign a reply: the armor and the signature block go,
    # and the dash escape of the writer's own signature separator is undone (RFC 4880 7.1)
    "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nD5\nsigned, sealed\n\n- -- \nBob\n"
    "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEEabc\n=x1Yz\n-----END PGP SIGNATURE-----\n",
    "\r\n-----BEGIN PGP SIGNED MESSAGE-----\r\nHash: SHA512\r\n\r\nD5\r\nsigned, sealed\r\n\r\n"
    "On Sun, Nov 29, 2026 at 10:00 AM pbm <pbm@pbm.test> wrote:\r\n> old\r\n-----BEGIN PGP SIGNATURE-----\r\n"
    "\r\niQEzBAEBCAAdFiEEabc\r\n-----END PGP SIGNATURE-----\r\n",
])
def test_a_clearsigned_reply_is_read_without_its_armor(text):
    assert visible_reply(text) == "D5\nsigned, sealed"


def test_a_dash_escaped_line_of_a_clearsigned_reply_is_read_as_written():
    text = ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nD5\n- - first this\n- - then that\n"
            "-----BEGIN PGP SIGNATURE-----\niQ\n-----END PGP SIGNATURE-----\n")
    assert visible_reply(text) == "D5\n- first this\n- then that"


def test_quote_above_and_below_is_dropped_and_blank_runs_collapse():
    assert visible_reply("> old\n> board\n\n\n\npass\n\n\n\nthanks\n> more") == "pass\n\nthanks"


def test_long_lines_pass_the_reply_parser_whole():
    paragraph = "word " * 400  # 2,000 characters: longer than any attribution, so a stand-in is parsed
    assert visible_reply(f"D5\n{paragraph}\n\nOn Sun, Nov 29 pbm wrote:\n> x") == f"D5\n{paragraph.strip()}"


def test_the_reply_parser_sees_a_bounded_window():
    text = visible_reply("D5\n" + "a line of comment\n" * 10_000)
    assert MAX_REPLY_CHARS - 100 < len(text) <= MAX_REPLY_CHARS


def test_private_link_and_reply_tag_never_reach_the_comment():
    text = visible_reply("D5\nmine: https://pbm.test/play/abc123 (mailto:pbm+101.abc123@pbm.test)", **SERVER)
    assert text == "D5\nmine: [private link removed] ([reply address removed])"
    assert "abc123" not in text
    # links elsewhere and the public board page stay
    assert visible_reply("D5\nsee http://pbm.test/games/101 and http://other.test/play/x", **SERVER) == \
        "D5\nsee http://pbm.test/games/101 and http://other.test/play/x"


def test_a_real_board_mail_pasted_unquoted_is_removed(players, outbox):
    """The board mail the server really sends, under a move, as a client that does not quote sends it."""
    players.send("alice@players.test", "go challenge alice bob")
    players.send("alice@players.test", "go move 101 alice alicepw E5", "Your move!")
    board_mail = next(m for m in outbox.to("bob@players.test") if "Your move!" in body(m))
    token = str(board_mail["Reply-To"]).split("+")[1].split("@")[0].split(".")[1]
    assert token in body(board_mail)
    reply = f"D5\nsee you tomorrow\n\n{body(board_mail)}"
    assert visible_reply(reply, base_url="http://pbm.test", server_address="pbm@pbm.test") == \
        "D5\nsee you tomorrow"


def test_the_first_board_mail_with_its_invitation_is_removed(players, outbox):
    players.send("alice@players.test", "go challenge alice bob")
    board_mail = outbox.to("bob@players.test")[-1]
    reply = f"pass\n\n{body(board_mail)}"
    assert visible_reply(reply, **SERVER) == "pass"


def test_split_command_returns_the_first_line_whole():
    line, comment = split_command(visible_reply("x" * (MAX_COMMAND_LINE + 5) + "\nrest"))
    assert len(line) == MAX_COMMAND_LINE + 5 and comment == "rest"


def test_nested_blockquotes_are_quoted_once():
    html = "<blockquote>" * 5_000 + "deep" + "</blockquote>" * 5_000 + "D5"
    assert html_to_text(html, MAX_BODY_CHARS) == "> deep\nD5"
    assert visible_reply(html_to_text(html, MAX_BODY_CHARS)) == "D5"


def test_html_text_is_bounded():
    html = "<blockquote>x\n" * 50_000
    text = html_to_text(html, MAX_BODY_CHARS)
    assert len(text) <= MAX_BODY_CHARS + 1 and set(text.split("\n")[:-1]) == {"> x"}
    assert len(html_to_text("<p>word</p>" * 100_000, limit=1_000)) < 1_100
    cut = html_to_text("<p>" + "long " * 50_000, limit=1_000)  # one paragraph over the limit is cut
    assert cut.startswith("long " * 199) and len(cut) == 1_001


def _reply_to(outbox, player: str) -> str:
    return [m for m in outbox.to(player) if m["Reply-To"]][-1]["Reply-To"].addresses[0].addr_spec


def test_an_outlook_reply_labelled_latin1_plays_its_move_in_curly_quotes(players, outbox):
    """Outlook labels its text ISO-8859-1 and writes Windows-1252: the curly quotes
    around the move and the dash and euro sign in the comment arrive as written."""
    players.send("alice@players.test", "go challenge alice bob")
    players.send("alice@players.test", "go move 101 alice alicepw E5")
    text = ("\u201cD6\u201d\r\nIt\u2019s a bold move \u2013 5 \u20ac on it\r\n\r\n-----Original Message-----\r\n"
            "From: pbm <pbm@pbm.test>\r\nSent: Thursday, December 3, 2026 10:00 AM\r\nSubject: Go Board 101 bob\r\n\r\n"
            "Go Board 101: alice (Black) vs bob (White)\r\n")
    raw = (f"From: Bob <bob@players.test>\r\nTo: {_reply_to(outbox, 'bob@players.test')}\r\n"
           "Subject: RE: Go Board 101 bob\r\nMessage-ID: <outlook-latin1@players.test>\r\nMIME-Version: 1.0\r\n"
           'Content-Type: text/plain; charset="iso-8859-1"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
           ).encode() + quopri.encodestring(text.encode("cp1252"))
    assert players.server.handle_raw(raw).status == "applied"
    board_mail = outbox.to("alice@players.test")[-1]
    assert board_mail["Subject"] == "Go Board 101 alice"
    assert "   2. bob          D6" in body(board_mail)
    assert "bob says (to the two players only):\n> It\u2019s a bold move \u2013 5 \u20ac on it\n" in body(board_mail)
    assert "Original Message" not in body(board_mail)


def test_a_clearsigned_reply_plays_its_move(players, outbox):
    players.send("alice@players.test", "go challenge alice bob")
    players.send("alice@players.test", "go move 101 alice alicepw E5")
    text = ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nD6\nsigned, sealed\n"
            "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEEabc\n-----END PGP SIGNATURE-----\n")
    players.send("bob@players.test", "Re: Go Board 101 bob", text, to=_reply_to(outbox, "bob@players.test"))
    board_mail = outbox.to("alice@players.test")[-1]
    assert board_mail["Subject"] == "Go Board 101 alice"
    assert "   2. bob          D6" in body(board_mail)
    assert "bob says (to the two players only):\n> signed, sealed\n\n" in body(board_mail)
    assert "PGP" not in body(board_mail)


@pytest.mark.parametrize("content", [
    'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n'
    "Content-Transfer-Encoding: base64\r\n\r\nMIAGCSqGSIb3DQEHA6CAMIACAQAxggFHMIIBQwIBADArMB4xHDAaBgNV\r\n",
    'Content-Type: application/pkcs7-mime; smime-type=signed-data; name="smime.p7m"\r\n'
    "Content-Transfer-Encoding: base64\r\n\r\nMIAGCSqGSIb3DQEHAqCAMIACAQExDzANBglghkgBZQMEAgEFADCA\r\n",
    'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n'
    "--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n--b\r\n"
    'Content-Type: application/octet-stream; name="encrypted.asc"\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\nhQEMA\r\n'
    "-----END PGP MESSAGE-----\r\n--b--\r\n",
], ids=["smime-encrypted", "smime-opaque-signed", "pgp-encrypted"])
def test_an_encrypted_reply_is_told_that_it_cannot_be_read(players, outbox, content):
    """The server holds no key: the player is told why their move was not read,
    not that they wrote none."""
    players.send("alice@players.test", "go challenge alice bob")
    players.send("alice@players.test", "go move 101 alice alicepw E5")
    outbox.new()
    raw = (f"From: Bob <bob@players.test>\r\nTo: {_reply_to(outbox, 'bob@players.test')}\r\n"
           "Subject: Re: Go Board 101 bob\r\nMessage-ID: <sealed@players.test>\r\nMIME-Version: 1.0\r\n" + content).encode()
    result = players.server.handle_raw(raw)
    assert result.status == "rejected"
    [error_mail] = outbox.new()
    assert error_mail["To"].addresses[0].addr_spec == "bob@players.test"
    assert ("Your mail is encrypted or signed as a whole (S/MIME or PGP), and the server cannot read such a mail."
            in " ".join(body(error_mail).split()))
    assert "holds no move" not in body(error_mail)


def test_an_encrypted_mail_with_its_command_in_the_subject_is_answered(players, outbox):
    """The Subject is never encrypted: a command there is read as ever, whatever the body holds."""
    players.send("alice@players.test", "go challenge alice bob")
    outbox.new()
    raw = ("From: Bob <bob@players.test>\r\nTo: pbm@pbm.test\r\nSubject: go show 101\r\n"
           "Message-ID: <sealed-subject@players.test>\r\nMIME-Version: 1.0\r\n"
           'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n'
           "Content-Transfer-Encoding: base64\r\n\r\nMIAGCSqGSIb3DQEHA6CAMIACAQAxggFHMIIBQwIBADArMB4xHDAaBgNV\r\n").encode()
    result = players.server.handle_raw(raw)
    assert result.status == "applied"
    [board_mail] = outbox.new()
    assert board_mail["Subject"] == "Go Board 101 alice"
