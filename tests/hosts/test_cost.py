"""The token ledger with the real hosts (issue 48's "done means"): a real Claude Code
tab (2.1.332) and a real Codex tab (0.171.0, tests/hosts/package.json), each driven by
a fake model API that puts known usage in every response, claim tasks and hand one
over; `coord cost --task N --json` then gives exactly the sums the fakes sent while
each tab held each task, per agent and per model, before and after a daemon restart;
and a budget crossed by those sums reaches the model's context.

What the real binaries write is pinned here too (docs/COST.md, "What the real hosts
write"): Claude Code writes one assistant line per response once it is whole (final
output count), with no `requestId`; Codex writes a `token_usage_record` per response as
it arrives and its `token_count` only after the response's tools ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from coordd_client import Client
from hosts.codex_host import codex_exec, configure, trust_hooks
from hosts.fake_anthropic import MODEL as CLAUDE_MODEL
from hosts.fake_anthropic import Say, ToolCall, default_usage
from hosts.fake_anthropic import Step as ClaudeStep
from hosts.fake_anthropic import Usage as ClaudeUsage
from hosts.fake_openai import FakeResponsesAPI
from hosts.responses_wire import Step as CodexStep
from hosts.responses_wire import Usage as CodexUsage
from hosts.test_claude import claude_p, set_up, told_agent
from hosts.world import World

Counts = dict[str, int]
KINDS = ("input", "output", "cache_creation", "cache_read")
#: The model the Codex fake's catalogue names (codex_home.py).
CODEX_MODEL = "fake-model"
AGENT = re.compile(r"coordd board: project [^;]*; you are ([\w.-]+)")


def _zero() -> Counts:
    return dict.fromkeys(KINDS, 0)


def _add(total: Counts, more: Counts) -> Counts:
    return {k: total[k] + more[k] for k in KINDS}


def claude_counts(usage: ClaudeUsage) -> Counts:
    """What the ledger keeps of one Anthropic response's usage."""
    return {
        "input": usage["input_tokens"],
        "output": usage["output_tokens"],
        "cache_creation": usage["cache_creation_input_tokens"],
        "cache_read": usage["cache_read_input_tokens"],
    }


def codex_counts(usage: CodexUsage) -> Counts:
    """What the ledger keeps of one Responses API usage: `input_tokens` include the
    cached ones (kept as cache reads), `output_tokens` the reasoning ones."""
    cached = usage["input_tokens_details"]["cached_tokens"]
    return {
        "input": usage["input_tokens"] - cached,
        "output": usage["output_tokens"],
        "cache_creation": 0,
        "cache_read": cached,
    }


def _sum(counts: Sequence[Counts]) -> Counts:
    total = _zero()
    for one in counts:
        total = _add(total, one)
    return total


def _group(doc: dict[str, Any], name: str) -> dict[Any, Counts]:
    return {e["key"]: {k: e[k] for k in KINDS} for e in doc[name]}


def cost(world: World, task: int) -> dict[str, Any]:
    done = world.coord("cost", "--task", str(task), "--json")
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def usage_log(world: World) -> str:
    log = world.home / ".local" / "state" / "coordd" / "usage" / "usage.log"
    return log.read_text() if log.exists() else "(no usage.log)"


