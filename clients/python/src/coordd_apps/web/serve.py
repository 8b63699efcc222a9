"""Serving the app: hypercorn's trio worker on 127.0.0.1 (a free port, or `--port`),
the address with its token printed once, the browser opened when asked (through a
0600 file and a one-time code, never with a secret in its argv: `signin.py`), and
the webhook notifier beside it when one is configured."""

from __future__ import annotations

import signal
import sys
import webbrowser
from dataclasses import dataclass

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from coordd_apps.web.acts import Site
from coordd_apps.web.app import build
from coordd_apps.web.daemon import connected
from coordd_apps.web.guard import Guard, Secrets
from coordd_apps.web.notify import Notifier, Webhook
from coordd_apps.web.signin import write_redirect

#: Seconds a stop waits for open pages' streams before closing them.
GRACEFUL_S = 1.0


@dataclass(frozen=True)
class Options:
    site: Site
    port: int = 0
    open_browser: bool = False
    webhooks: tuple[Webhook, ...] = ()


async def run(options: Options) -> None:
    keys = Secrets()
    notifier = Notifier(options.webhooks) if options.webhooks else None
    app = build(options.site, keys, notifier)
    config = Config()
    config.bind = [f"127.0.0.1:{options.port}"]
    config.graceful_timeout = GRACEFUL_S
    config.accesslog = None
    config.errorlog = "-"
    config.loglevel = "WARNING"  # errors on stderr; not a line per start
    after_seq = 0
    if notifier is not None:
        async with connected(options.site.socket) as client:
            after_seq = (await client.server_info()).last_seq
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(serve, app, config)
        port = int(binds[0].rsplit(":", 1)[1])
        app.listening(port)
        url = f"http://127.0.0.1:{port}/?token={keys.token}"
        sys.stdout.write(f"coord web: {url}\n")
        sys.stdout.flush()
        if notifier is not None:
            nursery.start_soon(notifier.run, options.site, after_seq)
        if options.open_browser:
            nursery.start_soon(browse, app, port)
        nursery.start_soon(_stop_on_sigterm, nursery.cancel_scope)


async def _stop_on_sigterm(scope: trio.CancelScope) -> None:
    """SIGTERM stops as Ctrl-C does, so what is cleaned up on the way out (`--open`'s
    file) is, rather than the process dying where it stands."""
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


async def browse(guard: Guard, port: int) -> None:
    """Start the user's browser on a 0600 file that redirects with a one-time code,
    and remove the file once the code is spent or dead (or `coord web` stops)."""
    code = guard.codes.issue()
    page = write_redirect(f"http://127.0.0.1:{port}/?code={code.value}")
    async with trio.open_nursery() as nursery:
        try:
            nursery.start_soon(_start_browser, page.as_uri())
            with trio.move_on_after(guard.codes.left_s(code)):
                await code.used.wait()
        finally:
            page.unlink(missing_ok=True)


async def _start_browser(url: str) -> None:
    """`webbrowser.open` in a thread, abandoned on Ctrl-C: for some browsers it waits
    for a command that runs as long as the browser does. With no browser to start (a
    server, no `$BROWSER`), the person is told to open the printed address instead of
    waiting for a page that never comes."""
    started = await trio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)
    if not started:
        sys.stderr.write(
            "coord web: --open found no browser to start here; open the address above\n"
        )
        sys.stderr.flush()


def main(site: Site, port: int, open_browser: bool, webhooks: tuple[Webhook, ...]) -> None:
    """Serve until Ctrl-C."""
    try:
        trio.run(run, Options(site, port, open_browser, webhooks))
    except KeyboardInterrupt:
        pass
