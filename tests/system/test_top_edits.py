"""`coord top`'s word on recorded edits (issue 33): files live agents edited in more than
one worktree, on the status line, only when there are some; against a real daemon."""

from __future__ import annotations

import asyncio

from textual.widgets import Static
from top_pilot import until

from coordd_apps.tui.app import TopApp
from coordd_client import Client
from support import DaemonProcess

PROJECT = "/top"


def test_files_edited_in_two_worktrees_are_counted_on_the_status_line(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, project=PROJECT) as client:
        client.record_edit(["src/x.py"], ["h1"], worktree="/top", agent="claude-a")
        client.record_edit(["src/y.py"], ["h1"], worktree="/top", agent="claude-a")
    app = TopApp(daemon.socket_path, PROJECT, agent="human-test")

    def status() -> str:
        return str(app.query_one("#counts", Static).render())

    async def main() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            await until(lambda: "daemon " in status(), pilot)
            assert "worktrees" not in status()  # one worktree each: nothing to say
            with Client(daemon.socket_path, project=PROJECT) as client:
                client.record_edit(["src/x.py"], ["h2"], worktree="/wt/b", agent="codex-b")
            await until(lambda: "1 file edited in 2+ worktrees" in status(), pilot)

    asyncio.run(main())
