"""Reading real-world mail: MIME structures, encodings, auto-replies, reply tags."""

from email.message import EmailMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

import pytest

from pbm.mail.inbound import (
    MAX_BODY_CHARS,
    MAX_COMMAND_LINE,
    MalformedMail,
    find_reply_tag,
    html_to_text,
    parse_mail,
)
from pbm.mail.replies import split_command, visible_reply


def test_multipart_alternative_prefers_the_plain_part():
    m = MIMEMultipart("alternative")
    m["From"] = "Alice <Alice@Players.Test>"
    m["Subject"] = "greatkingdom show 101"
    m.attach(MIMEText("plain text\n", "plain"))
    m.attach(MIMEText("<p>html text</p>", "html"))
    mail = parse_mail(m.as_bytes())
    assert mail.sender == "alice@players.test"
    assert mail.body.strip() == "plain text"


def test_html_only_mail_is_read_as_text_and_blockquotes_are_quoted():
    m = EmailMessage()
    m["From"] = "bob@players.test"
    m["Subject"] = "Re: Great Kingdom Board 101 bob"
    m.set_content("<html><head><style>p{}</style></head><body><div>D4</div><div>good luck&nbsp;&amp; "
                  "have fun</div><blockquote><p>old board</p></blockquote></body></html>", subtype="html")
    mail = parse_mail(bytes(m))
    assert split_command(visible_reply(mail.body)) == ("D4", "good luck & have fun")


@pytest.mark.parametrize("cte", ["quoted-printable", "base64"])
def test_transfer_encodings_are_decoded(cte):
    m = EmailMessage()
    m["From"] = "carol@players.test"
    m["Subject"] = "signup carol pw"
    m.set_content("Grüße aus Köln, a line long enough to be folded by quoted printable encoding "
                  "when it goes over seventy-six characters\n", cte=cte)
    assert f"Content-Transfer-Encoding: {cte}" in m.as_string()
    mail = parse_mail(bytes(m))
    assert "Grüße aus Köln" in mail.body and "seventy-six characters" in mail.body


def test_non_utf8_charset_is_decoded():
    raw = ("From: dave@players.test\nSubject: hello\nContent-Type: text/plain; charset=iso-8859-1\n"
           "Content-Transfer-Encoding: 8bit\n\nD\xe9j\xe0 vu\n").encode("latin-1")
    assert parse_mail(raw).body.strip() == "Déjà vu"


def test_a_lying_charset_does_not_crash():
    raw = b"From: eve@players.test\nSubject: x\nContent-Type: text/plain; charset=no-such-charset\n\nD4 \xff\n"
    assert parse_mail(raw).body.startswith("D4")


def test_encoded_subject_is_decoded():
    raw = b"From: f@players.test\nSubject: =?utf-8?q?greatkingdom_show_101?=\n\n"
    assert parse_mail(raw).subject == "greatkingdom show 101"


def test_mail_without_sender_is_refused():
    with pytest.raises(ValueError, match="no sender"):
        parse_mail(b"Subject: help\n\nhello\n")


@pytest.mark.parametrize("headers, reason", [
    ({"Auto-Submitted": "auto-replied"}, "Auto-Submitted"),
    ({"Precedence": "bulk"}, "Precedence"),
    ({"Precedence": "list"}, "Precedence"),
    ({"Precedence": "junk"}, "Precedence"),
    ({"X-Autoreply": "yes"}, "X-Autoreply"),
    ({"Return-Path": "<>"}, "empty return path"),
])
def test_auto_replies_are_recognised(headers, reason):
    m = EmailMessage()
    m["From"] = "h@players.test"
    m["Subject"] = "Out of office"
    for k, v in headers.items():
        m[k] = v
    m.set_content("I am away.")
    assert reason in parse_mail(bytes(m)).automatic


def test_bounces_are_recognised():
    m = EmailMessage()
    m["From"] = "MAILER-DAEMON@mx.players.test"
    m["Subject"] = "Undelivered Mail Returned to Sender"
    m.set_content("gone")
    assert parse_mail(bytes(m)).automatic == "sent by mailer-daemon"
    report = MIMEMultipart("report")
    report["From"] = "postmaster2@mx.players.test"
    report.attach(MIMEText("failed"))
    assert parse_mail(report.as_bytes()).automatic == "delivery report"


