"""1.2 section 12 over a real daemon (docs/PROTOCOL-1.2.md): messages delivered exactly
once per recipient across a restart and a reconnect, a release request approved
(handed over atomically, a third agent racing), a blocking wait woken by a message,
and the wire's refusals. The semantics that need no process (audiences, cursors,
idempotency, denied and narrowed requests, refusals) are the store tier's:
tests/store/test_messages.py and test_release_requests.py."""

from __future__ import annotations

import threading

import msgspec
import pytest

from coordd_client import Client, Conflict, Reserved
from support import DaemonProcess, RawConnection

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(daemon: DaemonProcess, agent: str) -> Client:
    return Client(daemon.socket_path, agent=agent, project=PROJECT)


def test_direct_message_is_read_once_across_a_restart_and_a_reconnect(
    daemon: DaemonProcess,
) -> None:
    with client_for(daemon, "codex-3") as codex, client_for(daemon, "claude-1") as claude:
        assert claude.supports("messages") and claude.supports("release_requests")
        sent = [codex.send_message(f"note {n}", to="claude-1").message for n in range(3)]
        assert [m.sender for m in sent] == ["codex-3"] * 3
        inbox = claude.read_messages()
        assert [m.body for m in inbox.messages] == ["note 0", "note 1", "note 2"]
        # Read, acknowledged up to the second one, then the recipient goes away.
        claude.ack_messages(inbox.messages[1].id)
    daemon.stop()
    daemon.start()
    with client_for(daemon, "claude-1") as claude, client_for(daemon, "codex-3") as codex:
        # After a restart only the unacknowledged one is unread.
        assert [m.body for m in claude.read_messages().messages] == ["note 2"]
        codex.send_message("note 3", to="claude-1")
        inbox = claude.read_messages()
        assert [m.body for m in inbox.messages] == ["note 2", "note 3"]
        claude.ack_messages(inbox.messages[-1].id)
        assert claude.read_messages().messages == []
        # Acknowledging backwards never moves the cursor back (a late retry).
        assert claude.ack_messages(sent[0].id).cursor == inbox.messages[-1].id
        # The sender is not its own recipient.
        assert codex.read_messages().messages == []


def test_a_message_wakes_a_waiter_and_one_sent_during_the_wake_is_kept(
    daemon: DaemonProcess,
) -> None:
    with client_for(daemon, "idle") as idle, client_for(daemon, "sender") as sender:
        results = []

        def wait() -> None:
            with client_for(daemon, "idle") as waiter:
                results.append(waiter.wait_messages(120))

        thread = threading.Thread(target=wait)
        thread.start()
        # Send once the daemon counts the waiter (its answer, not a sleep, says so).
        while not _waiting(sender):
            assert thread.is_alive()
        sender.send_message("wake up", to="idle")
        sender.send_message("and this too", to="idle")
        thread.join(60)
        assert not thread.is_alive()
        woken = results[0].messages
        assert woken[0].body == "wake up"
        # Whatever the wake did not return is still unread, not lost.
        unread = [m.body for m in idle.read_messages().messages]
        assert unread == ["wake up", "and this too"]


def _waiting(client: Client) -> bool:
    info = msgspec.json.decode(client.call_raw("server.info").result)
    return bool(info["message_waiters"])


def test_approve_hands_reservations_over_while_a_third_agent_races(
    daemon: DaemonProcess,
) -> None:
    with (
        client_for(daemon, "holder") as holder,
        client_for(daemon, "asker") as asker,
        client_for(daemon, "racer") as racer,
    ):
        holder.reserve(["src/auth/**"])
        request = asker.request_release(patterns=["src/auth/**"], body="I need auth for #42")
        assert request.request.request is not None
        assert request.request.request.holder == "holder"
        assert request.request.to == "holder" and request.request.open
        assert [m.kind for m in holder.read_messages().messages] == ["request"]
        stop = threading.Event()
        won: list[str] = []

        def race() -> None:
            with client_for(daemon, "racer") as r:
                while not stop.is_set():
                    try:
                        r.reserve(["src/auth/login.py"], ttl_s=60)
                        won.append("racer")
                        return
                    except Reserved:
                        continue

        racing = threading.Thread(target=race)
        racing.start()
        answered = holder.answer_request(request.request.id, "approve", reason="go ahead")
        stop.set()
        racing.join(60)
        assert won == []  # never free in between: held by holder, then by asker
        assert [r.agent for r in answered.reservations] == ["asker"]
        assert answered.request.request is not None
        assert answered.request.request.status == "approved"
        assert not answered.request.open
        held = racer.reservations(project=PROJECT).reservations
        assert [(r.agent, r.pattern) for r in held] == [("asker", "src/auth/**")]
        # The requester is told, with the answer as a reply to its request.
        (reply,) = asker.read_messages().messages
        assert reply.kind == "answer" and reply.reply_to == request.request.id
        with pytest.raises(Conflict):
            holder.answer_request(request.request.id, "deny")


def test_refusals_on_the_wire(daemon: DaemonProcess) -> None:
    """Params the daemon's decoder refuses (the store's refusals: tests/store)."""
    raw = RawConnection(daemon.socket_path)
    try:
        too_long = raw.call("message.send", {"agent": "a", "project": PROJECT, "body": "x" * 8193})
        assert too_long["error"]["code"] == -32602
        empty = raw.call("message.send", {"agent": "a", "project": PROJECT, "body": ""})
        assert empty["error"]["code"] == -32602
        both = raw.call(
            "request.release",
            {"agent": "a", "project": PROJECT, "patterns": ["x"], "task_id": 1},
        )
        assert both["error"]["data"]["field"] == "patterns"
        bad = raw.call("message.send", {"agent": "a", "project": PROJECT, "body": "hi", "to": " x"})
        assert bad["error"]["code"] == -32602
    finally:
        raw.close()
