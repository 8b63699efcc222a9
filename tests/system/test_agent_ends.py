"""An ended tab over a real daemon (docs/PROTOCOL-1.2.md section 2a): its session-end
hook reports it ended, a new tab reports one that exited without its hook, `coord
agents` says it is gone, a hand-over to it is refused (on the wire and on the web's
approval page, before the person confirms), and `coord unreserve --of` frees its
reservation, asking first. The store's side is tests/store/test_agent_ends.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from test_tabs import environ, hook_payload

from coordd_client import Client
from coordd_client.identity import host_agent
from coordd_wire.errors import AgentEnded
from support import COORD, DaemonProcess, FakeHost, coord, git_repo
from web_server import WebServer, http, start_web

SESSION = "cccccccc-3333-4f6e-8b5a-000000000003"
LATER = "dddddddd-4444-4f6e-8b5a-000000000004"
HOLDER = "claude-holder"
HUMAN = "human-alice"


def listed(daemon: DaemonProcess, agent: str, home: Path) -> dict[str, object]:
    """`coord agents --json`'s entry for `agent`, run with the test's home (and so its
    tab registry, which `coord agents` reads for tabs that exited)."""
    out = coord("--json", "agents", "--all", socket=daemon.socket_path, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    (entry,) = [a for a in json.loads(out.stdout)["agents"] if a["agent"] == agent]
    return dict(entry)


def start_tab(daemon: DaemonProcess, tab: FakeHost, home: Path, repo: Path, session: str) -> str:
    env = environ(daemon, home, CLAUDE_CODE_SESSION_ID=session)
    start = [COORD, "hook", "session-start", "--host", "claude"]
    begun = tab.run(start, env=env, stdin=hook_payload("SessionStart", session, repo))
    assert begun.returncode == 0, begun.stderr
    return host_agent("claude", session)


def test_a_tab_that_ends_is_gone_and_a_hand_over_to_it_is_refused(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    home = workdir / "home"
    with Client(daemon.socket_path, agent=HOLDER, project=str(repo)) as holder:
        holder.reserve(["src/**"])
        with FakeHost() as tab:
            agent = start_tab(daemon, tab, home, repo, SESSION)
            with Client(daemon.socket_path, agent=agent, project=str(repo)) as asker:
                request = asker.request_release(patterns=["src/**"]).request
            env = environ(daemon, home, CLAUDE_CODE_SESSION_ID=SESSION)
            quit_ = hook_payload("SessionEnd", SESSION, repo, reason="prompt_input_exit")
            end = [COORD, "hook", "session-end", "--host", "claude"]
            assert tab.run(end, env=env, stdin=quit_).returncode == 0
        assert listed(daemon, agent, home)["ended_at"] is not None
        human = coord("agents", "--all", socket=daemon.socket_path, env={"HOME": str(home)}).stdout
        assert re.search(rf"{agent}\s+gone \(ended ", human), human
        with pytest.raises(AgentEnded):
            holder.answer_request(request.id, "approve")
        assert [r.agent for r in holder.reservations().reservations] == [HOLDER]
        # A message to it is kept, and its sender hears that nothing runs to wake it.
        told = coord("msg", "--to", agent, "still there?", socket=daemon.socket_path, cwd=repo)
        assert told.returncode == 0, told.stderr
        assert f"note: {agent} has ended (the tab exited)" in told.stdout, told.stdout


def test_a_tab_that_exited_without_its_hook_is_reported_by_the_next(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    home = workdir / "home"
    with FakeHost() as crashed:
        agent = start_tab(daemon, crashed, home, repo, SESSION)
        with Client(daemon.socket_path, agent=agent, project=str(repo)) as client:
            client.reserve(["src/**"])
    # Its host process is gone, its record left: a new tab's session start reports it.
    with Client(daemon.socket_path) as look:
        (info,) = [a for a in look.agents().agents if a.agent == agent]
        assert info.ended_at is None
    with FakeHost() as later:
        start_tab(daemon, later, home, repo, LATER)
        assert listed(daemon, agent, workdir / "elsewhere")["ended_at"] is not None


@pytest.fixture
def web(daemon: DaemonProcess) -> Iterator[WebServer]:
    server = start_web(daemon.socket_path, "/repo")
    yield server
    server.stop()


def test_the_approval_page_refuses_a_gone_requester_before_confirming(
    daemon: DaemonProcess, web: WebServer
) -> None:
    with Client(daemon.socket_path, project="/repo") as client:
        client.reserve(["src/**"], agent=HOLDER)
        request = client.request_release(patterns=["src/**"], agent="codex-gone").request
        client.end_agent(agent="codex-gone")
    cookie = http(web.url).headers["set-cookie"].split(";", 1)[0]
    page = http(f"{web.base}/messages", headers={"Cookie": cookie}).body
    csrf = re.findall(r'name="csrf" value="([0-9a-f]+)"', page)[0]
    headers = {"Cookie": cookie, "Origin": web.base}
    form = urlencode({"csrf": csrf, "decision": "approve"}).encode()
    asked = http(f"{web.base}/act/answer/{request.id}", data=form, headers=headers)
    assert asked.status == 400 and 'value="yes"' not in asked.body
    assert "codex-gone is gone" in asked.body


def test_coord_unreserve_of_frees_another_agents_reservation_asking_first(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, agent="codex-gone", project="/repo") as gone:
        gone.reserve(["src/**", "docs/**"])
        gone.end_agent()
    args = ("--agent", HUMAN, "--project", "/repo", "unreserve", "src/**", "--of", "codex-gone")
    # `coord unreserve` reads no tab registry; the test's own home is not touched either way.
    asked = coord(*args, socket=daemon.socket_path, stdin="y\n")  # no terminal to ask on
    assert asked.returncode == 1 and "pass --yes" in asked.stderr
    freed = coord(*args, "--yes", socket=daemon.socket_path)
    assert freed.returncode == 0, freed.stderr
    assert "freed 1 reservation of codex-gone" in freed.stdout
    with Client(daemon.socket_path, project="/repo") as look:
        assert [r.pattern for r in look.reservations().reservations] == ["docs/**"]
