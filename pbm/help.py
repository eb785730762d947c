"""The general help text (each game's own help lives with its rules)."""

from .config import Settings
from .games import REGISTRY


def general(settings: Settings) -> str:
    games = "\n".join(f"    {name:<14} {game.title}" for name, game in sorted(REGISTRY.items()))
    return f"""\
pbm, a play-by-email game server. Put a command in the Subject of a mail to
{settings.server_address} (or on the first line of the body). Words may be
abbreviated while they stay unambiguous; case does not matter.

Accounts
    signup <userid> <password> [<email>]
    change password <userid> <old> <new>
    change address <userid> <password> <email>

Games
{games}

Playing
    <game> help                          rules, notation and an example board
    <game> challenge <user1> <user2> [-option=value ...]
                     [--nagtime=D --expiretime=D]
        user1 moves first; a user is a userid or an email address (an
        address without an account gets an invitation).
    <game> move <board> <userid> <password> <move>[#n]
        #n makes sure this is move number n; the body is your comment.
    <game> move <board> <userid> <password> pass   (or resign)
    <game> resign <board> <userid> <password>
    <game> show <board>[#n]       the board, or the position after move n
    <game> history <board>               every move with its comment
    <game> games [<userid>]   <game> list    the boards
    <game> move <board> <userid> <password> newround
        after a game has ended: when both players ask, a fresh board
        starts with the same players, sides and options.

Replying is playing: answer a board mail with your move on the first line
(D4, pass, resign ...). No password is needed; the reply must come from
your registered address. The rest of your reply goes to your opponent.

Several commands at once: Subject "multiple", one command per line in the
body.

Idle games: the player to move is reminded after {settings.nag_days:g} days; after
{settings.expire_days:g} days the game ends and that player forfeits (a game in which
not both players have moved yet is cancelled).

Boards on the web: {settings.base_url}/
"""
