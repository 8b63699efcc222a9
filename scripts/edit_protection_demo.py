"""Three tabs on one repository, through the real hooks: issue 33's three protections at work.

    .venv/bin/python scripts/edit_protection_demo.py

A daemon of its own in a temporary directory, a git repository and a linked worktree;
each step runs `coord hook ...` with the stdin a host sends, as the tab named, and
prints what the tab is told. Tabs 1 and 2 are Claude Code tabs in the main worktree;
tab 3 is a Codex tab in the linked worktree `wt-c`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COORD = str(Path(sys.executable).parent / "coord")
TABS = {
    "tab 1": ("claude", "11111111-aaaa-4f6e-8b5a-000000000001"),
    "tab 2": ("claude", "22222222-bbbb-4f6e-8b5a-000000000002"),
    "tab 3": ("codex", "33333333-cccc-4f6e-8b5a-000000000003"),
}


def run(argv: list[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None) -> Any:
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def told(done: subprocess.CompletedProcess[str]) -> str:
    """What the host makes of a hook's answer."""
    if done.returncode == 2:
        return "DENIED: " + done.stderr.strip()
    if not done.stdout.strip():
        return "allowed" + (f" ({done.stderr.strip()})" if done.stderr.strip() else "")
    out = json.loads(done.stdout)["hookSpecificOutput"]
    if out.get("permissionDecision") == "deny":
        return "DENIED: " + out["permissionDecisionReason"]
    return "allowed, and told: " + out.get("additionalContext", "")


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="cdemo", dir="/tmp"))
    socket = root / "s.sock"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "CLAUDE", "CODEX"))}
    env.update(COORDD_SOCKET=str(socket), COORD_NO_AUTOSTART="1", HOME=str(root),
               XDG_STATE_HOME=str(root / "state"))  # fmt: skip
    daemon = subprocess.Popen(
        [sys.executable, "-m", "coordd", "serve", "--db", str(root / "c.db"), "--socket",
         str(socket)], env=env, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not socket.exists():
            assert time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.05)
        repo = root / "repo"
        (repo / "src").mkdir(parents=True)
        for name in ("app.py", "util.py"):
            (repo / "src" / name).write_text(f"# {name}\n")
        git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
        run(["git", "init", "-q", str(repo)], env)
        run([*git, "add", "-A"], env)
        run([*git, "commit", "-qm", "start"], env)
        run([*git, "worktree", "add", "-q", str(root / "wt-c")], env)
        linked = root / "wt-c"

        def hook(tab: str, event: str, cwd: Path, tool: str, file: Path) -> str:
            host, session = TABS[tab]
            name = {"claude": tool, "codex": "apply_patch"}[host]
            tool_input: dict[str, Any] = {"file_path": str(file)}
            if host == "codex" and event != "SessionEnd":
                relative = file.relative_to(cwd)
                tool_input = {"command": f"*** Begin Patch\n*** Update File: {relative}\n"}
            stdin = {"session_id": session, "cwd": str(cwd), "hook_event_name": event,
                     "tool_name": name, "tool_input": tool_input}  # fmt: skip
            if host == "codex":
                stdin["turn_id"] = "t1"
            command = "pre-edit" if event == "PreToolUse" else "post-tool"
            if event == "SessionEnd":
                command = "session-end"
                stdin = {"session_id": session, "cwd": str(cwd), "hook_event_name": event}
                stdin["reason"] = "other"
            done = run([COORD, "hook", command, "--host", host], env, json.dumps(stdin), cwd)
            return told(done)

        def edit(tab: str, cwd: Path, file: Path, text: str) -> None:
            verdict = hook(tab, "PreToolUse", cwd, "Edit", file)
            print(f"{tab} edits {file.relative_to(cwd)}: {verdict}")
            if verdict.startswith("allowed"):
                file.write_text(text)
                hook(tab, "PostToolUse", cwd, "Edit", file)

        def read(tab: str, cwd: Path, file: Path) -> None:
            hook(tab, "PostToolUse", cwd, "Read", file)
            print(f"{tab} reads {file.relative_to(cwd)}")

        app, util = repo / "src" / "app.py", repo / "src" / "util.py"
        print("1. reserve on first edit")
        read("tab 1", repo, app)
        read("tab 2", repo, app)
        edit("tab 1", repo, app, "# app.py, by tab 1\n")
        edit("tab 2", repo, app, "# app.py, by tab 2\n")
        print("   tab 1's session ends:", hook("tab 1", "SessionEnd", repo, "", app))
        print("2. refuse a stale write (tabs 1 and 2 share the main worktree)")
        edit("tab 2", repo, app, "# app.py, by tab 2\n")
        read("tab 2", repo, app)
        edit("tab 2", repo, app, "# app.py, by tab 2\n")
        print("3. see who else is editing (tab 3 in wt-c)")
        edit("tab 3", linked, linked / "src" / "util.py", "# util.py, by tab 3\n")
        print("   tab 3's session ends:", hook("tab 3", "SessionEnd", linked, "", linked))
        edit("tab 2", repo, util, "# util.py, by tab 2\n")
    finally:
        daemon.terminate()
        daemon.wait(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
