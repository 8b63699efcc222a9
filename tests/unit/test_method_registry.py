"""Every plain write is on the writer's fast path (issue 45).

A write registered by hand with `@method` is answered through a trio task; one
registered with `registry.write` is queued where its frame was read and answered
from the writer thread. They behave the same, so nothing but this test notices a
write that skips the fast path: eight did (`agent.heartbeat`, `message.send`, ...).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections import Counter

from coordd.methods import dispatch  # noqa: F401  (registers every method)
from coordd.methods.registry import METHODS
from coordd.methods.server import FEATURE_METHODS, FEATURES
from parity import ROOT


def _only_submits(handler: object) -> bool:
    """Whether the handler's body is `return await services.writer.submit(fn, p)`."""
    source = textwrap.dedent(inspect.getsource(handler))  # type: ignore[arg-type]
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.AsyncFunctionDef)
    body = [
        s
        for s in function.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    value = body[0].value
    return (
        isinstance(value, ast.Await)
        and isinstance(value.value, ast.Call)
        and isinstance(value.value.func, ast.Attribute)
        and value.value.func.attr == "submit"
        and len(value.value.args) == 2
    )


def test_every_write_that_only_submits_is_registered_as_a_plain_write() -> None:
    by_hand = [
        name
        for name, method in METHODS.items()
        if method.write_fn is None and method.inline is None and _only_submits(method.handler)
    ]
    assert by_hand == [], f"register these with registry.write: {by_hand}"


def test_the_plain_writes_include_the_ones_each_edit_and_turn_make() -> None:
    plain = {name for name, method in METHODS.items() if method.write_fn is not None}
    hot = {"agent.heartbeat", "message.send", "message.ack", "file.record_edit", "task.claim"}
    assert hot <= plain


#: The methods of protocol 1.0 (the base contract's section 6): every later method
#: comes with a feature flag, so this list never grows.
PROTOCOL_1_0 = frozenset(
    {
        "ping",
        "server.info",
        "task.post",
        "task.get",
        "task.list",
        "task.claim",
        "task.claim_next",
        "task.renew",
        "task.release",
        "task.complete",
        "task.fail",
        "task.cancel",
        "task.reopen",
        "task.wait",
        "agent.heartbeat",
        "agent.list",
        "events.since",
        "events.subscribe",
        "events.unsubscribe",
    }
)
#: The methods protocol 1.1 added to them (PROTOCOL.md section 6, flags `assignee` and
#: `reservations`). The base contract is written out here, not read from the method
#: table, so that losing one of its methods from the table fails; a 1.2 method is the
#: table's and docs/PROTOCOL-1.2.md's (the next test).
PROTOCOL_1_1_ADDED = frozenset(
    {
        "task.assign",
        "reservation.acquire",
        "reservation.release",
        "reservation.check",
        "reservation.list",
    }
)


def test_every_method_after_1_0_comes_with_exactly_one_served_feature() -> None:
    """A client asks `server.info.features` before it calls a later method, so each
    must name the one flag to ask for (docs/PROTOCOL.md's reference prints it)."""
    counts = Counter(name for names in FEATURE_METHODS.values() for name in names)
    assert [name for name, n in counts.items() if n > 1] == []
    assert set(FEATURE_METHODS) <= set(FEATURES)
    assert set(counts) <= set(METHODS), "a feature names a method nobody registered"
    assert set(METHODS) - PROTOCOL_1_0 == set(counts)
    assert set(METHODS) >= PROTOCOL_1_0
    added_by_1_1 = {*FEATURE_METHODS["assignee"], *FEATURE_METHODS["reservations"]}
    assert added_by_1_1 == PROTOCOL_1_1_ADDED


def test_the_feature_methods_are_the_ones_protocol_1_2_lists() -> None:
    """docs/PROTOCOL-1.2.md's table of flags names the methods each 1.2 flag brings;
    a cell that begins with `(` names params or fields, not methods."""
    table: dict[str, set[str]] = {}
    text = (ROOT / "docs" / "PROTOCOL-1.2.md").read_text()
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        flag = re.fullmatch(r"`([a-z_]+)`", cells[0]) if len(cells) == 4 else None
        if flag and not cells[2].startswith("("):
            table[flag.group(1)] = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", cells[2]))
    protocol_1_1 = ("assignee", "reservations")  # the base contract's, not in that table
    declared = {f: set(names) for f, names in FEATURE_METHODS.items() if f not in protocol_1_1}
    assert declared == table
