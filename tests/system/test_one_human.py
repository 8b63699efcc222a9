"""One human (issue 47 item 1): the person at the keyboard is one agent on every human
surface. A `coord` typed in a terminal acts as the name `coord top` and `coord web` act
as, so a question asked from the terminal is answered into the inbox they show, and the
tabs' session-start context tells the person apart from the agents."""

from __future__ import annotations

import json

from coordd_client import Client
from coordd_client.human import human_agent
from support import COORD, DaemonProcess, coord, coord_env, in_terminal

PROJECT = "/home/ada/shop"
#: The person, as `coord top` and `coord web` name them (`human.human_agent`).
ADA = human_agent({"USER": "ada"})


def terminal(daemon: DaemonProcess, *args: str) -> str:
    """`coord ARGS` typed by ada in a terminal of her own."""
    env = coord_env(daemon.socket_path, USER="ada", LOGNAME="ada", COORD_PROJECT=PROJECT)
    status, out = in_terminal([COORD, *args], env)
    assert status == 0, out
    return out


def test_a_terminal_is_the_same_person_as_top_and_web(daemon: DaemonProcess) -> None:
    whoami = json.loads(terminal(daemon, "whoami", "--json"))
    assert whoami["agent"] == ADA == "human-ada"
    asked = terminal(daemon, "msg", "--to", "claude-1", "--question", "which table first?")
    assert "#1" in asked, asked
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        question = tab.read_messages().messages[0]
        assert question.sender == ADA and question.kind == "question"
        tab.send_message("orders first", reply_to=question.id)
    # A shell of the person's sees the answer in its inbox ...
    assert "orders first" in terminal(daemon, "inbox", "--peek")
    # ... which is the inbox `coord top` and `coord web` read: they act as `human_agent()`.
    with Client(daemon.socket_path, agent=ADA, project=PROJECT) as web:
        answers = web.read_messages().messages
        assert [m.body for m in answers] == ["orders first"]


def test_the_tabs_are_not_told_the_person_is_another_agent(daemon: DaemonProcess) -> None:
    terminal(daemon, "reserve", "src/expiry2.py")
    with Client(daemon.socket_path, agent="codex-2", project=PROJECT) as codex:
        codex.post("migrate the schema")
    stdin = json.dumps({"session_id": "s", "cwd": PROJECT, "hook_event_name": "SessionStart"})
    done = coord(
        "hook", "session-start", "--host", "claude", "--agent", "claude-1",
        "--project", PROJECT, socket=daemon.socket_path, stdin=stdin,
    )  # fmt: skip
    assert done.returncode == 0, done
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    after = context.split("Other agents:\n", 1)[1].splitlines()
    others = after[: next(i for i, x in enumerate(after) if x[:2] != "  ")]
    assert others == ["  codex-2: holds nothing"], context
    assert f"The human ({ADA}) holds 1 reservation" in context
