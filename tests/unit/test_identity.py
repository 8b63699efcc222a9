from __future__ import annotations

import os

from coordd_client.identity import default_agent


def test_explicit_and_codex_identities_win() -> None:
    assert default_agent({"COORD_AGENT": "tab-3", "CODEX_THREAD_ID": "abc"}) == "tab-3"
    assert default_agent({"CODEX_THREAD_ID": "019d1afb-b2c7-72d3-b240"}) == "codex-019d1afb-b2c"


def test_agent_driven_shells_are_skipped_to_the_long_lived_process() -> None:
    # This test process is the nearest non-shell ancestor of itself.
    name = default_agent({"CLAUDECODE": "1"}, start_pid=os.getpid())
    assert name.startswith("python-") and f"-{os.getpid()}-" in name
    assert default_agent({"CLAUDECODE": "1"}, start_pid=os.getpid()) == name
