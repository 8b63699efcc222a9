"""Every plain write is on the writer's fast path (issue 45).

A write registered by hand with `@method` is answered through a trio task; one
registered with `registry.write` is queued where its frame was read and answered
from the writer thread. They behave the same, so nothing but this test notices a
write that skips the fast path: eight did (`agent.heartbeat`, `message.send`, ...).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from coordd.methods import dispatch  # noqa: F401  (registers every method)
from coordd.methods.registry import METHODS


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
