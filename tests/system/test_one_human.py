"""One human (issue 47 item 1): the person at the keyboard is one agent on every human
surface. A `coord` typed in a terminal acts as the name `coord top` and `coord web` act
as, so a question asked from the terminal is answered into the inbox they show, and the
tabs' session-start context tells the person apart from the agents."""

from __future__ import annotations

import json
import subprocess

from coordd_client import Client
from coordd_client.human import (
    answering_as,
    human_agent,
    inbox_names,
    is_former_name,
    merged,
)
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


#: A name rule 7 gave ada's terminal before a terminal was the person's.
FORMER = "ada-pts3-4242-1a2b"
#: A session with no terminal (a cron job of ada's): not the person, then or now.
CRON = "ada-session-977-0f3c"


def test_former_terminal_names_are_the_persons_and_sessions_are_not() -> None:
    ada = {"USER": "ada", "LOGNAME": "ada"}
    assert is_former_name(FORMER, ada) and is_former_name("ada-tty1-300-beef", ada)
    assert not is_former_name(CRON, ada)
    assert not is_former_name("bob-pts3-4242-1a2b", ada)  # another user's terminal
    assert not is_former_name("ada-pts3-4242-1a2b-x", ada)
    known = [CRON, "claude-1", FORMER, ADA]
    assert inbox_names(ADA, known, ada) == [ADA, FORMER]
    assert inbox_names("claude-1", known, ada) == ["claude-1"]  # only the person's inbox
    assert answering_as(FORMER, ADA, ada) == FORMER
    assert answering_as(CRON, ADA, ada) == ADA


def test_mail_to_a_former_terminal_name_reaches_the_one_inbox(daemon: DaemonProcess) -> None:
    """A question asked and a file reserved from ada's terminal before the rule: the
    answer and the release request, addressed to the old name, reach her one inbox, she
    answers the request from her terminal today, and a cron job's mail stays its own."""
    with Client(daemon.socket_path, agent=FORMER, project=PROJECT) as before:
        asked = before.send_message("which table first?", to="claude-1", kind="question")
        before.reserve(["src/a.py"])
    with Client(daemon.socket_path, agent=CRON, project=PROJECT) as cron:
        cron.heartbeat()
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        tab.send_message("orders first", reply_to=asked.message.id)
        request = tab.request_release(patterns=["src/a.py"], body="for #4").request
        tab.send_message("nightly report", to=CRON)
    peeked = terminal(daemon, "inbox", "--peek")
    assert "orders first" in peeked and f"#{request.id} from claude-1" in peeked, peeked
    assert "nightly report" not in peeked
    answered = terminal(daemon, "answer", str(request.id), "deny", "--reason", "mine today")
    assert f"answered request #{request.id}" in answered, answered
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        told = [m.body for m in tab.read_messages().messages]
        assert told[-1] == f"denied: src/a.py stays with {FORMER} (mine today)"
    read = terminal(daemon, "inbox")  # shown, so acknowledged for every name of hers
    assert "orders first" in read, read
    with Client(daemon.socket_path, project=PROJECT) as client:
        assert client.read_messages(agent=FORMER).messages == []
        assert [m.body for m in client.read_messages(agent=CRON).messages] == ["nightly report"]


def test_top_reads_the_former_names_inbox_and_acknowledges_each(daemon: DaemonProcess) -> None:
    """`coord top`'s Messages tab (and so `k`) covers the person's former names, as this
    process's user: `tui.messages.inbox` is what the tab shows."""
    from coordd_apps.tui import messages
    from coordd_client.human import shell_user

    me = human_agent()
    former = f"{shell_user()}-pts7-5151-00aa"
    with Client(daemon.socket_path, agent=former, project=PROJECT) as before:
        asked = before.send_message("ready?", to="claude-1", kind="question")
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        tab.send_message("yes", reply_to=asked.message.id)
        tab.send_message("and you?", to=me)
    with Client(daemon.socket_path, project=PROJECT) as client:
        known = [a.agent for a in client.agents().agents]
        shown = messages.inbox(client, me, PROJECT, known)
        assert [m.body for m in shown.messages] == ["yes", "and you?"]
        assert set(shown.acks) == {me, former}
        for name, up_to in shown.acks.items():
            client.ack_messages(up_to, agent=name)
        assert messages.inbox(client, me, PROJECT, known).messages == []


async def test_the_mcp_board_tells_the_person_apart_too(daemon: DaemonProcess) -> None:
    """The MCP `board` tool, like the session-start context: the person (by their name,
    and by a former terminal name of theirs) is not among `other_agents`; what they hold
    is said in `the_human`."""
    from mcp import Client as MCPClient
    from test_mcp import call, server

    with Client(daemon.socket_path, agent=ADA, project=PROJECT) as ada:
        ada.reserve(["src/expiry2.py"])
    with Client(daemon.socket_path, agent=FORMER, project=PROJECT) as before:
        held = before.post("the old terminal's task").task
        before.claim(held.id, FORMER)
    with Client(daemon.socket_path, agent="codex-2", project=PROJECT) as codex:
        codex.post("migrate the schema")
    tab = server(daemon.socket_path, project=PROJECT, COORD_AGENT="claude-1", USER="ada")
    async with MCPClient(tab) as c:
        board = await call(c, "board")
    assert [a["agent"] for a in board["other_agents"]] == ["codex-2"]
    assert board["the_human"] == [
        f"The human ({FORMER}) holds #{held.id}",
        f"The human ({ADA}) holds 1 reservation",
    ]


