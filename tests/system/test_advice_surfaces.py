"""Issue 47 item 4 over a real daemon: the same refusal, said to each surface in its own
terms, from the `data` the daemon really sends (tests/unit/test_advice.py pins every
word on built errors; this pins that the daemon's errors carry what it reads)."""

from __future__ import annotations

import re
import subprocess

import pytest

from coordd_apps.mcp_bridge import results
from coordd_apps.wording.advice import Surface, refusal
from coordd_client import Client
from coordd_wire.errors import Conflict, Reserved
from support import DaemonProcess, coord

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
CLOCK = r"\d\d:\d\dZ"


def run(daemon: DaemonProcess, agent: str, *args: str) -> subprocess.CompletedProcess[str]:
    return coord(*args, "--agent", agent, "--project", PROJECT, socket=daemon.socket_path)


def test_a_full_slot_is_said_in_each_surfaces_terms(daemon: DaemonProcess) -> None:
    assert run(daemon, "a", "slot", "acquire", "deploy").returncode == 0
    refused = run(daemon, "b", "slot", "acquire", "deploy")
    assert refused.returncode == 3
    assert re.fullmatch(
        rf"coord: slot deploy is full \(1 of 1\): held by a, lease ending in 10 min \({CLOCK}\);"
        r" run it again with --wait S to wait for it, or do other work first\n",
        refused.stderr,
    ), refused.stderr
    assert "wait_s" not in refused.stderr
    # Its own lease, listed: the time said as every time is, not the raw instant.
    listed = run(daemon, "a", "slot", "list").stdout
    assert re.search(rf"expires in 10 min \({CLOCK}\)", listed), listed
    assert not re.search(r"\d{4}-\d\d-\d\dT", listed), listed
    with (
        Client(daemon.socket_path, agent="b", project=PROJECT) as client,
        pytest.raises(Conflict) as caught,
    ):
        client.acquire_slot("deploy")
    said = results.refusal(caught.value).content[0]
    assert re.fullmatch(
        rf"conflict: slot deploy is full \(1 of 1\): held by a, lease ending in 10 min"
        rf" \({CLOCK}\); call acquire_slot again with wait_s \(at most 50\) to wait for it,"
        r" or do other work first",
        getattr(said, "text", ""),
    )


def test_a_reservation_refused_is_said_in_each_surfaces_terms(daemon: DaemonProcess) -> None:
    assert (
        run(daemon, "a", "reserve", "src/parser.py", "--reason", "parser rewrite").returncode == 0
    )
    refused = run(daemon, "b", "reserve", "src/**")
    assert refused.returncode == 3
    first = refused.stderr.splitlines()[0]
    assert re.fullmatch(
        rf"coord: src/\*\* overlaps src/parser.py, held by a \(parser rewrite\), ending in"
        rf" (59|60) min \({CLOCK}\); work on other files, run it again with --wait S to wait"
        r" for it, or ask a to hand it over: `coord request src/parser.py --wait 300`"
        r" \(nothing was reserved\)",
        first,
    ), first
    with (
        Client(daemon.socket_path, agent="b", project=PROJECT) as client,
        pytest.raises(Reserved) as caught,
    ):
        client.reserve(["src/**"])
    error = caught.value
    mcp = refusal(Surface.MCP, error.kind, error.message, error.data)
    assert mcp.endswith(
        "; work on other files, call reserve_paths again with wait_s (at most 50) to wait for"
        ' it, or ask a to hand it over: request_release with patterns ["src/parser.py"]'
    )
    hook = refusal(Surface.HOOK, error.kind, error.message, error.data)
    assert hook.endswith(
        ' request_release with patterns ["src/parser.py"]'
        " (`coord request src/parser.py --wait 300` in a shell)"
    )
    assert "['" not in mcp + hook + first
