"""What to send instead: each command's forms, as an error mail's "Send instead:" line
and the help list them (the command words as typed; the joining words and notes in
the reader's language)."""

from __future__ import annotations

from . import i18n
from .i18n import N_


class Usage:
    """A command's forms, for the "Send instead:" line of an error mail: the command
    words stay as they are typed, but the word between two forms and a ``note`` about
    them are in the reader's language (made when the line becomes text)."""

    def __init__(self, *forms: str, note: str | None = None):
        self.forms, self.note = forms, note

    def __str__(self) -> str:
        text = self.forms[0]
        for form in self.forms[1:]:
            text = i18n.gettext("%(first)s   or   %(second)s", first=text, second=form)
        return f"{text}   ({i18n.gettext(self.note)})" if self.note else text


USAGE = {
    "help": Usage("help", "<game> help"),
    "signup": Usage("signup <userid> <password> [<email>]"),
    "change": Usage("change password <userid> <old> <new>", "change address <userid> <password> <email>"),
    "challenge": Usage("<game> challenge <user1> <user2> [-option=value ...] [--nagtime=D --expiretime=D]"),
    "move": Usage("<game> move <board> <userid> <password> <move>[#n]"),
    "resign": Usage("<game> resign <board> <userid> <password>"),
    "show": Usage("<game> show <board>[#n]"),
    "games": Usage("<game> games [<userid>] [next | active | all]"),
    "list": Usage("<game> list"),
    "history": Usage("<game> history <board>"),
    "preview": Usage("<game> preview <board>[#n] <move> [<move> ...]"),
    "language": Usage("language <userid> <password> de|en"),
    # social
    "subscribe": Usage("<game> subscribe <board> <userid> <password>", "<game> subscribe <userid> <password> all"),
    "unsubscribe": Usage("<game> unsubscribe <board> <userid> <password>",
                         "<game> unsubscribe <userid> <password> all"),
    "chat": Usage("<game> chat <board> <userid> <password>", note=N_("the body of the mail is the chat")),
    "message": Usage("message <userid> <password> <userid> [<userid> ...]",
                     note=N_("the body of the mail is the message")),
    "vacation": Usage("vacation <userid> <password> <days>", "vacation <userid> <password> off"),
    "add": Usage("add <userid> <password> <email>"),
    "signoff": Usage("signoff <userid> <password>"),
    "all": Usage("all show <userid> [next | active]"),
    # ratings and challenge control
    "standings": Usage("<game> standings", "<game> ratings"),
    "accept": Usage("<game> accept <userid> <password>"),
    "reject": Usage("<game> reject <userid> <password>"),
    "limit": Usage("<game> limit <userid> <password> <n>", note=N_("0: no limit")),
    # a move kept for later (service.requests)
    "queue": Usage("<game> queue <board> <userid> <password> <move>"),
    "submit": Usage("<game> submit <board> <userid> <password> <move>"),
    "confirm": Usage("<game> confirm <board> <userid> <password>"),
}
USAGE["ratings"] = USAGE["standings"]  # one command, two names

