"""The routes: each reads through the trio client, renders a page (`pages.py`) and
answers; `Guard` (guard.py) stands in front of all of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from importlib import resources
from urllib.parse import parse_qs, parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from coordd_apps import export
from coordd_apps.web import message_pages, messages, pages
from coordd_apps.web.acts import (
    ACTS,
    MAX_FORM_BYTES,
    Refused,
    Site,
    check,
    confirmation,
    perform,
)
from coordd_apps.web.daemon import all_tasks, connected, costs, every_newest, history, newest_tasks
from coordd_apps.web.guard import Guard, Secrets
from coordd_apps.web.live import LiveStream
from coordd_apps.web.markup import Html
from coordd_apps.web.notify import Notifier, webhooks
from coordd_apps.web.rows import View, is_gate, task_row
from coordd_client.aio import AsyncClient
from coordd_client.paging import URGENT_LISTS
from coordd_wire.errors import CoordError, DaemonUnavailable, NotFound
from coordd_wire.wire import Reservation, Task

STATIC_TYPES = {"web.js": "text/javascript", "web.css": "text/css"}
Handler = Callable[[Request], Awaitable[Response]]


async def _newest(
    client: AsyncClient, site: Site, view: View, states: list[str]
) -> tuple[list[Task], int]:
    """The rows of a view the daemon filters whole (states, kind, ready): the newest
    `site.rows`, oldest first, and how many more pass."""
    if view.ready and "pending" not in states:
        return [], 0  # ready tasks are pending ones
    ready = True if view.ready else None
    return await newest_tasks(client, site.rows, project=site.project, state=states,
                              kind=view.kind, ready=ready)  # fmt: skip


def build(site: Site, keys: Secrets, notifier: Notifier | None = None) -> Guard:
    """The whole app for one server: the routes behind the guard (and the webhooks'
    state on the board, when `coord web` delivers any)."""
    static = {
        name: (resources.files("coordd_apps.web") / "static" / name).read_bytes()
        for name in STATIC_TYPES
    }
    scope_name = site.project or "every project"

    def page(
        title: str, body: Html, status: int = 200, live: bool = False, board: str | None = None
    ) -> HTMLResponse:
        text = pages.frame(
            title,
            body,
            scope=scope_name,
            human=site.human,
            live="1" if live else None,
            board=board,
        )
        return HTMLResponse(text, status_code=status)

    def guarded(handler: Handler) -> Handler:
        """A daemon that does not answer, or a refusal, as a page rather than a 500."""

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except DaemonUnavailable as exc:
                text = f"no coordd answers on {site.socket}: {exc.message}"
                return page("daemon away", pages.message_page("The daemon is away", text), 503)
            except NotFound as exc:
                return page("not found", pages.message_page("Not found", exc.message), 404)
            except Refused as exc:
                return page("refused", pages.message_page("Refused", str(exc)), 400)
            except CoordError as exc:
                return page("error", pages.message_page("Error", exc.message), 409)

        return run

    async def board(request: Request) -> Response:
        view = View.from_query(parse_qs(request.url.query))
        async with connected(site.socket) as client:
            info = await client.server_info()  # first: later events replay
            last_seq = info.last_seq
            states = sorted(view.states)
            open_work = {"project": site.project, "assignee": site.human,
                         "state": ["pending", "claimed"]}  # fmt: skip
            if URGENT_LISTS in info.features and not (view.text or view.agent):
                # Only the rows shown, and the count of the rest (1.2 section 6c).
                shown, older = await _newest(client, site, view, states)
                gates = await every_newest(client, **open_work)
            else:  # every task, filtered here (a title search, an agent's tasks)
                tasks = await all_tasks(client, project=site.project, state=states,
                                        kind=view.kind)  # fmt: skip
                gates = await all_tasks(client, **open_work)
                admits = view.filter().admits
                every = [t for t in tasks if admits(t)]  # ascending id: the newest last
                older = max(0, len(every) - site.rows)
                shown = every[older:]
            spent = await costs(client, site.project)
        gates = [t for t in gates if is_gate(t, site.human)]
        now = datetime.now(UTC)
        hooks = webhooks(notifier.status() if notifier is not None else [])
        board = hooks + pages.board(
            shown,
            gates,
            view,
            now,
            csrf=keys.csrf,
            last_seq=last_seq,
            older=older,
            costs=spent,
        )
        return page("coord web", board, live=True, board=info.board_id)

    async def row(request: Request) -> Response:
        view = View.from_query(parse_qs(request.url.query))
        async with connected(site.socket) as client:
            task = (await client.get(int(request.path_params["id"]))).task
            spent = await costs(client, site.project, task.id)
        text = task_row(task, datetime.now(UTC), spent) if view.filter().admits(task) else ""
        return HTMLResponse(text)

    async def task_page(request: Request) -> Response:
        task_id = int(request.path_params["id"])
        async with connected(site.socket) as client:
            task = (await client.get(task_id)).task
            events = await history(client, task_id)
            said = await messages.thread(client, task_id)
            spent = await costs(client, site.project, task_id)
        now = datetime.now(UTC)
        thread = message_pages.thread(said, task_id, now, keys.csrf)
        body = pages.task_page(task, events, now, keys.csrf, thread, human=site.human, costs=spent)
        return page(f"#{task.id}", body)

    async def task_export(request: Request) -> Response:
        task_id = int(request.path_params["id"])
        fmt = request.path_params["fmt"]
        async with connected(site.socket) as client:
            task = (await client.get(task_id)).task
            events = await history(client, task_id)
        if fmt == "md":
            text = export.task_section(task, events).encode()
            kind = "text/markdown; charset=utf-8"
        else:
            text = b"".join(export.jsonl_line(e) for e in events)
            kind = "application/x-ndjson"
        disposition = f'attachment; filename="task-{task_id}.{fmt}"'
        return Response(text, media_type=kind, headers={"content-disposition": disposition})

    async def agents(request: Request) -> Response:
        async with connected(site.socket) as client:
            known = (await client.agents()).agents
            claimed = await all_tasks(client, project=site.project, state="claimed")
            reserved = (await client.reservations(project=site.project)).reservations
            spent = await costs(client, site.project)
        held: dict[str, list[Task]] = {}
        for t in claimed:
            held.setdefault(t.claimed_by or "-", []).append(t)
        mine: dict[str, list[Reservation]] = {}
        for r in reserved:
            mine.setdefault(r.agent, []).append(r)
        show_ended = request.query_params.get("ended") == "1"
        body = pages.agents_page(
            known, held, mine, datetime.now(UTC), keys.csrf, show_ended=show_ended, costs=spent
        )
        return page("agents", body)

    async def reservations(request: Request) -> Response:
        async with connected(site.socket) as client:
            found = (await client.reservations(project=site.project)).reservations
        return page("reservations", pages.reservations_page(found, datetime.now(UTC)))

    def part_or_page(request: Request, title: str, part: Html, types: str, seq: int) -> Response:
        """The live part alone (`?part=1`, the page's script), or the whole page."""
        if request.query_params.get("part") == "1":
            return HTMLResponse(part)
        return page(title, message_pages.live_part(part, types, seq), live=True)

    async def messages_page(request: Request) -> Response:
        async with connected(site.socket) as client:
            seq = (await client.server_info()).last_seq  # first: later events refresh
            mail = await messages.inbox(client, site.human)
            asks = await messages.open_asks(client, site.project)
        now = datetime.now(UTC)
        part = message_pages.messages_part(mail, asks, now, site.human, keys.csrf)
        if request.query_params.get("part") == "1":
            return HTMLResponse(part)
        live = message_pages.live_part(part, "message.", seq)
        return page("messages", message_pages.messages_page(live, keys.csrf), live=True)

    async def slots(request: Request) -> Response:
        async with connected(site.socket) as client:
            seq = (await client.server_info()).last_seq
            leases = (await client.slots(project=site.project)).leases
        part = message_pages.slots_part(leases, datetime.now(UTC))
        return part_or_page(request, "slots", part, "slot.", seq)

    async def landing(request: Request) -> Response:
        async with connected(site.socket) as client:
            seq = (await client.server_info()).last_seq
            found = await messages.queues(client, site.project)
            ended = await messages.recent_landings(client, site.project)
        part = message_pages.landing_part(found, ended, datetime.now(UTC))
        return part_or_page(request, "landing queue", part, "land.", seq)

    async def post_form(request: Request) -> Response:
        return page("post", pages.post_page(keys.csrf))

    async def act(request: Request) -> Response:
        verb = request.path_params["verb"]
        target = request.path_params.get("target", "")
        if verb not in ACTS:
            return page("refused", pages.message_page("Refused", f"no action {verb!r}"), 404)
        declared = int(request.headers.get("content-length") or 0)
        if declared > MAX_FORM_BYTES:
            raise Refused(f"a form of at most {MAX_FORM_BYTES} bytes")
        raw = await request.body()
        if len(raw) > MAX_FORM_BYTES:
            raise Refused(f"a form of at most {MAX_FORM_BYTES} bytes")
        form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
        if not keys.csrf_ok(form.get("csrf")):
            return page(
                "refused", pages.message_page("Refused", "the form's CSRF token is wrong"), 403
            )
        check(verb, form, target)
        if form.get("confirmed") != "yes":
            fields = [(k, v) for k, v in form.items() if k != "confirmed"]
            asked, facts = await confirmation(site, verb, form, target)
            body = pages.confirm_page(asked, str(request.url.path), fields, facts)
            return page("confirm", body)
        outcome = await perform(site, verb, form, target)
        # Back to what changed (no reflected text); the page shows its new state and history.
        return RedirectResponse(outcome.back, status_code=303)

    async def static_file(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in static:
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(static[name], media_type=STATIC_TYPES[name])

    routes = [
        Route("/", guarded(board)),
        Route("/row/{id:int}", guarded(row)),
        Route("/task/{id:int}", guarded(task_page)),
        Route("/task/{id:int}/export.{fmt:str}", guarded(task_export)),
        Route("/agents", guarded(agents)),
        Route("/reservations", guarded(reservations)),
        Route("/messages", guarded(messages_page)),
        Route("/slots", guarded(slots)),
        Route("/landing", guarded(landing)),
        Route("/post", guarded(post_form)),
        Route("/act/{verb:str}", guarded(act), methods=["POST"]),
        Route("/act/{verb:str}/{target:path}", guarded(act), methods=["POST"]),
        Route("/static/{name:str}", static_file),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/live", LiveStream(site, keys.csrf)),
    ]
    return Guard(Starlette(routes=routes), keys)
