"""The SVG writing helpers: short numbers, escaped text, attributes by name."""

from pbm.games.go import GO
from pbm.render import board_svg
from pbm.render.svg import el, num

from .svgtree import parse


def test_numbers_are_short():
    values = (2.0, 0.5, -0.25, 1.23456, -0.0001, 19, 0)
    assert [num(v) for v in values] == ["2", ".5", "-.25", "1.235", "0", "19", "0"]


def test_attribute_names_and_escaping():
    assert el("rect", stroke_width=0.5, class_="a", data_point="D4", fill=None) == \
        '<rect stroke-width=".5" class="a" data-point="D4"/>'
    assert el("text", "x &lt; y", x=1) == '<text x="1">x &lt; y</text>'
    assert el("g", aria_label='say "<hi>" & go') == '<g aria-label="say &quot;&lt;hi&gt;&quot; &amp; go"/>'


def test_whatever_the_last_move_text_the_picture_stays_well_formed():
    svg = board_svg("go", GO.initial_state({"size": 9}), move_number=0, last_move='D4 "<b>&')
    root = parse(svg)
    assert root.get("aria-label").endswith('last move D4 "<b>&')
