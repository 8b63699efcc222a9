"""What real Codex (0.171.0, tests/hosts/package.json) shows the model and its user of
coord's deny (issue 47 item 5; docs/HOSTS.md, "What the model sees").

Found with the real binary: every PreToolUse refusal of `apply_patch` (exit 2 with the
reason on stderr, which coord sends, a JSON `permissionDecision: "deny"`, `decision:
block`) reaches the model as the same tool output, "Command blocked by PreToolUse hook:
<reason>. Command: <the patch>", a plain refusal; `codex exec` shows its user
"hook: PreToolUse Blocked". Codex reports no reads, so it gets no stale-write verdict,
and it has no idle wake (HOSTS.md section 3.2).
"""

from __future__ import annotations

from coordd_client import Client
from hosts.codex_host import Step, codex_exec, configure, trust_hooks
from hosts.fake_openai import FakeResponsesAPI
from hosts.test_codex import patch
from hosts.world import World


def test_a_codex_deny_is_a_plain_blocked_command_naming_the_holder(world: World) -> None:
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
    refused = patch("src/owned.py", "# owned.py", "# x")
    steps: list[Step] = [{"apply_patch": refused}, {"text": "done"}]
    with FakeResponsesAPI(steps) as fake:
        configure(world, fake)
        assert world.coord("setup", "codex").returncode == 0
        trust_hooks(world, world.repo)
        run = codex_exec(world, world.repo, fake)
        assert run.returncode == 0, run.stderr[-4000:]
    told = fake.tool_output(0)
    assert told.startswith("Command blocked by PreToolUse hook: coord: src/owned.py is reserved")
    assert "other-tab" in told
    assert told.endswith(f". Command: {refused}"), told  # Codex echoes the patch
    assert "hook error" not in told
    assert "hook: PreToolUse Blocked" in run.stderr  # what `codex exec` shows its user
    assert (world.repo / "src" / "owned.py").read_text() == "# owned.py\n"
