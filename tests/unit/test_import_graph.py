"""The import graph of the daemon (`src/coordd`) and the three client packages
(`coordd_wire`, `coordd_client`, `coordd_apps`): no circle, no arrow back up, no module
over 400 lines (issue 45, "Done means").

Every import counts, at any depth (a function's own `import` as much as the top of the
file), except under `if TYPE_CHECKING:`, which never runs. Importing `a.b.c` also runs
`a.b`'s `__init__`, so an import is an arrow to each package above its target too
(not to the importer's own packages, already running). The layers, bottom up, one top-level
package each (docs/ARCHITECTURE.md, "The layers, and which may import which"):

- the wire, `coordd_wire`: imports nothing else of ours;
- the daemon, `coordd`: itself and the wire only;
- the library, `coordd_client`: itself and the wire, never an app;
- the apps, `coordd_apps` (`cli`, `hooks`, `quick`, `mcp_relay`, `mcp_bridge`, `setup`,
  `doctor`, `tui`, `web`, `landing`, `entry`, and the wording only they use): the
  library, the wire, and another app's modules where one app drives another (`coord
  top` starts the TUI). Its `__init__` imports nothing: the relays start there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients" / "python" / "src"
#: {top-level package: (its layer, its directory)}, bottom up.
PACKAGES = {
    "coordd_wire": ("wire", CLIENTS / "coordd_wire"),
    "coordd": ("daemon", ROOT / "src" / "coordd"),
    "coordd_client": ("library", CLIENTS / "coordd_client"),
    "coordd_apps": ("app", CLIENTS / "coordd_apps"),
}
MAX_LINES = 400


def modules() -> dict[str, Path]:
    """{dotted name: its file} of every module of the four packages."""
    found = {}
    for _, root in PACKAGES.values():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under `node`, at any depth, but not in an `if TYPE_CHECKING:` body."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            for other in child.orelse:
                yield from _imports_of(other)
            continue
        yield from _imports_of(child)


def _imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def graph() -> dict[str, set[str]]:
    """{module: the modules of ours it imports}, arrows to the packages above included."""
    known = modules()

    def ours(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {t for a in node.names if (t := ours(a.name))}
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in known else ours(base)
                if target:
                    targets.add(target)
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        for target in list(targets):
            parts = target.split(".")
            targets |= {".".join(parts[:i]) for i in range(1, len(parts))} & known.keys()
        edges[name] = targets - own
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start, first in edges.items():
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(first)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def room(module: str) -> str:
    return PACKAGES[module.partition(".")[0]][0]


#: Which layers each layer may import (besides itself).
ALLOWED = {
    "wire": {"wire"},
    "daemon": {"daemon", "wire"},
    "library": {"library", "wire"},
    "app": {"app", "library", "wire"},
}


def test_no_module_is_in_an_import_circle() -> None:
    assert circles(graph()) == []


def test_the_finder_sees_a_circle_through_a_function_level_import() -> None:
    """The check itself: a circle closed by an import inside a function is one."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    source = "def f():\n    import x\nif TYPE_CHECKING:\n    import y\nelse:\n    import z\n"
    seen = [a.name for node in _imports(ast.parse(source)) for a in node.names]
    assert seen == ["x", "z"]


def test_no_arrow_points_back_up() -> None:
    wrong = sorted(
        f"{source} -> {target}"
        for source, targets in graph().items()
        for target in targets
        if room(target) not in ALLOWED[room(source)]
    )
    assert wrong == []


def test_the_wire_and_the_apps_packages_import_nothing_themselves() -> None:
    """`coordd_apps` and `coordd_wire` are what the quick relay and `coord mcp`'s relay
    start from (`coordd_apps.entry`, `coordd_wire.location`): their `__init__` loads
    nothing, so a relay pays for its own few modules only."""
    edges = graph()
    for package in ("coordd_wire", "coordd_apps"):
        tree = ast.parse((PACKAGES[package][1] / "__init__.py").read_text())
        assert list(_imports(tree)) == [], package
        assert edges[package] == set(), package


def test_no_module_is_over_400_lines() -> None:
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
