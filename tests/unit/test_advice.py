"""Advice in the reader's own terms (issue 47 item 4): each surface's exact words for the
same refusal, times as "in 9 min (13:42Z)", counts that agree, lists without reprs.

No daemon is needed: the refusals are built as the daemon sends them (`data`), and each
surface's own formatter (`cli.plain`, `mcp_bridge.results`, `hooks.guard`) is asked.
"""

from __future__ import annotations

import time

import msgspec
import pytest
from mcp.types import CallToolResult, TextContent

from coordd_apps.cli.plain import plain_message
from coordd_apps.hooks import guard
from coordd_apps.mcp_bridge import results
from coordd_apps.wording import advice
from coordd_apps.wording.advice import Surface
from coordd_wire.errors import Conflict, Reserved
from coordd_wire.wire import PathConflict, Reservation

NOW = 1_796_218_560.0  # 2026-12-02T13:36:00Z


def at(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.361298Z", time.gmtime(NOW + seconds))


HOLDER = {"id": 9, "agent": "codex-2", "capacity": 1, "expires_at": at(540), "fence": 3}
SLOT_FULL = Conflict(
    "slot test-db is full (1 of 1): held by codex-2 until ...; wait for it (`wait_s`)",
    slot="test-db",
    holders=[HOLDER],
    retry_at=at(540),
)
THEIRS = {
    "id": 4, "project": "/p", "agent": "codex-2", "pattern": "src/parser.py", "exclusive": True,
    "reason": "auto: reserved on first edit (coordd)", "task_id": 6, "created_at": at(-60),
    "expires_at": at(540), "ttl_s": 600.0,
}  # fmt: skip
RESERVED = Reserved(
    "reserved: 'src/**' overlaps 'src/parser.py', ...; work elsewhere, or wait for it (`wait_s`)",
    conflicts=[{"pattern": "src/**", "reservation": THEIRS}],
)


def text_of(result: CallToolResult) -> str:
    """The first text block of an MCP tool's result: what the model reads first."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.fixture(autouse=True)
def _frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(advice, "wall_clock", lambda: NOW)


def test_times_are_said_one_way() -> None:
    assert advice.when(at(540)) == "in 9 min (13:45Z)"
    assert advice.when(at(-180)) == "3 min ago (13:33Z)"
    assert advice.when(at(10)) == "in under a minute (13:36Z)"
    assert advice.when(at(3 * 3600)) == "in 3 h (16:36Z)"
    assert advice.when(at(3 * 86400)) == "in 3 d (2026-12-05 13:36Z)"


def test_counts_agree_with_their_noun() -> None:
    assert advice.plural(1, "path") == "1 path"
    assert advice.plural(2, "path") == "2 paths"
    assert advice.plural(0, "live lease") == "0 live leases"
    assert advice.plural(1, "live lease") == "1 live lease"


def test_lists_are_never_a_python_repr() -> None:
    assert advice.listed(["src/parser.py"]) == "src/parser.py"
    assert advice.listed([f"f{i}" for i in range(7)], shown=2) == "f0, f1 and 5 more"
    assert advice.json_list(["src/parser.py"]) == '["src/parser.py"]'
    assert advice.quoted("src/parser.py") == "src/parser.py"
    assert advice.quoted("src/auth/**") == "'src/auth/**'"


def test_the_first_edit_reason_is_said_without_its_machine_prefix() -> None:
    assert advice.reason_text("auto: reserved on first edit (coordd)") == "reserved on first edit"
    assert advice.reason_text("login refactor") == "login refactor"


def test_a_full_slot_is_said_to_each_surface_in_its_own_terms() -> None:
    held = "slot test-db is full (1 of 1): held by codex-2, lease ending in 9 min (13:45Z); "
    assert plain_message(SLOT_FULL) == (
        held + "run it again with --wait S to wait for it, or do other work first"
    )
    refused = results.refusal(SLOT_FULL)
    assert refused.is_error
    assert text_of(refused) == (
        "conflict: " + held + "call acquire_slot again with wait_s (at most 50) to wait for it,"
        " or do other work first"
    )
    assert advice.refusal(Surface.HOOK, "conflict", SLOT_FULL.message, SLOT_FULL.data) == (
        held + "call acquire_slot again with wait_s to wait for it"
        " (`coord slot acquire test-db --wait S` in a shell), or do other work first"
    )


def test_a_reservation_refused_is_said_to_each_surface_in_its_own_terms() -> None:
    held = (
        "src/** overlaps src/parser.py, held by codex-2 for task #6 (reserved on first edit),"
        " ending in 9 min (13:45Z); work on other files, "
    )
    assert plain_message(RESERVED) == (
        held + "run it again with --wait S to wait for it,"
        " or ask codex-2 to hand it over: `coord request src/parser.py --wait 300`"
    )
    assert text_of(results.refusal(RESERVED)) == (
        "reserved: " + held + "call reserve_paths again with wait_s (at most 50) to wait for it,"
        ' or ask codex-2 to hand it over: request_release with patterns ["src/parser.py"]'
    )


def test_a_denied_edit_tells_the_hosts_model_the_tool_and_the_shell_command() -> None:
    conflict = PathConflict(path="src/parser.py", reservation=msgspec.convert(THEIRS, Reservation))
    assert guard.line("src/parser.py", conflict) == (
        "src/parser.py is reserved by codex-2 for task #6 (exclusive, pattern src/parser.py;"
        " reserved on first edit), ending in 9 min (13:45Z); ask codex-2 to hand it over:"
        ' request_release with patterns ["src/parser.py"]'
        " (`coord request src/parser.py --wait 300` in a shell), or pick other work"
    )
    assert "['" not in guard.line("src/parser.py", conflict)


def test_a_lost_claim_names_the_holder_and_when_its_lease_ends() -> None:
    task = {"id": 7, "state": "claimed", "claimed_by": "codex-2", "lease_expires_at": at(540)}
    assert results.lost_claim_text({"won": False, "task": task}) == (
        "lost: #7 is held by codex-2, lease ending in 9 min (13:45Z);"
        " call claim_next for other work"
    )


def test_another_message_keeps_its_words_with_the_wire_field_translated() -> None:
    message = "landing #3 is queued; wait for your turn (`wait_s`)"
    assert advice.refusal(Surface.CLI, "conflict", message, {}) == (
        "landing #3 is queued; wait for your turn (--wait S)"
    )
    assert advice.refusal(Surface.MCP, "conflict", message, {}) == message
    slot_named = Conflict("x is the name of a port lease", slot="x")
    assert text_of(results.refusal(slot_named)) == (
        "conflict: x is the name of a port lease; call acquire_slot with another name,"
        " or with the capacity its holders name"
    )
