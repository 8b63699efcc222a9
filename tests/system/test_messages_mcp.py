"""Issue 34's MCP tools over stdio against a real daemon: a message sent from one tab's
server shows on the other's board, `read_messages` shows it once, and a release
request is answered with the reservation handed over."""

from __future__ import annotations

from mcp import Client as MCPClient
from test_mcp import PROJECT, call, server, session

from coordd_client import Client
from support import DaemonProcess


async def test_messages_and_a_release_request_between_two_tabs(daemon: DaemonProcess) -> None:
    asker_params = server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(1))
    holder_params = server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(2))
    async with MCPClient(asker_params) as asker, MCPClient(holder_params) as holder:
        me = (await call(asker, "whoami"))["agent"]
        them = (await call(holder, "whoami"))["agent"]
        await call(holder, "reserve_paths", patterns=["src/auth/**"])
        sent = await call(asker, "send_message", body="is auth yours today?", to=them)
        assert sent["recipients"] == [them]
        board = await call(holder, "board")
        assert any("is auth yours today?" in line for line in board["unread_messages"])
        inbox = await call(holder, "read_messages")
        assert [m["body"] for m in inbox["messages"]] == ["is auth yours today?"]
        assert (await call(holder, "read_messages"))["messages"] == []  # shown once
        asked = await call(asker, "request_release", patterns=["src/auth/**"], body="for #42")
        request_id = asked["request"]["id"]
        (request,) = (await call(holder, "read_messages"))["messages"]
        assert request["id"] == request_id and request["request"]["status"] == "open"
        answered = await call(holder, "answer_request", id=request_id, decision="approve")
        assert [r["agent"] for r in answered["reservations"]] == [me]
        (answer,) = (await call(asker, "read_messages"))["messages"]
        assert answer["kind"] == "answer" and answer["reply_to"] == request_id
    with Client(daemon.socket_path) as client:
        held = client.reservations(project=PROJECT).reservations
        assert [(r.agent, r.pattern) for r in held] == [(me, "src/auth/**")]