def test_normal_mail_and_auto_submitted_no_are_answered():
    m = EmailMessage()
    m["From"] = "i@players.test"
    m["Auto-Submitted"] = "no"
    m.set_content("help")
    assert parse_mail(bytes(m)).automatic is None


def test_quoted_reply_and_signature_are_removed():
    body = ("E4\nWatch your left flank!\n\n-- \nBob, sent from the train\n\n"
            "On Sun, Nov 29, 2026 at 10:00 AM pbm <pbm@pbm.test> wrote:\n> It is bob's turn.\n> board\n")
    assert split_command(visible_reply(body)) == ("E4", "Watch your left flank!")


def test_quote_above_the_answer_is_skipped():
    assert split_command(visible_reply("> old\n> board\n\npass\n")) == ("pass", "")


def test_reply_tag_is_found_in_any_recipient():
    recipients = ["someone@else.test", "pbm+101.abc123@pbm.test"]
    assert find_reply_tag(recipients, "pbm") == (101, "abc123")
    assert find_reply_tag(["pbm@pbm.test"], "pbm") is None


def test_html_to_text_keeps_lines():
    assert html_to_text("a<br>b<p>c</p>") == "a\nb\nc"


@pytest.mark.parametrize("html, text", [
    ("<p>go show 101 &amp; more</p><!-- a <p> comment -->", "go show 101 & more"),
    ("if a < b then<br>D4", "if a < b then\nD4"),
    ("<style>p {}</style><div>D4</div><script>x</script>", "D4"),
    ("D4<a <a <a <a ", "D4"),  # a tag left open to the end is dropped, as browsers drop it
    ("D4<![<![<![ help", "D4"),  # html.parser failed on this
    ("<![CDATA[x]]>D4<?xml x?></odd >", "D4"),
])
def test_html_to_text_reads_as_browsers_do(html, text):
    assert html_to_text(html) == text


@pytest.mark.parametrize("raw, reason", [
    (b"From: a@players.test\nSubject: help\nX-Junk: " + b"y" * 70_000 + b"\n\nhelp\n", "header section is over 64 KiB"),
    (b"From: a@players.test\nSubject: " + b"go " * 400 + b"\n\n", "subject is over 1,000 characters"),
    (b"From: a@players.test\nSubject: Re: x\n\n" + b"word " * 30_000, "text is over 100,000 characters"),
    (b"From: a@players.test\nSubject: Re: x\nContent-Type: multipart/mixed; boundary=q\n\n--q\n"
     b"Content-Type: application/octet-stream\n\n" + b"x" * 200_000 + b"\n--q--\n", "text is not within"),
    (b"From: a@players.test\nSubject: Re: x\n" + b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n"
                                                        % (i, i) for i in range(200)), "over 100 nested parts"),
])
def test_a_mail_too_large_to_read_says_why(raw, reason):
    mail = parse_mail(raw)
    assert mail.sender == "a@players.test"
    said = str(mail.too_large)
    assert said.startswith("This mail is too large to read: ") and reason in said
    assert len(mail.body) <= MAX_BODY_CHARS and len(mail.subject) <= MAX_COMMAND_LINE


def test_an_ordinary_mail_is_not_too_large():
    m = EmailMessage()
    m["From"] = "a@players.test"
    m.set_content("D4\n" + "a comment line\n" * 1_000)
    m.add_attachment(b"\x89PNG" * 500_000, maintype="image", subtype="png", filename="board.png")
    mail = parse_mail(bytes(m))
    assert mail.too_large is None and mail.body.startswith("D4")


def test_control_characters_and_8bit_headers_are_cleaned():
    raw = ("From: a@players.test\nMessage-ID: <a\tb c\x01@x>\nSubject: Grüße\x00 go\n\nD4\x00\x07\n").encode()
    mail = parse_mail(raw)
    assert (mail.message_id, mail.subject, mail.body.strip()) == ("<abc@x>", "Grüße go", "D4")


def test_a_control_character_between_words_is_a_space_in_subject_and_body():
    raw = b"From: a@players.test\nSubject: go show 1\x001\x1b2\n\nshow 1\x001\x7f2\n"
    mail = parse_mail(raw)
    assert (mail.subject, mail.body.strip()) == ("go show 1 1 2", "show 1 1 2")


