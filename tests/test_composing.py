"""Outgoing mails written directly (``outbound._plain``, the path of nearly every
mail the server writes) are byte for byte what ``email`` writes for the same
headers and text (``outbound._through_email``); a mail that is not plain takes
the ``email`` path."""

import random
import string
from datetime import datetime, timezone
from email import message_from_bytes, policy

import pytest

from pbm.config import load_settings
from pbm.mail import outbound

SETTINGS = load_settings({"server_address": "pbm@pbm.test"})
NOW = datetime(2026, 11, 30, 8, 15, 42, tzinfo=timezone.utc)
BOARD = """Great Kingdom Board 101: alice (Black) vs bob (White)
It is bob's turn (White).

Moves:
   1. alice        D4 (captures 2)

   A B C D E F G H J
 9 . . . . . . . . . 9
 5 . . . X . . . . . 5

To move, reply to this mail with your move on the first line
(anything after the first line is sent to your opponent as a comment).
Your private page: http://pbm.test/play/abcdefghijabcdefghij"""


def headers_and_text(**kwargs):
    """The headers and text ``compose`` would write, through both paths' common start."""
    seen = {}

    def capture(headers, text):
        seen.update(headers=headers, text=text)
        return None

    original = outbound._plain
    outbound._plain = capture
    try:
        outbound.compose(SETTINGS, now=NOW, **kwargs)
    finally:
        outbound._plain = original
    return seen["headers"], seen["text"]


def both(**kwargs):
    headers, text = headers_and_text(**kwargs)
    return outbound._plain(headers, text), outbound._through_email(headers, text, ())


@pytest.mark.parametrize("in_reply_to", [
    None, "<short@players.test>",
    "<CAHk-=wj7a3fL9LXbN5q0y8jQ2mG7rF3bU1d4eA6cK8vT0zP9sw@mail.gmail.com>",  # References folds
    "<" + "x" * 60 + "@players.test>",  # In-Reply-To folds too
])
@pytest.mark.parametrize("reply_to", [None, "pbm+101.abcdefghijabcdefghij@pbm.test"])
def test_a_board_mail_is_written_directly_as_email_writes_it(in_reply_to, reply_to):
    fast, reference = both(to="alice@players.test", subject="Great Kingdom Board 101 bob", body=BOARD,
                           reply_to=reply_to, board_id=101, in_reply_to=in_reply_to)
    assert fast is not None, "a plain board mail should not need email's path"
    assert fast == reference


@pytest.mark.parametrize("case", [
    {"subject": "Grüße zum Spiel"},  # non-ASCII header
    {"body": "Zug D4 — danke"},  # non-ASCII body: quoted-printable
    {"to": "jörg@bücher.example"},  # SMTPUTF8 or IDNA
    {"to": "o'brien@players.test"},  # an address of more than letters, digits and dots
    {"subject": "two  spaces"},
    {"in_reply_to": "<" + "y" * 90 + "@players.test>"},  # a word longer than a line
    {"body": "tab\tand form feed\x0c"},
])
def test_what_is_not_plain_takes_the_email_path(case):
    kwargs = {"to": "alice@players.test", "subject": "pbm help", "body": "Hello.", "board_id": None, **case}
    headers, text = headers_and_text(**kwargs)
    assert outbound._plain(headers, text) is None
    assert outbound.compose(SETTINGS, now=NOW, **kwargs).raw.startswith(b"From: pbm <pbm@pbm.test>\r\n")


