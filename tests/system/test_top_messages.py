"""`coord top`'s Messages tab (issue 34) against a real daemon: a message another process
sends appears without a key press, the human approves a release request and the
reservation changes hands, denies one with a reason, replies, and every body is shown
as text (never Rich markup)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.widgets import DataTable, Input, Label, TabbedContent
from top_pilot import until

from coordd_apps.tui.app import Confirm, TopApp
from coordd_apps.tui.screens import Ask
from coordd_client import Client
from support import DaemonProcess, coord

PROJECT = "/top-talk"
HUMAN = "human-test"
#: Bodies Rich would read as markup: a closing tag with nothing open, and a link.
MARKUP = "[/]x and [link=https://example.com]click[/link] [b]bold"


def run(scenario: Callable[[TopApp, object], Awaitable[None]], socket: Path) -> None:
    async def main() -> None:
        app = TopApp(socket, PROJECT, agent=HUMAN)
        async with app.run_test(size=(120, 40)) as pilot:
            app.query_one(TabbedContent).active = "tab-messages"
            await scenario(app, pilot)

    asyncio.run(main())


def table(app: TopApp) -> DataTable[object]:
    return app.query_one("#messages", DataTable)


def shown(app: TopApp) -> list[list[str]]:
    t = table(app)
    return [[str(c) for c in t.get_row_at(i)] for i in range(t.row_count)]


def state_of(app: TopApp, message_id: int) -> str:
    """The STATE cell of message `message_id` (rows reorder: open ones first)."""
    return next(row[3] for row in shown(app) if row[0] == str(message_id))


def test_a_message_from_another_process_appears_as_text(daemon: DaemonProcess) -> None:
    async def scenario(app: TopApp, pilot: object) -> None:
        await pilot.pause(0.2)  # type: ignore[attr-defined]
        assert table(app).row_count == 0
        sent = coord("msg", "--to", HUMAN, "--agent", "codex-3", "--project", PROJECT, MARKUP,
                     socket=daemon.socket_path)  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        await until(lambda: table(app).row_count == 1, pilot)  # no key pressed
        [row] = shown(app)
        assert row[1:3] == ["codex-3", "message"]
        assert row[5] == MARKUP  # the text as sent, not parsed
        # Read: acknowledged, and gone from the tab.
        await pilot.press("k")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: table(app).row_count == 0, pilot)

    run(scenario, daemon.socket_path)
    with Client(daemon.socket_path, agent=HUMAN) as client:
        assert client.read_messages().messages == []


def facts_of(dialog: Confirm) -> dict[str, str]:
    """The dialog's facts (`name: value` a line, aligned) as a dict."""
    pairs = (line.split(":", 1) for line in dialog.facts.splitlines())
    return {name.strip(): value.strip() for name, value in pairs}


def test_the_human_approves_a_release_request_and_the_paths_change_hands(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, agent=HUMAN, project=PROJECT) as client:
        client.reserve(["src/auth/**"])
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as client:
        request = client.request_release(patterns=["src/auth/**"], body="need it for #7").request

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: table(app).row_count == 1, pilot)
        assert shown(app)[0][:4] == [str(request.id), "claude-1", "release src/auth/**", "open"]
        await pilot.press("g", "n")  # type: ignore[attr-defined]  # no: nothing happens
        await pilot.press("g")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        # The dialog names what is signed (issue 47 item 3): paths, requester, reason.
        assert isinstance(app.screen, Confirm)
        assert app.screen.question == (
            f"Approve release request #{request.id}: hand src/auth/** from {HUMAN} over"
            " to claude-1?"
        )
        facts = facts_of(app.screen)
        assert {k: v for k, v in facts.items() if k != "open until"} == {
            "request": f"#{request.id}",
            "requester": "claude-1",
            "asks for": "src/auth/**",
            "held by": HUMAN,
            "reason": "need it for #7",
        }
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: state_of(app, request.id) == "approved", pilot)

    run(scenario, daemon.socket_path)
    with Client(daemon.socket_path, project=PROJECT) as client:
        holders = [(r.agent, r.pattern) for r in client.reservations(project=PROJECT).reservations]
        assert holders == [("claude-1", "src/auth/**")]
        answer = client.get_message(request.id).message
        assert answer.request is not None and answer.request.status == "approved"