@pytest.mark.parametrize("sender", [b"a@b@", b"(" * 3000 + b"a@b.test", b"x" * 300 + b"@players.test", b"a b@c.test"])
def test_an_unusable_sender_is_malformed(sender):
    with pytest.raises(MalformedMail):
        parse_mail(b"From: " + sender + b"\nSubject: help\n\nhelp\n")


def test_reply_tag_board_numbers_stay_in_range():
    assert find_reply_tag(["pbm+" + "9" * 10 + ".abc@pbm.test"], "pbm") is None
    assert find_reply_tag(["pbm+" + "9" * 4300 + ".abc@pbm.test"], "pbm") is None
    assert find_reply_tag(["pbm+999999999.abc@pbm.test"], "pbm") == (999_999_999, "abc")


def _flowed(text: str, delsp: bool = False) -> bytes:
    params = "charset=utf-8; format=flowed" + ("; delsp=yes" if delsp else "")
    return (f"From: alice@players.test\nTo: pbm@pbm.test\nSubject:\nContent-Type: text/plain; {params}\n\n"
            + text).encode()


def test_format_flowed_soft_breaks_are_joined_as_the_writer_typed():
    # Thunderbird wraps at 72 columns and ends each soft break with a space
    mail = parse_mail(_flowed("greatkingdom challenge alice bob -size=7 --nagtime=2 \n--expiretime=3\n"
                              "a wrapped \ncomment\n From here, space-stuffed\n> quoted\n-- \nAlice\n"))
    assert mail.body == ("greatkingdom challenge alice bob -size=7 --nagtime=2 --expiretime=3\n"
                         "a wrapped comment\nFrom here, space-stuffed\n> quoted\n-- \nAlice\n")


def test_format_flowed_with_delsp_drops_the_space_of_each_soft_break():
    assert parse_mail(_flowed("greatkingdom chal \nlenge alice bob\n", delsp=True)).body == \
        "greatkingdom challenge alice bob\n"


def test_format_flowed_joins_only_lines_of_the_same_quote_depth():
    assert parse_mail(_flowed("> quoted and \n>> deeper \nplain\n")).body == "> quoted and \n>> deeper \nplain\n"


def test_text_that_is_not_flowed_keeps_its_trailing_spaces_as_line_ends():
    raw = b"From: a@players.test\nTo: pbm@pbm.test\nSubject:\nContent-Type: text/plain\n\none \ntwo\n"
    assert parse_mail(raw).body == "one \ntwo\n"


@pytest.mark.parametrize("subject", ["[pbm-list] Re: Great Kingdom Board 101", "[a] [b] AW: x", "Re: x"])
def test_a_list_tag_before_re_is_still_a_reply_subject(subject):
    raw = f"From: a@players.test\nTo: pbm@pbm.test\nSubject: {subject}\n\nhelp\n".encode()
    assert parse_mail(raw).is_reply_subject


def test_a_subject_with_brackets_that_is_no_reply_is_a_command():
    assert not parse_mail(b"From: a@players.test\nTo: pbm@pbm.test\nSubject: [x] help\n\n").is_reply_subject


def test_a_mail_without_message_id_is_known_by_its_bytes_only_when_it_has_a_date():
    bare = b"From: a@players.test\nSubject: go move 101 a pw pass\n\n"
    assert parse_mail(bare).message_id != parse_mail(bare).message_id  # hand-made: each is its own mail
    dated = b"From: a@players.test\nDate: Tue, 01 Dec 2026 05:00:00 +0000\nSubject: go move 101 a pw pass\n\n"
    assert parse_mail(dated).message_id == parse_mail(dated).message_id  # delivered again: the same mail
    assert parse_mail(dated).message_id.startswith("<sha256-")
    assert parse_mail(dated).message_id != parse_mail(dated + b"x").message_id


def test_a_numeric_reference_of_thousands_of_digits_is_text_not_a_failure():
    huge = "&#" + "1" * 5000 + ";"  # int() refuses past 4,300 digits
    assert html_to_text(f"<p>D4</p>{huge} &#65;&#x42;&#0000000067;") == f"D4\n{huge} ABC"
