"""The token ledger out (issue 48): `coord cost` and the MCP `task_cost` against a real
daemon, on usage reported through the wire: token counts exactly the sums reported,
dollars labelled as an estimate, the price table overridden by `.coord/config.json`."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client as MCPClient
from mcp.client.stdio import StdioServerParameters

from coordd_client import Client
from support import COORD, DaemonProcess, coord_env, git_repo


def usage(key: str, model: str, **counts: int) -> dict[str, Any]:
    """A model call made now (after the claims these tests make before reporting)."""
    at = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return {"id": key, "at": at, "model": model, **counts}


def seed(daemon: DaemonProcess, repo: Path) -> int:
    """Two tabs, one task held by the first, two models; one call unattributed."""
    with Client(daemon.socket_path, agent="claude-a", project=str(repo)) as a:
        task = a.post("parser").task
        a.claim(task.id)
        a.report_usage("claude", [
            usage("1", "claude-sonnet-4-5", input=1000, output=2000, cache_read=1_000_000),
            usage("2", "claude-opus-4-1", input=10, output=100),
        ])  # fmt: skip
    with Client(daemon.socket_path, agent="codex-b", project=str(repo)) as b:
        b.report_usage("codex", [usage("1", "gpt-5-codex", input=500, output=50)])
    return task.id


def coord(daemon: DaemonProcess, repo: Path, *args: str) -> str:
    done = subprocess.run([COORD, *args], cwd=repo, env=coord_env(daemon.socket_path),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_coord_cost_gives_the_sums_and_an_estimate_labelled_as_one(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    task = seed(daemon, repo)
    one = json.loads(coord(daemon, repo, "cost", "--task", str(task), "--json"))
    totals = one["totals"]
    assert (totals["input"], totals["output"], totals["cache_read"]) == (1010, 2100, 1_000_000)
    # Sonnet: 1000 * 3 + 2000 * 15 + 1e6 * 0.3 = 333,000 per million; Opus 4.1:
    # 10 * 15 + 100 * 75 = 7,650: $0.34065 in all, rounded to 4 places.
    assert totals["usd_est"] == 0.3406
    assert {e["key"] for e in one["by_model"]} == {"claude-sonnet-4-5", "claude-opus-4-1"}
    everything = json.loads(coord(daemon, repo, "cost", "--json"))
    assert [e["key"] for e in everything["by_task"]] == [task, None]
    assert {e["key"]: e["total"] for e in everything["by_agent"]} == {
        "claude-a": 1_003_110, "codex-b": 550,
    }  # fmt: skip
    text = coord(daemon, repo, "cost")
    assert "#1 parser" in text and "unattributed" in text and "est." in text
    # The repository's prices win over the defaults, row by row.
    (repo / ".coord").mkdir()
    free_sonnet = {"input": 0, "output": 0, "cache_read": 0}
    config = {"prices": {"claude-sonnet-4": free_sonnet, "gpt-5": {"input": 1000}}}
    (repo / ".coord" / "config.json").write_text(json.dumps(config))
    cheaper = json.loads(coord(daemon, repo, "cost", "--task", str(task), "--json"))
    assert cheaper["totals"]["usd_est"] == pytest.approx(0.00765, abs=1e-4)  # Opus only
    codex = json.loads(coord(daemon, repo, "cost", "--json", "--model", "gpt-5-codex"))
    assert codex["totals"]["usd_est"] == pytest.approx(0.5 + 50 * 10 / 1e6, abs=1e-4)
    # A model no row prices has no estimate, not $0.
    with Client(daemon.socket_path, agent="claude-a", project=str(repo)) as a:
        a.report_usage("claude", [usage("3", "mystery-1", output=5)])
    text = coord(daemon, repo, "cost")
    assert "no price for mystery-1" in text
    unpriced = json.loads(coord(daemon, repo, "cost", "--json"))
    assert unpriced["totals"]["usd_est"] is None and unpriced["unpriced"] == ["mystery-1"]


def test_coord_post_takes_a_budget_and_coord_cost_shows_it(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    posted = json.loads(coord(daemon, repo, "--agent", "claude-a", "post", "big", "--budget",
                              "1.5k", "--json"))  # fmt: skip
    task = posted["task"]["id"]
    with Client(daemon.socket_path, agent="claude-a", project=str(repo)) as a:
        a.claim(task)
        a.report_usage("claude", [usage("1", "claude-sonnet-4-5", input=300)])
    shown = json.loads(coord(daemon, repo, "cost", "--task", str(task), "--json"))
    assert shown["budgets"] == [{"task_id": task, "tokens": 1500, "spent": 300, "percent": 20.0}]
    assert "budget: 300 of 1.5k tokens (20.0%)" in coord(daemon, repo, "cost", "--task", str(task))
    # The audit trail carries the facts, not the estimate.
    trail = coord(daemon, repo, "export")
    assert "- cost: 300 tokens (input 300, output 0, cache writes 0, cache reads 0)," in trail
    assert "budget 1.5k" in trail and "$" not in trail


async def test_the_task_cost_tool_gives_the_same_sums(daemon: DaemonProcess, workdir: Path) -> None:
    repo = git_repo(workdir / "repo").resolve()
    task = seed(daemon, repo)
    environ = {**coord_env(daemon.socket_path), "COORD_PROJECT": str(repo), "COORD_AGENT": "tab"}
    async with MCPClient(StdioServerParameters(command=COORD, args=["mcp"], env=environ)) as c:
        result = await c.call_tool("task_cost", {"task_id": task})
        assert not result.is_error, result.content
        found = result.structured_content
        assert found is not None
        assert found["totals"]["total"] == 1_003_110 and found["totals"]["usd_est"] == 0.3406
        refused = await c.call_tool("task_cost", {"since": "yesterday"})
        assert refused.is_error


def test_coord_cost_refuses_what_it_cannot_read_and_shows_an_unspent_budget(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Found by the new-user review of issue 48: an unknown task was "no usage
    recorded", a bad `--since` leaked Python's words, and a budget with nothing spent
    on it yet was not shown at all."""
    repo = git_repo(workdir / "repo").resolve()
    env = coord_env(daemon.socket_path)

    def refused(*args: str) -> str:
        done = subprocess.run([COORD, *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        return done.stderr

    assert "no task #999" in refused("cost", "--task", "999")
    said = refused("cost", "--since", "1y")
    assert "'1y' is not a span ago (30m, 2h, 7d, 2w) or an ISO time" in said
    assert "'xyz' is not a span" in refused("cost", "--since", "2h", "--until", "xyz")
    assert "is not a token count" in refused("post", "big", "--budget", " ")
    assert "is not a token count" in refused("post", "big", "--budget", "inf")
    assert "--budget-release needs --budget" in refused("post", "big", "--budget-release")
    said = coord(daemon, repo, "post", "said", "--budget", "500k", "--budget-release")
    assert said.rstrip().endswith("; budget 500.0k tokens, its claim released once spent")
    posted = json.loads(coord(daemon, repo, "post", "big", "--budget", "2M", "--json"))
    task = posted["task"]["id"]
    shown = json.loads(coord(daemon, repo, "cost", "--task", str(task), "--json"))
    assert shown["budgets"] == [{"task_id": task, "tokens": 2_000_000, "spent": 0, "percent": 0.0}]
    text = coord(daemon, repo, "cost", "--task", str(task))
    assert f"#{task} budget: 0 of 2.00M tokens (0.0%)" in text
    assert "no usage recorded (the hooks report it" in coord(daemon, repo, "cost")
    narrowed = coord(daemon, repo, "cost", "--since", "2h", "--until", "1h")
    assert narrowed.startswith("no usage matches (widen --task, --agent, --model, --since")
    # `coord show` says what the task cost and its budget (it said neither).
    shown_text = coord(daemon, repo, "show", str(task))
    assert "cost:        0 tokens (input 0, output 0, cache writes 0, cache reads 0)," in shown_text
    assert shown_text.rstrip().endswith("budget 2.00M")


def test_a_budget_crossing_is_in_its_task_history_in_the_markdown_export(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """Found by the new-user review of issue 48: COST.md says a `usage.budget` event
    joins the task's history, but the export put it under "Board events", away from
    the task it is about."""
    repo = git_repo(workdir / "repo").resolve()
    with Client(daemon.socket_path, agent="claude-a", project=str(repo)) as a:
        task = a.post("big", budget=1000).task
        a.claim(task.id)
        a.report_usage("claude", [usage("1", "claude-sonnet-4-5", input=900)])
        a.report_usage("claude", [usage("2", "claude-sonnet-4-5", input=100)])
    trail = coord(daemon, repo, "export")
    section, board = trail.split("## Board events")
    assert "**usage.budget** #1 reached 80% of its token budget (900 of 1,000)" in section
    assert "**usage.budget** #1 reached 100% of its token budget (1,000 of 1,000)" in section
    assert "usage.budget" not in board and "usage.reported" in board
    one = coord(daemon, repo, "export", "--task", str(task.id))
    assert one.count("**usage.budget** #1 reached") == 2


def test_coord_show_history_lists_the_budget_crossings(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """`usage.budget` is opt-in on `events.since`: the history names it, or shows none."""
    repo = git_repo(workdir / "repo").resolve()
    with Client(daemon.socket_path, agent="claude-a", project=str(repo)) as a:
        task = a.post("parser", budget=1000).task
        a.claim(task.id)
        a.report_usage("claude", [usage("1", "claude-sonnet-4-5", output=850)])
        a.report_usage("claude", [usage("2", "claude-sonnet-4-5", output=200)])
    shown = coord(daemon, repo, "show", str(task.id), "--history")
    assert f"#{task.id} reached 80% of its token budget (850 of 1,000)" in shown
    assert f"#{task.id} reached 100% of its token budget (1,050 of 1,000)" in shown
    history = json.loads(coord(daemon, repo, "show", str(task.id), "--history", "--json"))
    kinds = [event["type"] for event in history["history"]]
    assert kinds == ["task.posted", "task.claimed", "usage.budget", "usage.budget"]
