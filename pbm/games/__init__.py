"""Pure game rules, registered by name. Importing this package registers every game."""

from . import dragons, go, greatkingdom, twodragons, twotigers  # noqa: F401  (each registers itself)
from .base import (  # noqa: F401
    REGISTRY,
    Consequences,
    Game,
    GameError,
    GameText,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    OptionError,
    Outcome,
    game_names,
    get_game,
    plain_number,
)
from .said import as_typed  # noqa: F401
