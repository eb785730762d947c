"""HTML mail to plain text: how the server reads a mail that has no text part.

Read as browsers read it, in one pass and in time linear in its length (a
hostile mail may hold megabytes of nested or unclosed markup): line breaks
kept, blockquotes marked as quotes, hidden parts (style, script) dropped,
at most ``limit`` characters kept.
"""

from __future__ import annotations

import re
from html import unescape


class _HtmlText:
    """HTML to plain text in one pass: line breaks kept, text inside blockquotes
    marked quoted with one '> ' whatever the depth, at most ``limit`` characters."""

    BLOCKS = {"p", "div", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "hr"}
    HIDDEN = {"style", "script", "head", "title"}

    def __init__(self, limit: int):
        self.lines: list[str] = []
        self.line: list[str] = []  # pieces of the line being built (joined once: linear)
        self.size, self.limit = 0, limit
        self.depth = 0  # blockquote nesting
        self.hidden = 0

    def start_tag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag == "br":
            self._newline()
        elif tag == "blockquote":
            self._end_block()
            self.depth += 1
        elif tag in self.BLOCKS:
            self._end_block()

    def end_tag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "blockquote":
            self._end_block()
            self.depth = max(0, self.depth - 1)
        elif tag in self.BLOCKS:
            self._end_block()

    def data(self, data: str) -> None:
        if self.hidden:
            return
        for i, piece in enumerate(_unescaped(data).split("\n")):
            if self.size > self.limit:
                return
            if i:
                self._newline()
            if piece.strip():
                piece = re.sub(r"\s+", " ", piece)
                if not self.line and self.depth:
                    piece = "> " + piece
                piece = piece[:self.limit + 1 - self.size]
                self.line.append(piece)
                self.size += len(piece)

    def _newline(self):
        if self.line or self.size <= self.limit:
            self.lines.append("".join(self.line).rstrip())
            self.size += 1
        self.line = []

    def _end_block(self):
        """A block starts or ends: a new line, but no blank line between adjacent blocks."""
        if self.line:
            self._newline()

    def text(self) -> str:
        self._end_block()
        return "\n".join(self.lines).strip("\n")


_HUGE_REFERENCE = re.compile(r"&#[xX]?0*+[0-9a-fA-F]{8,}")  # no character has a number this long


def _unescaped(text: str) -> str:
    """``html.unescape``, but a numeric reference of thousands of digits (which int()
    refuses past 4,300) is left as text, as it names no character."""
    return unescape(_HUGE_REFERENCE.sub(lambda m: "&amp;" + m[0][1:], text))


_TAG = re.compile(r"<(/?)([a-zA-Z][^\s/>]*)")  # a start or end tag's beginning and its name
_MARKUP = re.compile(r"<[!?/]")  # a comment, declaration, processing instruction or odd end tag


def html_to_text(html: str, limit: int) -> str:
    """Plain text of an HTML body, in time linear in its length; text past about
    ``limit`` characters is dropped. Read as browsers read it: a tag runs to the next
    ``>``, a comment to the next ``-->``, a ``<`` that begins no tag is text, and
    markup left open at the end is dropped. (Not ``html.parser``: it takes
    quadratic time on tags left open, ``<a <a <a ...``, and fails on ``<![``.)"""
    out = _HtmlText(limit)
    position, length = 0, len(html)
    while position < length and out.size <= out.limit:
        opening = html.find("<", position)
        if opening < 0:
            out.data(html[position:])
            break
        if opening > position:
            out.data(html[position:opening])
        tag = _TAG.match(html, opening)
        if html.startswith("<!--", opening):
            closing, after = html.find("-->", opening + 4), 3
        elif tag or _MARKUP.match(html, opening):
            closing, after = html.find(">", opening + 1), 1
        else:  # "a < b": text
            out.data("<")
            position = opening + 1
            continue
        if closing < 0:  # open to the end: nothing more to read
            break
        if tag:
            name = tag.group(2).lower()
            if tag.group(1):
                out.end_tag(name)
            else:
                out.start_tag(name)
        position = closing + after
    return out.text()
