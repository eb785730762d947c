"""Small helpers to write SVG text: numbers, escaping, elements, the board root.

Every picture is built as strings: the boards are small, and writing the
markup directly keeps the output short (19x19 Go stays far under 60 KB).
Presentation attributes only, no ``style`` and no ids, so a page may hold
several pictures and a Content-Security-Policy without 'unsafe-inline'
styles still shows them.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
INK = "#1a1a1a"  # text and lines: dark enough on every background used here


def num(value: float) -> str:
    """A coordinate as short text: at most 3 decimals, no trailing zeros, no
    leading zero (``0.5`` -> ``.5``, ``-0.25`` -> ``-.25``, ``2.0`` -> ``2``)."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    if text in ("-0", ""):
        return "0"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return text


def attr(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return num(value)
    return escape(str(value), {'"': "&quot;"})


def el(name: str, *children: str, **attrs) -> str:
    """One element. Attribute names use ``_`` for ``-`` (``stroke_width``) and a
    trailing ``_`` for Python keywords (``class_``); None values are left out.
    Children are markup already (use :func:`text` for plain text)."""
    parts = [name]
    for key, value in attrs.items():
        if value is None:
            continue
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{attr(value)}"')
    head = " ".join(parts)
    body = "".join(children)
    return f"<{head}>{body}</{name}>" if body else f"<{head}/>"


def point_hooks(points, radius: float) -> str:
    """The ``[data-point]`` hooks: one invisible disc per point, ``points`` being
    (name, x, y) in the picture, drawn on top of everything. Every picture of a
    point game carries them (interface.md names each point); a click plays only
    on a play page, whose script knows the legal moves (its ``data-targets``)."""
    discs = [el("circle", data_point=name, cx=x, cy=y, r=radius) for name, x, y in points]
    return el("g", *discs, fill="none", pointer_events="all", class_="points")


def text(value) -> str:
    """Plain text as element content."""
    return escape(str(value))


def label(x: float, y: float, value, size: float, **attrs) -> str:
    """Centred text whose middle sits on (x, y)."""
    return el("text", text(value), x=x, y=y, font_size=size, text_anchor="middle",
              dominant_baseline="central", **attrs)


def caption(x: float, y: float, words: str, width: float, size: float = 0.42, **attrs) -> str:
    """A centred line of text, its font made smaller if needed to fit ``width``
    (an average character of the sans-serif fonts is taken as 0.6 em wide)."""
    fitted = min(size, 0.95 * width / (0.6 * max(len(words), 1)))
    return label(x, y, words, fitted, fill=INK, class_="caption", **attrs)


def points(pairs) -> str:
    """The ``points`` of a polygon or polyline."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in pairs)


def document(*body: str, width: float, height: float, title: str, kind: str,
             move_number: int | None = None, x: float = 0, y: float = 0, **attrs) -> str:
    """The root ``<svg>``: ``class="board <kind>"`` (or the class given), a viewBox of
    the given size, ``role="img"`` with ``title`` as its accessible name (aria-label
    and <title>), ``data-move-number`` when given. Without width/height attributes
    the picture fills the width of its container."""
    attrs.setdefault("class_", f"board {kind}")
    head = el("title", text(title))
    return el("svg", head, *body, xmlns=SVG_NS, viewBox=f"{num(x)} {num(y)} {num(width)} {num(height)}",
              data_move_number=move_number, role="img", aria_label=title,
              font_family=FONT, **attrs)
