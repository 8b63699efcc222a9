"""`coord web`'s figures: page weight, time to first render of a 10,000-task board (as
served, the newest 500 rows, and with no row cap), and the latency from a commit to its
paint on an open board.

    .venv/bin/python -m bench.web [--tasks 10000] [--rounds 20]

A real daemon, a real `coord web`, Debian's chromium under Playwright (as the tests
drive it). Latency: the page's MutationObserver stamps the frame after a new row
lands (`requestAnimationFrame`, so the row was laid out and painted), and this
process stamps the moment the post's answer arrives, which the daemon sends only
after COMMIT; both read the same wall clock. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Response, sync_playwright

from bench.harness import Daemon, post_tasks

ROOT = Path(__file__).resolve().parents[1]
COORD = str(Path(sys.executable).parent / "coord")
WATCH = """() => {
  window.painted = {};
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes) {
      if (node.id) requestAnimationFrame(() => { window.painted[node.id] = Date.now(); });
    }
  }).observe(document.getElementById("rows"), { childList: true });
}"""


def start_web(socket: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COORD")}
    env.update(COORDD_SOCKET=str(socket), COORD_NO_AUTOSTART="1")
    proc = subprocess.Popen(
        [COORD, "--project", "default", "web", *args], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    return proc, lines.get(timeout=60).removeprefix("coord web: ").strip()


def load(page: Page, url: str) -> dict[str, float]:
    """Open the board once; its weight and when it was first painted and usable."""
    sizes: list[int] = []

    def weigh(response: Response) -> None:
        # The live stream never ends: its body is not page weight (and reading it after
        # the page closed raised inside Playwright's callback).
        if response.ok and "event-stream" not in response.headers.get("content-type", ""):
            sizes.append(len(response.body()))

    page.on("response", weigh)
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    page.wait_for_selector("#status[data-state=live]")
    live_s = time.perf_counter() - started
    paint: Any = page.evaluate(
        "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
    )
    nav: Any = page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])")
    timing = json.loads(nav)
    return {
        "bytes": float(sum(sizes)),
        "fcp_ms": float(paint),
        "load_ms": float(timing["loadEventEnd"]),
        "live_ms": live_s * 1000,
    }


def load_closed(page: Page, url: str) -> dict[str, float]:
    """`load`, then the page closed: its stream must not outlive the server it reads."""
    try:
        return load(page, url)
    finally:
        page.context.close()


def board_figures(
    new_page: Callable[[], Page], daemon: Daemon, url: str, rounds: int
) -> tuple[list[dict[str, float]], list[float]]:
    """Three fresh loads of the board at `url`, then commit-to-paint on an open one."""
    loads = [load_closed(new_page(), url) for _ in range(3)]
    page = new_page()
    try:
        page.goto(url)
        page.wait_for_selector("#status[data-state=live]")
        return loads, latencies(page, daemon, rounds)
    finally:
        page.context.close()


def latencies(page: Page, daemon: Daemon, rounds: int) -> list[float]:
    page.evaluate(WATCH)
    found: list[float] = []
    with daemon.client() as client:
        for n in range(rounds):
            task = client.post(f"latency probe {n}").task
            acked_ms = time.time() * 1000
            # A function, not a string: the page's CSP forbids evaluating strings.
            page.wait_for_function("(id) => window.painted[id]", arg=f"t{task.id}", timeout=60_000)
            painted: Any = page.evaluate(f"window.painted['t{task.id}']")
            found.append(float(painted) - acked_ms)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.stderr.write("bench.web: chromium is not installed (scripts/ensure-chromium.sh)\n")
        return 1
    workdir = Path(tempfile.mkdtemp(prefix="bw", dir="/tmp"))
    daemon = Daemon(workdir)
    web, url = start_web(daemon.socket)
    rows: list[tuple[str, str]] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox"] if os.geteuid() == 0 else []
            )

            def new_page() -> Page:
                # A loaded 2-core machine parses a 3 MB board slowly: bounds, not figures.
                context = browser.new_context()
                context.set_default_timeout(300_000)
                return context.new_page()

            page = new_page()
            empty = load(page, url)
            small = latencies(page, daemon, args.rounds)
            post_tasks(daemon, args.tasks)
            capped = board_figures(new_page, daemon, url, args.rounds)
            # The same board with no row cap (every task a row), as it was before the cap.
            whole, whole_url = start_web(daemon.socket, "--rows", "100000")
            try:
                uncapped = board_figures(new_page, daemon, whole_url, args.rounds)
            finally:
                whole.terminate()
                whole.wait(20)
            browser.close()
    finally:
        web.terminate()
        web.wait(20)
        daemon.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    n = args.tasks + args.rounds
    med = statistics.median

    def p90(xs: list[float]) -> float:
        return sorted(xs)[int(len(xs) * 0.9) - 1]

    rows.append(("page weight, empty board (HTML + JS + CSS)", f"{empty['bytes'] / 1024:.1f} KiB"))
    rows.append(
        ("commit to paint, small board: median / p90", f"{med(small):.0f} / {p90(small):.0f} ms")
    )
    for label, (loads, paints) in (
        (f"{n:,}-task board (the newest 500 rows)", capped),
        (f"{n:,}-task board, no row cap (`--rows 100000`)", uncapped),
    ):
        rows.append((f"page weight, {label}", f"{med(r['bytes'] for r in loads) / 1024:.0f} KiB"))
        for key, what in (("fcp_ms", "first contentful paint"), ("load_ms", "load event")):
            rows.append((f"{what}, {label} (median of 3)", f"{med(r[key] for r in loads):.0f} ms"))
        rows.append(
            (f"stream live, {label} (goto to `live`)", f"{med(r['live_ms'] for r in loads):.0f} ms")
        )
        rows.append(
            (f"commit to paint, {label}: median / p90", f"{med(paints):.0f} / {p90(paints):.0f} ms")
        )
    print("| coord web | figure |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
