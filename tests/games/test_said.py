"""A game's refusal repeats what the player typed: in double quotes, as typed, with
what would show nothing or turn the text around shown as U+FFFD."""

import pytest

from pbm.games import InvalidMoveError, as_typed, get_game


def test_as_typed_keeps_what_shows_and_marks_what_does_not():
    assert as_typed("D4 o'clock \\ é 龍 🐉") == "D4 o'clock \\ é 龍 🐉"
    assert as_typed("a\u202eb\u200bc\x00d\x1be\u2028f") == "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf"


@pytest.mark.parametrize("game_name, typed, sentence", [
    ("go", "castle\u202e", "\"castle\ufffd\" is not a point"),
    ("go", "D4 \u202eE5", "\"D4 \ufffdE5\" is not a Go move"),
    ("greatkingdom", "Z\x1b9", "\"Z\ufffd9\" is not a point"),
    ("twotigers", "q'\"9-b4", "\"q'\"9\" is not a point"),
    ("dragons", "7ne:\u202eB2", "\"7ne:\ufffdB2\" is not a Dragons move"),
])
def test_a_move_that_is_no_move_is_repeated_as_typed(game_name, typed, sentence):
    game = get_game(game_name)
    state = game.initial_state(game.parse_options({}))
    with pytest.raises(InvalidMoveError) as error:
        game.parse_move(typed, state)
    assert str(error.value).startswith(sentence)
