"""1.2 section 12 over a real daemon (docs/PROTOCOL-1.2.md): messages delivered exactly
once per recipient across a restart and a reconnect, release requests approved
(handed over atomically, a third agent racing), denied and narrowed, a blocking
wait woken by a message, and the wire's refusals."""

from __future__ import annotations

import threading

import msgspec
import pytest

from coordd_client import Client, Conflict, InvalidParams, LeaseLost, NotFound, Reserved
from coordd_client.protocol.wire_messages import MessageEvent
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


def test_a_recipient_that_drops_mid_stream_gets_everything_unacked_once(
    daemon: DaemonProcess,
) -> None:
    with client_for(daemon, "codex-3") as codex:
        for n in range(3):
            codex.send_message(f"m{n}", to="claude-1")
        with client_for(daemon, "claude-1") as claude:
            assert len(claude.read_messages().messages) == 3  # read, then gone before its ack
        for n in range(3, 5):
            codex.send_message(f"m{n}", to="claude-1")
        with client_for(daemon, "claude-1") as claude:
            first = claude.read_messages(limit=2)
            assert [m.body for m in first.messages] == ["m0", "m1"] and first.more
            claude.ack_messages(first.messages[-1].id)
        with client_for(daemon, "claude-1") as claude:
            rest = claude.read_messages()
            assert [m.body for m in rest.messages] == ["m2", "m3", "m4"] and not rest.more
            claude.ack_messages(rest.messages[-1].id)
            assert claude.read_messages().messages == []


def test_project_and_thread_audiences(daemon: DaemonProcess) -> None:
    with (
        client_for(daemon, "a") as a,
        client_for(daemon, "b") as b,
        client_for(daemon, "c") as c,
    ):
        task = a.post("parser").task
        b.claim(task.id)
        c.reserve(["docs/**"])
        everyone = a.send_message("standup in 5")
        assert everyone.message.audience == "project"
        assert everyone.recipients == ["b", "c"]
        thread = c.send_message("is the lexer in scope?", task_id=task.id, kind="question")
        assert thread.message.audience == "task" and thread.message.open
        assert thread.recipients == ["a", "b"]
        # A reply goes to the question's sender and answers it.
        reply = b.send_message("no, parser only", reply_to=thread.message.id)
        assert reply.message.to == "c" and reply.message.task_id == task.id
        assert not c.get_message(thread.message.id).message.open
        assert [m.body for m in c.read_messages().messages] == ["standup in 5", "no, parser only"]
        # A task event stream that names no types never sees a message.
        plain = a.events_since()
        assert all(e.type.startswith("task.") for e in plain.events)
        named = msgspec.json.decode(
            a.call_raw("events.since", {"types": ["message.sent"], "task_id": task.id}).result
        )
        assert [e["seq"] for e in named["events"]] == [thread.message.seq, reply.message.seq]


def test_idempotency_key_sends_once(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        first = a.send_message("once", to="b", idempotency_key="k1")
        again = a.send_message("once", to="b", idempotency_key="k1")
        assert first.created and not again.created
        assert again.message.id == first.message.id
        assert len(b.read_messages().messages) == 1


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


def test_approve_hands_a_claim_over_in_one_step(daemon: DaemonProcess) -> None:
    with client_for(daemon, "holder") as holder, client_for(daemon, "asker") as asker:
        task = holder.post("migrate").task
        claimed = holder.claim(task.id).task
        request = asker.request_release(task_id=task.id)
        last = asker.events_since().last_seq
        answered = holder.answer_request(request.request.id, "approve")
        assert answered.task is not None
        assert answered.task.claimed_by == "asker" and answered.task.fence == claimed.fence + 1
        types = [e.type for e in asker.events_since(after_seq=last).events]
        assert types == ["task.released", "task.claimed"]
        with pytest.raises(LeaseLost):
            holder.complete(task.id, fence=claimed.fence)


def test_deny_and_narrow(daemon: DaemonProcess) -> None:
    with client_for(daemon, "holder") as holder, client_for(daemon, "asker") as asker:
        holder.reserve(["src/**"])
        denied = asker.request_release(patterns=["src/**"])
        result = holder.answer_request(denied.request.id, "deny", reason="mid-refactor")
        assert result.request.request is not None
        assert (result.request.request.status, result.request.request.reason) == (
            "denied",
            "mid-refactor",
        )
        assert result.reservations == [] and result.released == []
        assert [r.agent for r in holder.reservations(project=PROJECT).reservations] == ["holder"]
        narrowed = asker.request_release(patterns=["src/**"])
        result = holder.answer_request(narrowed.request.id, "narrow", patterns=["src/docs/**"])
        assert [r.pattern for r in result.reservations] == ["src/docs/**"]
        assert result.request.request is not None
        assert result.request.request.granted == ["src/docs/**"]
        # The holder's src/** overlapped what it handed over: it ended whole, and the
        # answer says so (a pattern cannot be cut in two), so the holder can re-reserve.
        assert result.released == ["src/**"]
        assert not holder.reservations(project=PROJECT, agent="holder").reservations
        bodies = [m.body for m in asker.read_messages().messages]
        assert bodies == ["denied (mid-refactor)", "narrowed: you have src/docs/**"]


def test_refusals(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        with pytest.raises(NotFound):
            a.request_release(patterns=["nobody/**"])
        task = a.post("t").task
        with pytest.raises(Conflict):
            a.request_release(task_id=task.id)  # pending: nobody to ask
        b.reserve(["x/**"])
        request = a.request_release(patterns=["x/**"])
        with pytest.raises(LeaseLost):
            a.answer_request(request.request.id, "approve")  # not addressed to a
        with pytest.raises(InvalidParams):
            b.answer_request(request.request.id, "narrow")  # narrow without patterns
        with pytest.raises(NotFound):
            a.get_message(10**6)
        with pytest.raises(InvalidParams):
            a.ack_messages(10**6)
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


def test_message_event_shape(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a:
        sent = a.send_message("hello", to="b")
        raw = msgspec.json.decode(a.call_raw("events.since", {"types": ["message.sent"]}).result)
        (event,) = raw["events"]
        decoded = msgspec.convert(event, MessageEvent)
        assert decoded.message.id == sent.message.id and decoded.recipients == ["b"]
