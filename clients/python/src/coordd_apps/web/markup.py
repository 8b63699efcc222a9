"""HTML built from strings, with everything that came from outside escaped.

Agents write titles, bodies, results, names and patterns, and any of them may
be `<script>`: each goes through `esc` (HTML-escaped, and the characters that
reorder or hide text shown as escapes, as the terminal output does), and
`Html` marks the fragments this package wrote itself, so a caller cannot
forget which is which: `tag` escapes every `str` it is given, and passes
`Html` through.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from coordd_client.text import clean_block


class Html(str):
    """A fragment of markup this package wrote; everything else is text to escape."""

    __slots__ = ()

    def __add__(self, other: str) -> Html:
        """Markup followed by more: text that is not `Html` is escaped on the way in."""
        return Html(str.__add__(self, esc(other)))


def esc(text: object) -> Html:
    """Someone else's text, safe inside an element or a quoted attribute."""
    if isinstance(text, Html):
        return text
    return Html(html.escape(clean_block(str(text)), quote=True))


def join(parts: Iterable[object]) -> Html:
    return Html("".join(esc(p) for p in parts))


def tag(name: str, /, *children: object, **attrs: object) -> Html:
    """`<name attrs>children</name>`; `class_` is `class`, `data_x` is `data-x`, a True
    attribute is written bare, and None or False is left out."""
    written = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        written.append(f" {attr}" if value is True else f' {attr}="{esc(value)}"')
    return Html(f"<{name}{''.join(written)}>{join(children)}</{name}>")


def void(name: str, /, **attrs: object) -> Html:
    """An element with no content (`input`, `link`, `meta`)."""
    return Html(tag(name, **attrs).removesuffix(f"</{name}>"))
