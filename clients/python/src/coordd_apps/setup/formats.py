"""The pieces setup owns inside other people's files, and how to add or take out each.

A `Piece` changes one file: `add` returns the text with the piece in (the
same text when it is in already: idempotent), `remove` the text without it
(None when nothing else is left and the file may go), `present` whether it
is in. Everything else in the file stays as it was: JSON keys it does not
own, TOML comments and order (`tomlkit`), Markdown outside its markers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BEGIN, END = "<!-- BEGIN COORD -->", "<!-- END COORD -->"
#: A hook command setup wrote: `... coord ... hook EVENT ...`.
OURS = re.compile(
    r"coord\S*\"?\s+(?:--(?:socket|agent)\s+\S+\s+)*hook\s+"
    r"(?:session-start|pre-edit|post-tool|wake|session-end|deliver|turn-end)"
)


class Unparsable(Exception):
    """A file setup must merge into but cannot read: nothing is written."""


@dataclass(frozen=True)
class Piece:
    add: Callable[[str | None], str]
    remove: Callable[[str], str | None]
    present: Callable[[str], bool]


# --- JSON -----------------------------------------------------------------------


def _load_json(text: str | None, name: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Unparsable(
            f"{name} is not valid JSON ({exc}); fix or move it, then run again"
        ) from None
    if not isinstance(value, dict):
        raise Unparsable(f"{name} holds JSON that is not an object; fix it, then run again")
    return value


def _dump_json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2) + "\n"


def json_entry(name: str, path: tuple[str, ...], entry: dict[str, Any]) -> Piece:
    """`entry` at `path` (e.g. mcpServers.coord), parents created and pruned as needed."""
    piece = _JsonEntry(name, path, entry)
    return Piece(piece.add, piece.remove, piece.present)


@dataclass(frozen=True)
class _JsonEntry:
    name: str
    path: tuple[str, ...]
    entry: dict[str, Any]

    def add(self, text: str | None) -> str:
        doc = _load_json(text, self.name)
        node = doc
        for key in self.path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        if node.get(self.path[-1]) == self.entry and text is not None:
            return text
        node[self.path[-1]] = self.entry
        return _dump_json(doc)

    def remove(self, text: str) -> str | None:
        doc = _load_json(text, self.name)
        path = self.path
        trail = [doc]
        for key in path[:-1]:
            child = trail[-1].get(key)
            if not isinstance(child, dict):
                return text
            trail.append(child)
        if path[-1] not in trail[-1]:
            return text
        del trail[-1][path[-1]]
        for depth in range(len(path) - 1, 0, -1):
            if not trail[depth]:
                del trail[depth - 1][path[depth - 1]]
        return _dump_json(doc) if doc else None

    def present(self, text: str) -> bool:
        node: Any = _load_json(text, self.name)
        for key in self.path:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return True


def _is_ours(group: Any) -> bool:
    return OURS.search(json.dumps(group)) is not None


def json_hooks(
    name: str,
    hooks: dict[str, list[dict[str, Any]]],
    *,
    under: tuple[str, ...],
    extra: dict[str, Any] | None = None,
) -> Piece:
    """Hook entries per event in a `{"hooks": {event: [...]}}` file, next to others' entries.

    Ours are recognised by their command (`coord ... hook EVENT`), so running setup
    again replaces them in place rather than adding a second copy.
    """
    piece = _JsonHooks(name, hooks, under, extra or {})
    return Piece(piece.add, piece.remove, piece.present)


@dataclass(frozen=True)
class _JsonHooks:
    name: str
    hooks: dict[str, list[dict[str, Any]]]
    under: tuple[str, ...]
    extra: dict[str, Any]

    def _events(self, doc: dict[str, Any]) -> dict[str, Any]:
        node = doc
        for key in self.under:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        return node

    def add(self, text: str | None) -> str:
        doc = _load_json(text, self.name)
        for key, value in self.extra.items():
            doc.setdefault(key, value)
        events = self._events(doc)
        for event, entries in self.hooks.items():
            existing = events.get(event)
            kept = [g for g in existing if not _is_ours(g)] if isinstance(existing, list) else []
            events[event] = kept + entries
        rendered = _dump_json(doc)
        if text is not None and _load_json(text, self.name) == doc:
            return text
        return rendered

    def remove(self, text: str) -> str | None:
        doc = _load_json(text, self.name)
        events = self._events(doc)
        for event in list(events):
            entries = events[event]
            if isinstance(entries, list):
                kept = [g for g in entries if not _is_ours(g)]
                if kept:
                    events[event] = kept
                else:
                    del events[event]
        if not events and self.under:
            doc.pop(self.under[0], None)
        for key, value in self.extra.items():
            if doc.get(key) == value and len(doc) == 1:
                del doc[key]
        return _dump_json(doc) if doc else None

    def present(self, text: str) -> bool:
        return _is_ours(_load_json(text, self.name))


# --- TOML -----------------------------------------------------------------------


def toml_table(
    name: str,
    path: tuple[str, str],
    values: dict[str, Any],
    *,
    merged: tuple[str, ...] = (),
    essential: str | None = None,
) -> Piece:
    """`[a.b]` with `values`, through tomlkit: comments, order and spacing survive.

    Setup owns the keys of `values` in that table, nothing else: a key someone
    added by hand (Codex's `env = { COORD_AGENT = ... }`) and their comments
    stay through a re-run. A key in `merged` holds a list that is shared: setup
    owns only its own entries in it (Codex's `env_vars`, where a user may have
    listed variables of their own), so they are appended to what is there.
    Removal takes out setup's keys and entries, and drops the table when no key
    is left, or when `essential` went with them: a Codex server table without
    its `command` stops Codex from starting at all ("invalid transport"), so
    what the user added to coord's server goes with the server.
    """
    try:
        import tomlkit  # light, but only setup needs it
    except ImportError:
        raise Unparsable(
            f"editing {name} needs tomlkit: pip install 'coordd-client[mcp]'"
        ) from None
    piece = _TomlTable(tomlkit, name, path, values, merged, essential)
    return Piece(piece.add, piece.remove, piece.present)


@dataclass(frozen=True)
class _TomlTable:
    tomlkit: Any
    name: str
    path: tuple[str, str]
    values: dict[str, Any]
    merged: tuple[str, ...]
    essential: str | None

    def _parse(self, text: str | None) -> Any:
        from tomlkit.exceptions import TOMLKitError

        try:
            return self.tomlkit.parse(text or "")
        except TOMLKitError as exc:
            raise Unparsable(
                f"{self.name} is not valid TOML ({exc}); fix it, then run again"
            ) from None

    def _table(self, doc: Any) -> Any:
        """The `[a.b]` table (or inline table), else None."""
        outer = doc.get(self.path[0])
        current = outer.get(self.path[1]) if isinstance(outer, dict) else None
        return current if isinstance(current, dict) else None

    def _new_value(self, key: str) -> Any:
        if key not in self.merged:
            return self.values[key]
        listed = self.tomlkit.array()
        listed.extend(self.values[key])
        return listed.multiline(True)

    def _missing(self, current: Any, key: str) -> list[Any]:
        """Setup's entries of merged list `key` that are not in the table's list."""
        there = current.get(key)
        if not isinstance(there, list):
            return list(self.values[key])
        return [entry for entry in self.values[key] if entry not in there]

    def _stale(self, current: Any) -> list[str]:
        stale = []
        for key, value in self.values.items():
            if key in self.merged:
                if not isinstance(current.get(key), list) or self._missing(current, key):
                    stale.append(key)
            elif key not in current or current[key].unwrap() != value:
                stale.append(key)
        return stale

    def _add_table(self, doc: Any) -> str:
        outer = doc.get(self.path[0])
        if not isinstance(outer, dict):
            outer = self.tomlkit.table(is_super_table=True)
            doc[self.path[0]] = outer
        table = self.tomlkit.table()
        for key in self.values:
            table[key] = self._new_value(key)
        outer[self.path[1]] = table
        return str(self.tomlkit.dumps(doc))

    def add(self, text: str | None) -> str:
        doc = self._parse(text)
        current = self._table(doc)
        if current is None:
            return self._add_table(doc)
        stale = self._stale(current)
        if not stale and text is not None:
            return text
        for key in stale:
            if key in self.merged and isinstance(current.get(key), list):
                current[key].extend(self._missing(current, key))  # theirs first, as they wrote them
            else:
                current[key] = self._new_value(key)  # in place: the line's own comment stays
        return str(self.tomlkit.dumps(doc))

    def _take_out(self, current: Any, key: str) -> None:
        there = current[key]
        if key in self.merged and isinstance(there, list):
            for entry in self.values[key]:
                while entry in there:
                    there.remove(entry)
            if len(there):
                return  # the user's own entries stay
        del current[key]

    def remove(self, text: str) -> str | None:
        doc = self._parse(text)
        current = self._table(doc)
        if current is None or not any(key in current for key in self.values):
            return text
        for key in self.values:
            if key in current:
                self._take_out(current, key)
        outer = doc[self.path[0]]
        if not current or (self.essential is not None and self.essential not in current):
            del outer[self.path[1]]
        if not outer:
            del doc[self.path[0]]
        rendered = str(self.tomlkit.dumps(doc))
        if not text.endswith("\n\n"):  # the blank line that set the table apart goes too
            rendered = rendered.rstrip("\n") + "\n"
        return rendered if rendered.strip() else None

    def present(self, text: str) -> bool:
        current = self._table(self._parse(text))
        return current is not None and any(key in current for key in self.values)


# --- Markdown -------------------------------------------------------------------


def markdown_block(body: str, *, new_file_prefix: str = "") -> Piece:
    """`body` between the BEGIN/END COORD markers, appended after what is there."""
    block = f"{BEGIN}\n{body.rstrip()}\n{END}\n"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.DOTALL)

    def add(text: str | None) -> str:
        if text is None or not text.strip():
            return new_file_prefix + block
        if pattern.search(text):
            return pattern.sub(lambda _: block, text, count=1)
        separator = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + separator + block

    def remove(text: str) -> str | None:
        match = pattern.search(text)
        if not match:
            return text
        before, after = text[: match.start()], text[match.end() :]
        if not after and before.endswith("\n\n"):
            before = before[:-1]  # the blank line add put before the block
        rest = before + after
        if not rest.strip() or rest == new_file_prefix:
            return None
        return rest

    def present(text: str) -> bool:
        return pattern.search(text) is not None

    return Piece(add, remove, present)
