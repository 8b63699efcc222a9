"""What each surface declares, read from its source, for the parity tests (issue 30, item 3).

The Python surfaces are imported; what the TypeScript client writes by hand (which
method each named method sends, its error tables) is read from its text, with
patterns strict enough that a declaration they cannot read fails the test instead of
passing it empty. Its wire types are generated (`scripts/ts_interfaces.py`), so the
compiler, not this module, holds them to the Structs.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
TS_SRC = ROOT / "clients" / "ts" / "src"
#: The modules whose named methods send a call through `this.request(...)` (or, for a
#: claim, `this.keyedClaim(...)`, which adds the claim's `request_key`; for a post or
#: complete, `this.announcing(...)`, which posts an ack done, `acks.ts`): the class,
#: and the 1.2 features that add their methods to it by declaration merging.
TS_METHOD_MODULES = ("client.ts", "edits.ts", "messages.ts", "slots.ts", "usage.ts")


def builder_methods(*, streams: bool = False) -> dict[str, str]:
    """{wire method: builder name}, as `scripts/client_methods.py` finds the builders it
    makes both clients' methods of; the streams' only with `streams`."""
    return {b.method: b.name for b in _client_methods().builders(streams=streams)}


def builder_modules() -> dict[str, str]:
    """{wire method: the library module (`coordd_client.methods*`) its builder is in}."""
    return {b.method: f"coordd_client.{b.module}" for b in _client_methods().builders(streams=True)}


@functools.cache
def _client_methods() -> ModuleType:
    """scripts/client_methods.py, loaded from its file (scripts/ is not a package; its
    siblings are importable as when it runs)."""
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.append(scripts)
    path = ROOT / "scripts" / "client_methods.py"
    spec = importlib.util.spec_from_file_location("client_methods", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("client_methods", module)
    spec.loader.exec_module(module)
    return module


def ts_named_calls() -> dict[str, list[str]]:
    """{how it sends: the method names} of the named `CoorddClient` methods' calls in
    the method modules: `request` (typed by the generated `Methods` map), the typed
    `keyedClaim` and `announcing`, and `call`, which takes any string and is typed by
    nothing (its literal names must be none)."""
    text = "\n".join((TS_SRC / name).read_text() for name in TS_METHOD_MODULES)
    found: dict[str, list[str]] = {}
    sends = r"this\.(request|keyedClaim|announcing|call)(?:<[^>(]*>)?\(\"([a-z_.]+)\""
    for how, method in re.findall(sends, text):
        found.setdefault(how, []).append(method)
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
