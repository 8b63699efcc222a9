"""`coord web`'s pure pieces: escaping, the URL's filter, the guard's decisions, the
live message, webhook signatures, and the one rule for `human` as an assignee."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from functools import partial
from typing import Any

import msgspec
import pytest
import trio

from coordd_apps.web import http_post, message_pages, notify, pages
from coordd_apps.web.daemon import decode_event
from coordd_apps.web.guard import Guard, Secrets, same_origin_path
from coordd_apps.web.live import LIVE_TYPES, Outbox, message
from coordd_apps.web.markup import Html, esc, tag
from coordd_apps.web.notify import GATE, kinds_of, sign
from coordd_apps.web.rows import View, task_row
from coordd_apps.web.signin import Codes, redirect_page
from coordd_client import methods
from coordd_client.human import human_agent, resolve_assignee
from coordd_wire.wire import EVENT_TYPES, AgentInfo, Event, Landing, Task
from coordd_wire.wire_messages import MessageEvent

NOW = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)


def _task(**fields: Any) -> Task:
    base: dict[str, Any] = {
        "id": 7, "project": "/p", "kind": "task", "title": "t", "body": "", "state": "pending",
        "priority": 0, "tags": [], "created_by": "a", "created_at": "2026-12-01T13:00:00.000000Z",
        "updated_at": "2026-12-01T13:30:00.000000Z", "claimed_by": None, "claimed_at": None,
        "lease_expires_at": None, "fence": 0, "attempts": 0, "result": None,
    }  # fmt: skip
    base.update(fields)
    return msgspec.convert(base, Task)


def test_everything_from_outside_is_escaped_and_markup_is_not_escaped_twice() -> None:
    assert esc("<script>\"&'") == "&lt;script&gt;&quot;&amp;&#x27;"
    assert esc("a\u202eb\x1b") == "a\\u202eb\\x1b"  # reordering and control characters shown
    cell = tag("td", "<b>", title='"x"', hidden=True, data_x=None)
    assert cell == '<td title="&quot;x&quot;" hidden>&lt;b&gt;</td>'
    assert tag("p", cell) == f"<p>{cell}</p>"
    assert Html("<i>") + "<b>" == "<i>&lt;b&gt;"


def test_the_view_is_read_from_the_url_and_written_back() -> None:
    view = View.from_query({"state": ["done", "bogus"], "kind": ["bug"], "q": [" crash "]})
    assert (view.states, view.kind, view.text, view.ready) == (
        frozenset({"done"}),
        "bug",
        "crash",
        False,
    )
    assert View.from_query({"state": ["all"]}).states == {
        "pending", "claimed", "done", "failed", "cancelled"
    }  # fmt: skip
    assert View.from_query({}).states == {"pending", "claimed", "failed"}
    again = View.from_query({k: [v] for k, v in [("kind", "bug"), ("ready", "1")]})
    assert again.query() == "state=claimed&state=failed&state=pending&kind=bug&ready=1"


def _status(
    guard: Guard, method: str = "GET", path: str = "/", query: str = "", **headers: str
) -> int | None:
    """The status the guard refuses this request with, or None when it lets it through."""
    scope = {
        "type": "http", "method": method, "path": path, "query_string": query.encode(),
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }  # fmt: skip
    refusal = guard.refusal(scope)
    return None if refusal is None else refusal[0]


async def _app(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the guard's decisions are tested without the app")


def test_the_guard_refuses_by_host_cookie_and_origin() -> None:
    keys = Secrets()
    guard = Guard(_app, keys)
    assert _status(guard, host="127.0.0.1:80") == 421  # no port yet: nothing passes
    guard.listening(80)
    cookie = f"coord_web={keys.session}"
    assert _status(guard, host="evil.example:80", cookie=cookie) == 421
    assert _status(guard, host="localhost:80") == 403
    assert _status(guard, host="localhost:80", cookie=cookie) is None
    assert _status(guard, host="[::1]:80", query=f"token={keys.token}") is None
    assert _status(guard, host="[::1]:80", query="token=nope") == 403
    assert _status(guard, host="localhost:80", path="/static/web.js") is None
    assert _status(guard, "POST", host="localhost:80", cookie=cookie) == 403
    assert _status(guard, "POST", host="localhost:80", cookie=cookie,
                   origin="http://localhost:80") is None  # fmt: skip
    assert _status(guard, "POST", host="localhost:80", cookie=cookie,
                   origin="http://localhost:81") == 403  # fmt: skip
    assert _status(guard, "PUT", host="localhost:80", cookie=cookie) == 405
    assert keys.csrf_ok(keys.csrf) and not keys.csrf_ok(keys.session) and not keys.csrf_ok(None)
    assert keys.token not in (keys.session, keys.csrf)


def test_a_one_time_code_signs_in_once_and_only_while_it_lives() -> None:
    now = [100.0]
    codes = Codes(clock=lambda: now[0])
    first, second, late = codes.issue(60), codes.issue(60), codes.issue(60)
    assert not first.spent and codes.left_s(first) == 60
    assert codes.spend(first.value) and first.spent
    assert not codes.spend(first.value)  # a second use
    assert not codes.spend("x" * len(first.value))  # never issued
    now[0] = 159.0
    assert codes.spend(second.value)
    now[0] = 160.0
    assert codes.left_s(late) == 0 and not codes.spend(late.value)  # dead at its hour


def _answer(guard: Guard, path: str, query: str) -> tuple[int, dict[bytes, bytes], bytes]:
    """What the guard itself answers a GET (the app behind it raises if reached)."""
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    scope = {
        "type": "http", "method": "GET", "path": path, "query_string": query.encode(),
        "headers": [(b"host", b"localhost:80")],
    }  # fmt: skip
    trio.run(guard, scope, receive, send)
    return sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"]


def test_a_code_is_answered_by_the_guard_and_reaches_no_route() -> None:
    keys = Secrets()
    guard = Guard(_app, keys)
    guard.listening(80)
    code = guard.codes.issue()
    # Only a GET spends a code: a HEAD (a link checker, a preview) is refused, not let in.
    assert _status(guard, "HEAD", host="localhost:80", query=f"code={code.value}") == 403
    status, headers, body = _answer(guard, "/task/3", f"code={code.value}&x=1")
    assert status == 200 and b'content="0; url=/task/3?x=1"' in body
    assert headers[b"set-cookie"].startswith(f"coord_web={keys.session};".encode())
    status, headers, body = _answer(guard, "/", f"code={code.value}")
    assert status == 403 and b"set-cookie" not in headers
    assert b"printed" in body and keys.token.encode() not in body


def test_the_sign_in_page_escapes_its_target() -> None:
    page = redirect_page('http://127.0.0.1:1/?code=a"b<c')
    assert 'url=http://127.0.0.1:1/?code=a&quot;b&lt;c"' in page


def test_the_redirect_after_sign_in_is_a_path_on_this_server() -> None:
    for evil in ("//evil.example/", "/\\evil.example", "http://evil.example/", "evil",
                 "/\t/evil.example", "/\r\nSet-Cookie: x", "/a\x7f", ""):  # fmt: skip
        assert same_origin_path(evil) == "/", evil
    assert same_origin_path("/task/7") == "/task/7"
    assert same_origin_path("/a b/%") == "/a%20b/%25"
    assert same_origin_path("/caf\u00e9") == "/caf%C3%A9"


def test_a_live_message_is_the_row_under_the_pages_filter() -> None:
    claimed = _task(
        state="claimed", claimed_by="<x>", lease_expires_at="2026-12-01T14:05:00.000000Z"
    )
    event = Event(seq=9, at="2026-12-01T14:00:00.000000Z", type="task.claimed", task_id=7,
                  agent="<x>", task=claimed)  # fmt: skip
    text = message(event, View.from_query({}), "human-ada", "c", NOW).decode()
    head, data = text.split("data: ", 1)
    assert head == "id: 9\nevent: task\n"
    body = json.loads(data)
    assert body["row"] == task_row(claimed, NOW) and "&lt;x&gt;" in body["row"]
    assert "5:00" in body["row"] and body["gate"] == "" and body["done_changed"] is False
    hidden = json.loads(message(event, View.from_query({"state": ["done"]}), "h", "c", NOW)
                        .decode().split("data: ", 1)[1])  # fmt: skip
    assert hidden["row"] == ""


def test_an_event_with_no_task_is_an_other_message_naming_its_type() -> None:
    sent = (
        b'{"seq": 12, "at": "2026-12-01T14:00:00.000000Z", "type": "message.sent",'
        b' "task_id": null, "agent": "codex-3", "recipients": ["human-ada"], "message":'
        b' {"id": 3, "project": "p", "sender": "codex-3", "kind": "message",'
        b' "audience": "agent", "to": "human-ada", "task_id": null, "reply_to": null,'
        b' "body": "<b>hi</b>", "created_at": "2026-12-01T14:00:00.000000Z", "seq": 12}}'
    )
    event = decode_event(sent)
    assert isinstance(event, MessageEvent) and event.message.body == "<b>hi</b>"
    text = message(event, View.from_query({}), "human-ada", "c", NOW).decode()
    assert text == 'id: 12\nevent: other\ndata: {"type":"message.sent"}\n\n'
    slot = Event(seq=13, at="2026-12-01T14:00:00.000000Z", type="slot.granted", task_id=None,
                 agent="cursor-2", task=None)  # fmt: skip
    assert "event: other" in message(slot, View.from_query({}), "h", "c", NOW).decode()
    assert isinstance(decode_event(msgspec.json.encode(slot)), Event)
    assert "message.sent" in LIVE_TYPES and "task.claimed" in LIVE_TYPES
    assert "file.edited" not in LIVE_TYPES


def test_webhook_bodies_are_signed_and_gates_are_named() -> None:
    body = b'{"kind":"gate"}'
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert sign(b"s3cret", body) == f"sha256={expected}"
    gate = _task(assignee="human-ada")
    posted = Event(seq=1, at="2026-12-01T14:00:00.000000Z", type="task.posted", task_id=7,
                   agent="claude-1", task=gate)  # fmt: skip
    assert kinds_of(posted, "human-ada") == ["task.posted", GATE]
    assert kinds_of(posted, "human-bob") == ["task.posted"]


def test_human_as_an_assignee_is_this_users_human_agent_on_every_builder() -> None:
    me = human_agent()
    assert me.startswith("human-") and resolve_assignee("human") == me
    assert resolve_assignee("humane") == "humane" and resolve_assignee(None) is None
    assert methods.post("gate", assignee="human").params["assignee"] == me  # type: ignore[index]
    assert methods.assign(1, "human").params["assignee"] == me  # type: ignore[index]
    assert methods.release(1, "a", assignee="human").params["assignee"] == me  # type: ignore[index]
    assert methods.post("x", assignee="claude-1").params["assignee"] == "claude-1"  # type: ignore[index]


def test_a_streams_outbox_holds_at_most_its_limit_and_hands_it_over_whole() -> None:
    outbox = Outbox(limit=10)
    assert outbox.put(b"12345") and outbox.put(b"6789")
    assert not outbox.put(b"ab")  # past the limit: refused, nothing queued
    assert outbox.size == 9
    assert trio.run(outbox.take) == b"123456789" and outbox.size == 0
    assert outbox.put(b"0123456789") and not outbox.put(b"x")
    trio.run(outbox.take)
    assert outbox.put(b"a message longer than the limit") and not outbox.put(b"x")


def test_a_webhooks_queue_drops_its_oldest_past_the_bound_and_names_it_without_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(notify, "MAX_BACKLOG", 2)
    hook = notify.Webhook.of("https://u:pw@hooks.example/in?key=k", "s", ["task.posted"])
    assert hook.shown == "https://hooks.example/in"
    for bad in ("ftp://h/x", "http:///x", "http://h:99999/x", "http://h:port/x"):
        with pytest.raises(ValueError, match="http:// or https:// URL"):
            notify.Webhook.of(bad, "s", ["gate"])
    queue = notify.ReceiverQueue(hook)
    for seq in (1, 2, 3):
        queue.offer(Event(seq=seq, at="2026-12-01T14:00:00.000000Z", type="task.posted",
                          task_id=seq, agent="claude-1", task=_task()), "human-ada")  # fmt: skip
    # The head (seq 1) is the one being delivered: the oldest waiting one goes.
    assert [note.event.seq for note in queue.queue] == [1, 3]
    status = queue.status()
    assert (status.backlog, status.dropped, status.delivered) == (2, 1, 0)
    said = capsys.readouterr().err
    assert "(seq 2) dropped" in said and "pw" not in said and "key=" not in said


def test_a_webhook_post_to_an_answer_that_is_not_http_is_one_error() -> None:
    async def main() -> str:
        async def nonsense(stream: trio.SocketStream) -> None:
            await stream.receive_some(65536)
            await stream.send_all(b"SPLAT\r\n\r\n")
            await stream.aclose()

        async with trio.open_nursery() as nursery:
            serve = partial(trio.serve_tcp, nonsense, 0, host="127.0.0.1")
            listeners = await nursery.start(serve)
            port = listeners[0].socket.getsockname()[1]
            try:
                await http_post.post(f"http://127.0.0.1:{port}/", b"{}", [])
            except http_post.PostFailed as exc:
                return str(exc)
            finally:
                nursery.cancel_scope.cancel()
        return "no error"

    assert trio.run(main) != "no error"


def test_notify_on_takes_gate_event_types_and_families_and_refuses_the_rest() -> None:
    """`--notify-on bogus` and `task.*` (the README's own wording, taken literally)
    used to start a receiver that never heard a thing."""
    kinds = notify.chosen_kinds(["gate", "land.*", "message.sent"])
    assert kinds == {"gate", "message.sent"} | {t for t in EVENT_TYPES if t.startswith("land.")}
    assert "task.failed" in notify.chosen_kinds(["task.*"])
    for bad in (["bogus"], ["task.faild"], ["nope.*"], []):
        with pytest.raises(ValueError, match="--notify-on"):
            notify.chosen_kinds(bad)


def _landing(landing_id: int, state: str, **fields: Any) -> Landing:
    base: dict[str, Any] = {
        "id": landing_id, "project": "/p", "onto": "main", "branch": f"b{landing_id}",
        "agent": "cursor-2", "task_id": None, "state": state, "paths": [],
        "created_at": "2026-12-01T13:00:00.000000Z", "updated_at": "2026-12-01T13:50:00.000000Z",
        "lease_id": None, "reason": None, "commit": None,
        "expires_at": "2026-12-01T14:10:00.000000Z", "ttl_s": 600.0,
    }  # fmt: skip
    base.update(fields)
    return msgspec.convert(base, Landing)


def test_the_landing_page_lists_the_ended_landings_with_commit_or_reason() -> None:
    """Issue 47 item 8: a landing that ended stays on the page, below the queue."""
    landed = _landing(1, "landed", commit="9f2c4e1a" * 5)
    failed = _landing(2, "failed", reason="<b>tests</b> failed")
    page = message_pages.landing_part([], [failed, landed], NOW)
    assert "nothing queued" in page and "Recent landings (2)" in page
    assert '<tr id="r1">' in page and "9f2c4e1a9f2c<" in page  # the commit, shortened
    assert "&lt;b&gt;tests&lt;/b&gt; failed" in page and "10m ago" in page
    assert page.index('id="r2"') < page.index('id="r1"')  # newest first, as given
    assert "none ended yet" in message_pages.landing_part([], [], NOW)


def test_the_agents_page_hides_ended_agents_and_offers_release_to_holders_only() -> None:
    """Issue 47 item 8: an agent holding nothing, unseen for the horizon, has ended."""
    agents = [
        AgentInfo(agent="holder", last_seen="2026-11-01T00:00:00.000000Z", holding=1),
        AgentInfo(agent="idle", last_seen="2026-12-01T13:59:00.000000Z", holding=0),
        AgentInfo(agent="gone", last_seen="2026-12-01T13:00:00.000000Z", holding=0),
    ]
    held = {"holder": [_task(state="claimed", claimed_by="holder")]}
    page = pages.agents_page(agents, held, {}, NOW, "csrf")
    assert 'id="a-holder"' in page and 'id="a-idle"' in page and 'id="a-gone"' not in page
    assert page.count("<button") == 1 and "/act/release-agent/holder" in page
    assert 'href="/agents?ended=1"' in page and "show ended (1)" in page
    every = pages.agents_page(agents, held, {}, NOW, "csrf", show_ended=True)
    assert 'id="a-gone"' in every and every.count("<button") == 1 and "hide ended" in every


def test_only_a_page_that_follows_the_stream_has_the_live_badge() -> None:
    live = pages.frame("t", Html(""), scope="s", human="h", live="1")
    assert 'id="status"' in live and ">connecting<" in live
    assert 'id="status"' not in pages.frame("t", Html(""), scope="s", human="h")
