"""What each surface declares, read from its source, for the parity tests (issue 30, item 3).

The Python surfaces are imported; the TypeScript client's declarations are read from its
text (its interfaces exist only for the compiler), with patterns strict enough that a
declaration they cannot read fails the test instead of passing it empty.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHODS_PY = ROOT / "clients" / "python" / "src" / "coordd_client" / "methods.py"
TS_SRC = ROOT / "clients" / "ts" / "src"
#: The modules whose code calls `this.call(...)` (or, for a claim, `this.keyedClaim(...)`,
#: which adds the claim's `request_key`; for a post or complete, `this.announcing(...)`,
#: which posts an ack done, `acks.ts`): the class, and the 1.2 features
#: that add their methods to it by declaration merging.
TS_METHOD_MODULES = ("client.ts", "edits.ts", "messages.ts", "slots.ts", "usage.ts")
#: How those modules' methods send their call (the three above), as a pattern.
TS_SENDS = r"this\.(?:call|keyedClaim|announcing)\("


#: The streams' builders (`methods.subscribe`, `methods.unsubscribe`): `EventStream` and
#: `coord web` drive them; no client offers them as a method of its own.
STREAM_METHODS = frozenset({"events.subscribe", "events.unsubscribe"})


def builder_methods(*, streams: bool = False) -> dict[str, str]:
    """{wire method: builder name} from `methods.py`'s (and `methods_<feature>.py`'s)
    `call("...")` constructions (a method of the method table, by name); the streams'
    only with `streams`."""
    found: dict[str, str] = {}
    # A feature's builders may sit in a module of their own (`methods_<feature>.py`),
    # which `methods` imports from.
    sources = [METHODS_PY, *sorted(METHODS_PY.parent.glob("methods_*.py"))]
    nodes = [node for source in sources for node in ast.parse(source.read_text()).body]
    for node in nodes:
        if not isinstance(node, ast.FunctionDef):
            continue
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id in ("Call", "call")
                and inner.args
                and isinstance(inner.args[0], ast.Constant)
            ):
                name = str(inner.args[0].value)
                if streams or name not in STREAM_METHODS:
                    found[name] = node.name
    return found


def ts_interfaces(module: str = "types.ts") -> dict[str, set[str]]:
    """{name: member names} of every `export interface` in `module`, one-line or not,
    without an index signature (`[more: string]: unknown`, which lets a newer daemon's
    fields through)."""
    text = re.sub(r"/\*.*?\*/", "", (TS_SRC / module).read_text(), flags=re.S)
    found: dict[str, set[str]] = {}
    for match in re.finditer(r"^export interface (\w+) \{(.*?)\}$", text, re.M | re.S):
        found[match.group(1)] = ts_members(match.group(2))
    return found


def ts_members(body: str) -> set[str]:
    """The member names of an object type's body (`a: number; b?: string`), on one line
    or many; a nested object type's members are not the outer one's."""
    depth, flat = 0, []
    for char in body:  # blank out nested `{ ... }` so its `;` and names do not count
        depth += char == "{"
        flat.append(char if depth == 0 else " ")
        depth -= char == "}"
    keys: set[str] = set()
    for raw in re.split(r"[;\n]", "".join(flat)):
        item = raw.strip()
        if not item or item.startswith(("//", "[")):
            continue
        member = re.fullmatch(r"([a-z_][a-z0-9_]*)\??:.*", item)
        assert member, f"cannot read the member {item!r} in {body!r}"
        keys.add(member.group(1))
    return keys


def ts_method_params() -> dict[str, set[str] | str]:
    """{wire method: the member names of the params its `CoorddClient` method takes, or
    the name of the `types.ts` interface it takes them as}."""
    text = "\n".join((TS_SRC / name).read_text() for name in TS_METHOD_MODULES)
    found: dict[str, set[str] | str] = {}
    pattern = (
        r"^  \w+\((?:\w+\??: (\{[^}]*\}|[\w.]+)[^,]*, )?o\?: CallOptions\)[^\n]*?\{\s*"
        rf"return {TS_SENDS}\"([a-z_.]+)\", (\{{ \w+ \}}|p|undefined)"
    )
    for match in re.finditer(pattern, text, re.M):
        shape, method, sent = match.groups()
        if sent.startswith("{"):  # `get(id)` sends `{ id }`
            found[method] = {sent.strip("{} ")}
        elif shape is None:
            found[method] = set()
        elif shape.startswith("T."):
            found[method] = shape[2:]
        else:
            found[method] = ts_members(shape.strip("{}"))
    return found


def ts_error_kinds() -> dict[str, set[str]]:
    """errors.ts's kinds: `by_kind`, the table `errorFromWire` maps a daemon's kinds
    with, and `client`, the kinds its client-side errors set themselves."""
    text = (TS_SRC / "errors.ts").read_text()
    table = re.search(r"^const BY_KIND: .*? = \{\n(.*?)^\};", text, re.M | re.S)
    assert table, "no BY_KIND table in errors.ts"
    by_kind = set(re.findall(r"^\s+([a-z_]+): [A-Za-z]+,$", table.group(1), re.M))
    client = set(re.findall(r'\{ kind: "([a-z_]+)"', text))
    return {"by_kind": by_kind, "client": client}


def ts_error_codes() -> set[int]:
    """The codes of errors.ts's BY_CODE table."""
    text = (TS_SRC / "errors.ts").read_text()
    table = re.search(r"^const BY_CODE: .*? = \{\n(.*?)^\};", text, re.M | re.S)
    assert table, "no BY_CODE table in errors.ts"
    return {int(code) for code in re.findall(r"^\s+\[(-\d+)\]: [A-Za-z]+,$", table.group(1), re.M)}