async def test_the_webs_inbox_covers_the_former_names(daemon: DaemonProcess) -> None:
    """`coord web`'s `/messages` inbox (`web.messages.inbox`), as this process's user: the
    human's and a former terminal name's unread messages, oldest first."""
    from coordd_apps.web import messages
    from coordd_client.aio import AsyncClient
    from coordd_client.human import shell_user

    me = human_agent()
    former = f"{shell_user()}-pts9-6161-00bb"
    with Client(daemon.socket_path, agent=former, project=PROJECT) as before:
        before.heartbeat()
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        tab.send_message("to the old terminal", to=former)
        tab.send_message("to the person", to=me)
    async with AsyncClient.connect(daemon.socket_path) as client:
        shown = await messages.inbox(client, me)
    assert [m.body for m in shown] == ["to the old terminal", "to the person"]


def test_a_message_to_several_of_the_persons_names_is_shown_once() -> None:
    """A message to the project reaches each of the person's live names: one inbox shows it once."""
    from coordd_wire.wire_messages import Message

    def message(id_: int, body: str) -> Message:
        return Message(
            id=id_, seq=id_, project=PROJECT, sender="claude-1", kind="message",
            audience="project", to=None, task_id=None, reply_to=None, body=body,
            created_at="2026-12-06T07:00:00Z", open=False, request=None,
        )  # fmt: skip

    everyone, mine = message(4, "to everyone"), message(5, "to the old terminal")
    assert [m.id for m in merged([[everyone], [everyone, mine]])] == [4, 5]


def test_the_person_writes_to_a_chosen_few(daemon: DaemonProcess) -> None:
    """`coord msg --to A --to B`: one message each (the overseer composer's ticked names);
    no `--to` is every live tab of the project."""
    for tab in ("claude-1", "codex-2", "claude-3"):
        with Client(daemon.socket_path, agent=tab, project=PROJECT) as client:
            client.heartbeat()
    sent = terminal(daemon, "msg", "--to", "claude-1", "--to", "codex-2", "hold off on main")
    assert sent.splitlines() == ["sent #1 to claude-1", "sent #2 to codex-2"], sent
    with Client(daemon.socket_path, project=PROJECT) as client:
        for tab, got in (("claude-1", ["hold off on main"]), ("codex-2", ["hold off on main"])):
            assert [m.body for m in client.read_messages(agent=tab).messages] == got
        assert client.read_messages(agent="claude-3").messages == []


def test_the_former_names_user_is_spelled_as_rule_7_spells_it() -> None:
    """`human.shell_user` repeats `identity.terminal_session_agent`'s spelling of the user
    (the hooks that use it do not load `identity`): the two must agree."""
    from coordd_client.human import shell_user
    from coordd_client.identity import terminal_session_agent

    for env in ({"USER": "Ada Lovelace"}, {"LOGNAME": "bob"}, {}):
        assert terminal_session_agent(env).startswith(f"{shell_user(env)}-"), env


def test_the_web_offers_the_answer_to_a_request_made_to_a_former_name() -> None:
    """The issue's "waiting on root-session-7632-6c09": a request to the person's former
    terminal name gets the Approve and Deny forms on `/messages`, as one to `human-<user>`
    does; one to another agent still waits on it."""
    from coordd_apps.web.message_pages import _answers
    from coordd_client.human import shell_user
    from coordd_wire.wire_messages import Message, RequestState

    me, former = human_agent(), f"{shell_user()}-pts3-4242-1a2b"

    def request_to(holder: str) -> Message:
        state = RequestState(
            holder=holder, patterns=["src/a.py"], task_id=None, status="open",
            expires_at="2026-12-06T08:00:00Z",
        )  # fmt: skip
        return Message(
            id=7, seq=7, project=PROJECT, sender="claude-1", kind="request", audience="agent",
            to=holder, task_id=None, reply_to=None, body="for #4",
            created_at="2026-12-06T07:00:00Z", open=True, request=state,
        )  # fmt: skip

    for holder in (me, former):
        shown = _answers(request_to(holder), me, "csrf")
        assert "Approve" in shown and "Deny" in shown and "waiting on" not in shown, holder
    assert "waiting on codex-2" in _answers(request_to("codex-2"), me, "csrf")


def test_a_message_to_a_name_never_seen_says_it_may_be_a_typo(daemon: DaemonProcess) -> None:
    """Found in review: `coord msg --to claude-3cda0b49438` (a digit short) said "sent"
    and nothing more; the daemon's `never_seen` says the name was never seen, and the
    person is told (docs/PROTOCOL-1.2.md, "Names never seen": a client may warn)."""
    with Client(daemon.socket_path, agent="claude-1", project=PROJECT) as tab:
        tab.heartbeat()
    typo = terminal(daemon, "msg", "--to", "claude-l", "--to", "claude-1", "hold off on main")
    assert typo.splitlines() == [
        "sent #1 to claude-l",
        "note: claude-l has never been seen here: a typo? `coord agents --all` lists every"
        " name (kept a week for a tab that starts later)",
        "sent #2 to claude-1",
    ], typo


def test_a_message_to_the_human_never_says_it_may_be_a_typo(daemon: DaemonProcess) -> None:
    """Found by a new user: `coord msg --to human` from an agent's shell said
    `human-ada has never been seen here: a typo?`, though `human` is the documented
    name of the person, whose inbox is read by name whether or not they acted yet."""
    env = coord_env(daemon.socket_path, USER="ada", LOGNAME="ada", COORD_PROJECT=PROJECT)
    sent = subprocess.run(
        [COORD, "msg", "--to", "human", "--question", "ship it?", "--agent", "claude-1"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert sent.stdout.splitlines() == [f"sent #1 to {ADA}"], sent.stdout
