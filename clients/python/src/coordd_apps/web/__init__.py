"""`coord web`: the human's board in the browser (the `web` extra).

A Starlette app served by hypercorn's trio worker on loopback TCP, talking to
the daemon only through the trio client (`AsyncClient`), as every other
surface talks to it through the socket. Pages are rendered on the server with
everything agents wrote escaped; one small static script (no inline scripts:
the Content-Security-Policy forbids them) keeps the board live from a
server-sent event stream fed by `events.subscribe` and resumed by seq.

Modules: `markup` (escaping), `guard` (token, cookie, Host, Origin, CSRF,
headers), `signin` (`--open`'s one-time code and 0600 redirect file),
`daemon` (paged reads and the resuming event feed), `rows` (a task's row and
the board's filter), `pages` (every page), `live` (the SSE endpoint, a bounded
backlog per stream), `acts` (the human's actions), `app` (routes), `serve`
(hypercorn, the printed address, `--open`), `notify` (webhooks). Importing this package
imports nothing heavy; `app` and `serve` import Starlette and hypercorn.
"""