def test_the_human_denies_with_a_reason_and_replies(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent=HUMAN, project=PROJECT) as client:
        client.reserve(["docs/**"])
    with Client(daemon.socket_path, agent="codex-2", project=PROJECT) as client:
        request = client.request_release(patterns=["docs/**"]).request
        question = client.send_message("is the lexer in scope?", to=HUMAN, kind="question")

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: table(app).row_count == 2, pilot)
        await pilot.press("d")  # type: ignore[attr-defined]  # the request: oldest open first
        await until(lambda: isinstance(app.screen, Ask), pilot)
        app.screen.query_one(Input).value = "still editing"
        await pilot.press("enter")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        assert isinstance(app.screen, Confirm)
        assert app.screen.question == (
            f"Deny release request #{request.id}: docs/** stays with {HUMAN}, not handed over"
            " to codex-2 (still editing)?"
        )
        assert facts_of(app.screen)["requester"] == "codex-2"
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: state_of(app, request.id) == "denied", pilot)
        assert shown(app)[0][0] == str(question.message.id)  # open ones first
        await pilot.press("w")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Ask), pilot)
        app.screen.query_one(Input).value = "yes, [/] all of it"
        await pilot.press("enter")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: state_of(app, question.message.id) == "answered", pilot)

    run(scenario, daemon.socket_path)
    with Client(daemon.socket_path, agent="codex-2", project=PROJECT) as client:
        denied = client.get_message(request.id).message.request
        # The answer that reaches the requester's tab says what it was denied.
        said = "still editing"
        assert denied is not None and (denied.status, denied.reason) == ("denied", said)
        assert client.reservations(project=PROJECT).reservations[0].agent == HUMAN
        bodies = [(m.sender, m.body) for m in client.read_messages().messages]
        assert (HUMAN, f"denied: docs/** stays with {HUMAN} ({said})") in bodies
        assert (HUMAN, "yes, [/] all of it") in bodies


def test_mark_read_never_acknowledges_another_projects_message(daemon: DaemonProcess) -> None:
    """The read cursor is the agent's across projects: `k` on one project's board stops
    below another project's unread message rather than mark it read unseen."""
    with Client(daemon.socket_path, agent="codex-3") as client:
        first = client.send_message("here", to=HUMAN, project=PROJECT).message
        client.send_message("elsewhere", to=HUMAN, project="/top-talk-other")
        client.send_message("here again", to=HUMAN, project=PROJECT)

    async def scenario(app: TopApp, pilot: object) -> None:
        await until(lambda: table(app).row_count == 2, pilot)
        await pilot.press("k")  # type: ignore[attr-defined]
        await until(lambda: isinstance(app.screen, Confirm), pilot)
        await pilot.press("y")  # type: ignore[attr-defined]
        await until(lambda: [row[5] for row in shown(app)] == ["here again"], pilot)

    run(scenario, daemon.socket_path)
    with Client(daemon.socket_path, agent=HUMAN) as client:
        unread = client.read_messages().messages
        assert [m.body for m in unread] == ["elsewhere", "here again"]
        assert client.ack_messages(first.id).cursor == first.id  # the cursor stopped there


def test_at_80x24_the_approval_dialog_shows_its_question_whole_and_what_else_ends(
    daemon: DaemonProcess,
) -> None:
    """Found in review (issue 47 item 3): at 80 columns the dialog's question was cut
    mid-word with no ellipsis ("hand src/auth/tokens.py from human-test o"), and approving
    a file out of the human's pattern ended the whole pattern without a word."""
    with Client(daemon.socket_path, agent=HUMAN, project=PROJECT) as client:
        client.reserve(["src/auth/**"])
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as client:
        request = client.request_release(patterns=["src/auth/tokens.py"], body="#7").request

    async def main() -> None:
        app = TopApp(socket, PROJECT, agent=HUMAN)
        async with app.run_test(size=(80, 24)) as pilot:
            app.query_one(TabbedContent).active = "tab-messages"
            await until(lambda: table(app).row_count == 1 and bool(app._reservations), pilot)
            await pilot.press("g")
            await until(lambda: isinstance(app.screen, Confirm), pilot)
            assert isinstance(app.screen, Confirm)
            assert facts_of(app.screen)["also ends"] == (
                f"{HUMAN}'s src/auth/** (a reservation ends whole: re-reserve what is still needed)"
            )
            await pilot.pause(0.1)
            label = app.screen.query(Label).first()  # the question, wrapped to the dialog
            drawn = "".join(label.render_line(y).text for y in range(label.size.height))
            assert "".join(drawn.split()) == "".join(app.screen.question.split())
            assert label.size.height > 1

    socket = daemon.socket_path
    asyncio.run(main())
    assert request.id