@pytest.mark.parametrize("field", ["subject", "in_reply_to"])
def test_no_encoded_word_is_decoded_into_a_header(field):
    """A subject holds players' names and addresses, an answer's In-Reply-To the id
    of the mail answered: ``email`` would decode an encoded word there, line breaks
    and all, into headers and a body of the sender's choosing."""
    injected = "=?utf-8?q?x=0D=0ABcc:=20victim@third.example=0D=0A=0D=0AInjected?="
    value = f"<{injected}@x>" if field == "in_reply_to" else f"Go Board 101 {injected}"
    raw = outbound.compose(SETTINGS, now=NOW, to="alice@players.test", body="Hello.", board_id=101,
                           **{"subject": "pbm help", field: value}).raw
    mail = message_from_bytes(raw, policy=policy.default)
    assert mail["Bcc"] is None and "Injected" not in mail.get_content() and mail.get_content().strip() == "Hello."
    if field == "subject":
        assert str(mail["Subject"]) == "Go Board 101 = ?utf-8?q?x=0D=0ABcc:=20victim@third.example=0D=0A=0D=0AInjected?="
    else:
        assert mail["In-Reply-To"] == "<board-101@pbm.test>"  # only the board's thread: the id is dropped


def test_an_address_email_would_write_otherwise_is_refused():
    """``email`` decodes encoded words in addresses too, and writes some as ``<>``."""
    for address in ("=?utf-8?q?v=40other.example=2C?=w@evil.example", "a@evil.example.", "x@evil..example"):
        assert not outbound.writable_address(address)
        with pytest.raises(ValueError):
            outbound.compose(SETTINGS, now=NOW, to=address, subject="pbm help", body="Hello.")
    assert outbound.writable_address("alice@players.test") and outbound.writable_address("jörg@bücher.example")


def test_random_plain_mails_are_the_bytes_email_writes():
    """Seeded random headers and bodies near the limits (line lengths about 78, long
    References, words of every printable character): whenever the direct path
    takes a mail, its bytes are email's."""
    rng = random.Random(20261130)
    printable = string.ascii_letters + string.digits + string.punctuation
    taken = 0
    for _ in range(3000):
        def word(longest):
            return "".join(rng.choice(printable) for _ in range(rng.randint(1, longest)))
        subject = " ".join(word(20) for _ in range(rng.randint(1, 6)))
        in_reply_to = rng.choice([None, "<" + word(40) + "@" + word(30) + ">", " ".join(word(35) for _ in range(3))])
        body = "\n".join(rng.choice(["", "From ", ".", " ", "\t"]) + " ".join(word(12) for _ in range(rng.randint(0, 9)))
                         + rng.choice(["", " ", "  "]) for _ in range(rng.randint(1, 12)))
        fast, reference = both(to=rng.choice(["a@players.test", "first.last+tag@sub.players-x.test"]),
                               subject=subject, body=body, board_id=rng.choice([None, 7, 123456]),
                               reply_to=rng.choice([None, "pbm+7.tok@pbm.test"]), in_reply_to=in_reply_to)
        if fast is not None:
            taken += 1
            assert fast == reference, (subject, in_reply_to, body)
    assert taken > 1000  # the comparison is about the direct path, not about nothing


def test_a_long_line_that_stops_mid_sentence_hands_its_overflow_to_the_next():
    """A paragraph whose names came out long: no word is left alone on a line."""
    paragraph = ("alice is on vacation until 2026-12-05 12:00 UTC.\n"
                 "Your boards with alice (101, 102, 107, 113, 114, 115) wait: no reminders and no\n"
                 "expiry until then, and the deadlines move on by the days alice is away.")
    assert outbound.wrap(paragraph).split("\n") == [
        "alice is on vacation until 2026-12-05 12:00 UTC.",
        "Your boards with alice (101, 102, 107, 113, 114, 115) wait: no reminders and",
        "no expiry until then, and the deadlines move on by the days alice is away."]


@pytest.mark.parametrize("following", ["  5  .  .  .  .  #  .  .  .  .  5", "> quoted", "", "Moves:"])
def test_a_long_line_ending_a_sentence_or_before_a_board_keeps_the_next_line_as_it_is(following):
    ended = "It is bob's turn. " + "The territory stands as the board shows it, " * 2 + "so far."
    after_open = "The territory stands as the board shows it and " * 2
    for line in (ended, after_open.strip()):
        wrapped = outbound.wrap(line + "\n" + following).split("\n")
        if line is ended or not following[:1].isalpha():
            assert wrapped[-1] == following and all(len(w) <= outbound.MAX_LINE for w in wrapped)
