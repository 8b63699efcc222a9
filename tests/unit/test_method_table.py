"""The method table is the one declaration of an RPC (issue 45 item 1).

Both ends read `coordd_wire.method_table`: the daemon registers a handler
against each entry, the builders build their `Call` from it, and the lists that used
to be kept by hand (`PROJECT_METHODS`, `FEATURE_METHODS`, the opt-in event types)
are derived from it. These tests tie each reader to the table.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_args, get_origin, get_type_hints

import msgspec
import pytest

from coordd.methods import registry
from coordd.methods.registry import METHODS, FollowUp
from coordd.store import transaction
from coordd_client import (
    methods,
    methods_edits,
    methods_messages,
    methods_presence,
    methods_slots,
    methods_usage,
)
from coordd_wire import method_table, wire
from coordd_wire.method_table import (
    FEATURE_METHODS,
    OPT_IN_EVENT_TYPES,
    PROJECT_METHODS,
    TABLE,
    Call,
    Rpc,
)
from coordd_wire.params import NoParams
from parity import builder_methods

BUILDER_MODULES = (
    methods,
    methods_edits,
    methods_messages,
    methods_presence,
    methods_slots,
    methods_usage,
)
#: A builder's positional names may be Python's (`task_id` for `id`).
PYTHON_IDS = ("task_id", "message_id", "request_id", "landing_id")


def builder(name: str) -> Callable[..., Any]:
    found: Callable[..., Any] = next(
        getattr(module, name) for module in BUILDER_MODULES if hasattr(module, name)
    )
    return found


def test_every_entry_has_a_handler_and_every_handler_an_entry() -> None:
    assert set(METHODS) == set(TABLE)
    assert len(TABLE) == len(method_table.ENTRIES)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_handler_is_registered_with_its_entrys_params_and_traits(name: str) -> None:
    entry, method = TABLE[name], METHODS[name]
    assert method.decoder.type is entry.params_type()
    assert (method.write_fn is not None) == entry.writes
    assert (method.inline is not None) == entry.inline
    assert method.blocking == entry.waits
    assert method.large_answer == entry.large


def answered_by(name: str) -> Callable[..., Any]:
    """What makes `name`'s answer: its store function for a plain write, else its handler."""
    method = METHODS[name]
    return method.write_fn or method.inline or method.handler


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_handler_returns_its_entrys_result_struct(name: str) -> None:
    """Annotated with the table's result Struct, whose body mypy then holds to it: a
    dict, where a misspelt key is no error, cannot come back (issue 45 item 1)."""
    returns = get_type_hints(answered_by(name))["return"]
    if get_origin(returns) is FollowUp:  # `events.subscribe`: its answer, then its pump
        (returns,) = get_args(returns)
    # An entry with no result Struct answers `{}` (`Rpc.result_type`: dict).
    assert (get_origin(returns) or returns) is TABLE[name].result_type()


def test_every_entry_has_one_builder() -> None:
    assert set(builder_methods(streams=True)) == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_builder_takes_its_params_fields_and_returns_its_result_type(name: str) -> None:
    entry = TABLE[name]
    made = builder(builder_methods(streams=True)[name])
    wanted = set(entry.params_type().__struct_fields__)
    taken = set(inspect.signature(made).parameters)
    taken = {"id" if n in PYTHON_IDS and "id" in wanted else n for n in taken}
    assert taken == wanted, {"missing": wanted - taken, "unknown": taken - wanted}
    returns = get_type_hints(made)["return"]
    assert get_origin(returns) is Call
    (result,) = get_args(returns)
    assert (get_origin(result) or result) is entry.result_type()


def test_a_project_method_takes_a_project() -> None:
    for name in PROJECT_METHODS:
        assert "project" in TABLE[name].params_type().__struct_fields__, name
    assert methods.PROJECT_METHODS is PROJECT_METHODS


def test_a_keyed_method_takes_a_request_key_and_a_repeat() -> None:
    assert methods.KEYED_METHODS is method_table.KEYED_METHODS
    assert {"task.claim", "task.claim_next"} == method_table.KEYED_METHODS
    for name in method_table.KEYED_METHODS:
        fields = TABLE[name].params_type().__struct_fields__
        assert {"request_key", "repeat"} <= set(fields), name


def test_the_feature_methods_are_the_entries_features() -> None:
    by_feature = {f: {n for n, e in TABLE.items() if e.feature == f} for f in FEATURE_METHODS}
    assert {f: set(names) for f, names in FEATURE_METHODS.items()} == by_feature
    assert all(e.feature in FEATURE_METHODS for e in TABLE.values() if e.feature is not None)


def test_the_opt_in_event_types_are_the_ones_a_feature_of_the_table_brings() -> None:
    """The store and the hub read the table's set; the wire's `FEATURE_OF_EVENT` is the
    same list; every other event type is a task event, which `types` need not name."""
    assert vars(transaction)["OPT_IN_EVENT_TYPES"] is OPT_IN_EVENT_TYPES
    assert set(wire.FEATURE_OF_EVENT) == OPT_IN_EVENT_TYPES
    assert set(wire.FEATURE_OF_EVENT.values()) <= set(FEATURE_METHODS)
    assert set(wire.EVENT_TYPES) >= OPT_IN_EVENT_TYPES
    task_events = set(wire.EVENT_TYPES) - OPT_IN_EVENT_TYPES
    assert all(t.startswith("task.") for t in task_events), task_events


def test_the_registry_refuses_what_the_table_does_not_declare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def handler(services: Any, p: Any, session: Any) -> Any:
        return {}

    with pytest.raises(ValueError, match=r"not in coordd_wire\.method_table"):
        registry.method("task.nonesuch")(handler)
    with pytest.raises(ValueError, match="registered twice"):
        registry.method("task.get")(handler)
    monkeypatch.setattr(registry, "METHODS", {})
    with pytest.raises(ValueError, match="the method table says writes=True"):
        registry.method("task.post")(handler)  # a plain write, registered by hand
    with pytest.raises(RuntimeError, match="with no handler"):
        registry.check_complete()


def test_a_call_derives_changed_params_and_another_result_type() -> None:
    made = methods.events_since(after_seq=3, limit=10)
    assert made.method == "events.since"
    assert made.result_type is wire.EventsResult
    later = made.with_params(after_seq=7)
    assert later.params == {**(made.params or {}), "after_seq": 7}
    assert made.params is not None and made.params["after_seq"] == 3
    raw = later.as_type(msgspec.Raw)
    assert (raw.method, raw.params, raw.result_type) == (later.method, later.params, msgspec.Raw)
    waits = methods.wait(timeout_s=5.0).with_params(after_seq=1)
    assert waits.waits_s == 5.0


def test_a_calls_result_type_is_read_from_its_entry_when_asked_for() -> None:
    made = TABLE["slot.list"].call({})
    assert made._result_type is None  # read from the entry when asked for
    from coordd_wire import wire_slots

    assert made.result_type is wire_slots.SlotList
    assert Rpc("x.z", NoParams, None).result_type() is dict