def test_a_confirmation_quotes_a_long_title_cut_with_an_ellipsis(daemon: DaemonProcess) -> None:
    """Found in review (issue 47 item 7): cancel's dialog quoted a title cut at 60
    characters mid-word with no "…"; it now quotes up to 120, and marks the cut."""
    title = "migrate the invoices table to the new schema " * 5
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as client:
        client.post(title.strip())

    async def main() -> None:
        app = TopApp(daemon.socket_path, PROJECT, agent=HUMAN)
        async with app.run_test(size=(80, 24)) as pilot:
            board = app.query_one("#board", DataTable)
            await until(lambda: board.row_count == 1, pilot)
            board.focus()
            await pilot.press("c")
            await until(lambda: isinstance(app.screen, Confirm), pilot)
            assert isinstance(app.screen, Confirm)
            said = app.screen.question
            assert said.startswith('Cancel #1 "migrate the invoices table')
            assert said.endswith('…"?') and len(said) == len('Cancel #1 ""?') + 120

    asyncio.run(main())


def row_of(board: DataTable[object], task_id: int) -> int:
    """The Board's row of task `task_id`."""
    ids = [str(board.get_row_at(i)[0]).strip() for i in range(board.row_count)]
    return ids.index(str(task_id))


def test_the_human_approves_and_rejects_gates_from_the_board(daemon: DaemonProcess) -> None:
    """Found in review (issue 47 item 3): only the web could decide a gate. On the Board,
    `g` approves the selected gate and `d` rejects it with a reason, each confirmed in a
    dialog naming the gate, its question and its asker; the asker is told either way."""
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        ship = tab.post("ship 1.4?", body="The backup ran.", assignee=HUMAN).task
        drop = tab.post("drop the old column?", assignee=HUMAN).task

    async def main() -> None:
        app = TopApp(daemon.socket_path, PROJECT, agent=HUMAN)
        async with app.run_test(size=(80, 24)) as pilot:
            board = app.query_one("#board", DataTable)
            await until(lambda: board.row_count == 2, pilot)
            board.focus()
            board.move_cursor(row=row_of(board, ship.id))
            await pilot.press("g")
            await until(lambda: isinstance(app.screen, Confirm), pilot)
            assert isinstance(app.screen, Confirm)
            assert app.screen.question == f'Approve gate #{ship.id} "ship 1.4?", asked by claude-1?'
            assert facts_of(app.screen)["question"] == "The backup ran."
            await pilot.press("y")
            await until(lambda: state(ship.id) == "done", pilot)
            board.move_cursor(row=row_of(board, drop.id))
            await pilot.press("d")
            await until(lambda: isinstance(app.screen, Ask), pilot)
            app.screen.query_one(Input).value = "not before the backup"
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, Confirm), pilot)
            await pilot.press("y")
            await until(lambda: state(drop.id) == "failed", pilot)

    def state(task_id: int) -> str:
        with Client(daemon.socket_path, project=PROJECT) as look:
            return look.get(task_id).task.state

    asyncio.run(main())
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        assert tab.get(ship.id).task.result == f'approved by {HUMAN}: "ship 1.4?"'
        told = [m.body for m in tab.read_messages().messages]
    assert told == [
        f'approved gate #{ship.id} "ship 1.4?": its dependents may go',
        f'rejected gate #{drop.id} "drop the old column?": not before the backup',
    ]
