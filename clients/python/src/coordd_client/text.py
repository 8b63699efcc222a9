"""Someone else's text made safe to print, and the wire's time parsed: the two text rules
the library itself needs (the human's name is cleaned, presence reads `last_seen`).

How things are worded to people and models is the apps' (`coordd_apps.wording`);
`wording.render` re-exports these for its callers.
"""

from __future__ import annotations

from datetime import UTC, datetime

#: Characters a terminal may act on: C0 controls, DEL, C1 controls (ESC's 8-bit
#: twins), the Unicode line and paragraph separators, and the bidirectional
#: overrides that reorder what is shown ("Trojan Source"). Shown escaped, so a
#: title cannot forge a board row, retitle the terminal or hide text.
_UNSAFE = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_UNSAFE.update({c: f"\\u{c:04x}" for c in (0x2028, 0x2029, 0x200E, 0x200F, *range(0x202A, 0x202F))})
_UNSAFE.update({c: f"\\u{c:04x}" for c in range(0x2066, 0x206A)})
_UNSAFE_IN_BLOCK = {c: text for c, text in _UNSAFE.items() if c not in (0x0A, 0x09)}


def clean(text: str) -> str:
    """One line of someone else's text, safe to print: controls shown as `\\x1b`."""
    if text.isascii() and text.isprintable():  # no control, nothing to show
        return text
    return text.translate(_UNSAFE)


def clean_block(text: str) -> str:
    """Several lines of someone else's text: newlines and tabs kept, other controls escaped."""
    return text.translate(_UNSAFE_IN_BLOCK)


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