def test_cost_per_task_per_tab_and_model_across_a_restart(world: World) -> None:
    set_up(world)
    # Response 2, the first charged to the task, takes it past 80% of its budget, not 100%.
    second = default_usage(2)
    budget = 25_000
    assert 0.8 * budget <= sum(second.values()) < budget
    posted = world.coord("post", "port the parser", "--budget", str(budget), "--json")
    assert posted.returncode == 0, posted.stderr
    handed = int(json.loads(posted.stdout)["task"]["id"])
    with Client(world.daemon.socket_path, agent="planner", project=str(world.repo)) as planner:
        own = planner.post("fix the lexer").task.id
    readme = world.repo / "src" / "free.py"

    # The Claude Code tab: claims `handed`, works three calls, releases it, ends.
    # Claude Code writes its transcript a moment after a response (buffered), so the
    # Bash step waits until response 2 is there: its PostToolUse then reports it for sure.
    transcript = f"{world.home}/.claude/projects/*/$CLAUDE_CODE_SESSION_ID.jsonl"
    marker = f'"cache_read_input_tokens":{second["cache_read_input_tokens"]},'
    wait = f"until grep -qsF '{marker}' {transcript}; do sleep 0.05; done"
    claude_steps: list[ClaudeStep] = [
        ToolCall("mcp__coord__claim_task", {"id": handed}),  # 1: before the claim
        ToolCall("Bash", {"command": wait, "description": "wait"}),  # 2: handed
        ToolCall("Read", {"file_path": str(readme)}),  # 3: handed, told of 80%
        ToolCall("mcp__coord__release_task", {"id": handed}),  # 4: handed
        Say("done"),  # 5: after the release
    ]
    api, done, _ = claude_p(world, world.repo, claude_steps, "--allowedTools", "Bash")
    assert done.returncode == 0, done.stderr
    claude_agent = told_agent(api)
    results = api.tool_results()
    assert json.loads(results[0])["won"] is True, results[0]
    assert len(api.sent) == 5, api.sent
    (transcript_file,) = (world.home / ".claude" / "projects").glob("*/*.jsonl")
    written = [json.loads(line) for line in transcript_file.read_text().splitlines()]
    assistant = [line for line in written if line.get("type") == "assistant"]
    assert [line["message"]["usage"] for line in assistant] == [
        {**line["message"]["usage"], **usage}
        for line, usage in zip(assistant, api.sent, strict=True)
    ]
    assert {line["message"]["model"] for line in assistant} == {CLAUDE_MODEL}
    assert not any("requestId" in line for line in assistant)
    claude_held = _sum([claude_counts(u) for u in api.sent[1:4]])
    # A budget crossing reaches the model's context: response 2 took the task to 88.9%
    # (22,230 of 25,000 tokens), and the request after the Bash call that reported it
    # tells the model so (in the PostToolUse's context).
    used = f"{sum(second.values()):,} of its {budget:,}"
    warned = f"coord: task #{handed} has reached 80% of its token budget ({used}"
    main = api.main_requests()
    assert warned not in main[1].text()
    assert warned in main[2].text(), (main[2].text()[-3000:], usage_log(world))

    # The Codex tab: claims `own`, works, completes it, takes `handed` over, works.
    codex_steps: list[CodexStep] = [
        {"mcp": "coord", "tool": "whoami", "arguments": {}},  # retried until the server is up
        {"mcp": "coord", "tool": "claim_task", "arguments": {"id": own}},
        {"shell": "true"},  # own
        {"mcp": "coord", "tool": "complete_task", "arguments": {"id": own}},  # own
        {"mcp": "coord", "tool": "claim_task", "arguments": {"id": handed}},  # nothing
        {"shell": "true"},  # handed
        {"text": "done"},  # handed (the session's end releases it)
    ]
    with FakeResponsesAPI(codex_steps) as fake:
        configure(world, fake)
        setup = world.coord("setup", "codex")
        assert setup.returncode == 0, setup.stderr
        trust_hooks(world, world.repo)
        run = codex_exec(world, world.repo, fake)
        assert run.returncode == 0, run.stderr[-4000:]
    match = AGENT.search(fake.text())
    assert match, "the session-start context did not reach the Codex model"
    codex_agent = match.group(1)
    sent = fake.sent
    retries = len(sent) - len(codex_steps)  # the whoami's, while the MCP server started
    assert retries >= 0, sent
    codex_own = _sum([codex_counts(u) for u in sent[retries + 2 : retries + 4]])
    codex_handed = _sum([codex_counts(u) for u in sent[retries + 5 : retries + 7]])
    (rollout,) = (world.home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    kinds = [
        "record" if line.get("type") == "token_usage_record" else "count"
        for line in map(json.loads, rollout.read_text().splitlines())
        if line.get("type") == "token_usage_record"
        or (
            (line.get("payload") or {}).get("type") == "token_count" and line["payload"].get("info")
        )  # a rate-limit update names no call
    ]
    assert kinds == ["record", "count"] * len(sent), kinds  # each record before its count

    def check() -> None:
        doc = cost(world, handed)
        assert _group(doc, "by_agent") == {
            claude_agent: claude_held,
            codex_agent: codex_handed,
        }, (doc, usage_log(world))
        assert _group(doc, "by_model") == {CLAUDE_MODEL: claude_held, CODEX_MODEL: codex_handed}
        assert _group(doc, "by_task") == {handed: _add(claude_held, codex_handed)}
        spent = sum(claude_held.values()) + sum(codex_handed.values())
        assert doc["budgets"] == [
            {
                "task_id": handed,
                "tokens": budget,
                "spent": spent,
                "percent": round(100 * spent / budget, 1),
            }
        ]
        doc = cost(world, own)
        assert _group(doc, "by_agent") == {codex_agent: codex_own}, (doc, usage_log(world))
        assert _group(doc, "by_model") == {CODEX_MODEL: codex_own}

    check()
    assert world.daemon.stop() == 0
    world.daemon.start()
    check()
