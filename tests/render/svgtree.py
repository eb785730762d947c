"""Reading the pictures back: parse the SVG text and find its parts."""

import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    """The root element; parsing fails unless the text is well-formed XML."""
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


def classed(root: ET.Element, *words: str) -> list[ET.Element]:
    """Elements whose class attribute holds all ``words``."""
    return [e for e in root.iter() if set(words) <= set((e.get("class") or "").split())]


def one(root: ET.Element, *words: str) -> ET.Element:
    found = classed(root, *words)
    assert len(found) == 1, f"expected one element of class {words}, found {len(found)}"
    return found[0]


def children(element: ET.Element, tag: str) -> list[ET.Element]:
    return [e for e in element if e.tag == NS + tag]


def hooks(root: ET.Element, name: str) -> list[str]:
    """The values of one data attribute (``data-point``, ``data-cell``) in document order."""
    return [e.get(name) for e in root.iter() if e.get(name) is not None]


def texts(root: ET.Element) -> list[str]:
    return [e.text for e in root.iter(NS + "text")]


def assert_board_root(root: ET.Element, move_number: int) -> None:
    """The hooks every board picture carries (interface.md, "Web play")."""
    assert "board" in root.get("class").split()
    assert root.get("data-move-number") == str(move_number)
    assert root.get("role") == "img" and root.get("aria-label")
    title = children(root, "title")
    assert title and title[0].text == root.get("aria-label")
    assert not list(root.iter(NS + "script"))
    assert all(e.get("id") is None and e.get("style") is None for e in root.iter())


def centre(element: ET.Element) -> tuple[float, float]:
    """The middle of a circle or rect."""
    if element.tag == NS + "circle":
        return float(element.get("cx")), float(element.get("cy"))
    return (float(element.get("x")) + float(element.get("width")) / 2,
            float(element.get("y")) + float(element.get("height")) / 2)
