"""Start an MCP server as a host would, and ask its `whoami` which board it reached.

`coord doctor` (`doctor/boards.py`) compares the board each host's server reaches
with the shell's. The conversation is plain JSON-RPC over the server's stdio, as
the MCP stdio transport is (one message per line): `initialize`, then
`notifications/initialized` and `tools/call whoami`, read with the relay's
bounded line reader (`mcp_relay.lines`). So the doctor never imports the MCP SDK
(about a second of its own, more on a loaded machine): only the servers it
starts need it. All of them run at once, in one thread, with one deadline.

It knows a surface only by the shape below (`Launch`) and is given the
environment to start it with (`doctor.hostenv` works both out).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, TypeVar

from coordd_apps.mcp_relay.lines import LineSplitter


class Launch(Protocol):
    """How a surface's server is started (`doctor.hostenv.Surface` is one)."""

    @property
    def command(self) -> str: ...
    @property
    def args(self) -> list[str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def spawn(self) -> Hashable:
        """What makes two surfaces the same process to start (probed once)."""
        ...


L = TypeVar("L", bound=Launch)

#: The whole probe of one server: its start (a server that serves the tab itself imports
#: the MCP SDK: a second or more on a loaded machine), the handshake and one `whoami`.
PROBE_TIMEOUT_S = 30.0
#: Seconds a server has to exit once its stdin is closed, before it is killed.
EXIT_GRACE_S = 2.0
#: The tail of a server's stderr quoted when it failed.
STDERR_CHARS = 300
#: The protocol version the probe asks for (a server answers the one it speaks).
PROTOCOL_VERSION = "2025-06-18"
#: The two requests' ids.
INITIALIZE_ID, WHOAMI_ID = 1, 2


@dataclass(frozen=True)
class Reached:
    """What a surface's `whoami` said (or why it said nothing)."""

    board_id: str | None = None
    socket: str | None = None
    #: The server's reason for reaching no board (nothing answers, several boards, ...).
    unreached: str | None = None
    #: The probe's own failure: the server did not start, or did not answer in time.
    failed: str | None = None


def mcp_sdk_missing() -> str | None:
    """Why the servers cannot be probed from here, or None. The servers this coord
    starts need the SDK (`coord mcp`); the doctor itself does not, so it is looked
    for, not imported."""
    if importlib.util.find_spec("mcp") is None:
        return (
            "the MCP SDK is not installed for this coord, so the hosts' MCP servers cannot be"
            " started to compare boards (pip install 'coordd-client[mcp]'; `coord mcp` needs"
            " it too)"
        )
    return None


def probe_all(
    surfaces: Sequence[L],
    env_of: Callable[[L], dict[str, str]],
    timeout_s: float = PROBE_TIMEOUT_S,
) -> list[Reached]:
    """Start every surface's server at once (as its host would, in `env_of(surface)`) and
    ask its `whoami`; surfaces that start the same command in the same environment are
    started once."""
    distinct = list(dict.fromkeys(surface.spawn for surface in surfaces))
    first = {spawn: next(s for s in surfaces if s.spawn == spawn) for spawn in distinct}
    deadline = time.monotonic() + timeout_s
    with contextlib.ExitStack() as stack:
        talks = {
            spawn: _Talk(
                first[spawn],
                env_of(first[spawn]),
                stack.enter_context(tempfile.TemporaryFile("w+")),
            )
            for spawn in distinct
        }
        try:
            _converse([t for t in talks.values() if t.found is None], deadline, timeout_s)
        finally:
            for talk in talks.values():
                talk.close()
            for talk in talks.values():
                talk.reap(time.monotonic() + EXIT_GRACE_S)
        found = {spawn: talk.reached() for spawn, talk in talks.items()}
    return [found[surface.spawn] for surface in surfaces]


def _message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}, separators=(",", ":")).encode() + b"\n"


INITIALIZE = _message(
    id=INITIALIZE_ID,
    method="initialize",
    params={
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "coord doctor", "version": "1"},
    },
)
#: Sent once `initialize` is answered, as the protocol orders.
WHOAMI = _message(method="notifications/initialized") + _message(
    id=WHOAMI_ID, method="tools/call", params={"name": "whoami", "arguments": {}}
)


@dataclass
class _Talk:
    """One server's process and how far the conversation with it got."""

    launch: Launch
    env: dict[str, str]
    #: Where its stderr goes (quoted when it failed).
    errlog: IO[str]
    process: subprocess.Popen[bytes] | None = None
    splitter: LineSplitter = field(default_factory=LineSplitter)
    #: The answer, or the failure, once there is one.
    found: Reached | None = None

    def __post_init__(self) -> None:
        try:
            self.process = subprocess.Popen(
                [self.launch.command, *self.launch.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.errlog,
                env=self.env,
                cwd=self.launch.cwd,
            )
        except OSError as exc:
            self.found = Reached(failed=f"{type(exc).__name__}: {exc}")
            return
        self.send(INITIALIZE)

    def send(self, data: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except OSError:
            pass  # it exited: its stdout ends next, and that is the finding

    def read(self) -> None:
        """Take what the server wrote; `found` is set once the conversation is over."""
        assert self.process is not None and self.process.stdout is not None
        data = os.read(self.process.stdout.fileno(), 65536)
        lines = self.splitter.feed(data) if data else self.splitter.end()
        for line in lines:
            self._answer(line)
            if self.found is not None:
                return
        if not data:
            code = self.process.poll()
            how = "closed its output" if code is None else f"exited (status {code})"
            self.found = Reached(failed=f"it {how} before answering whoami")

    def _answer(self, line: bytes | None) -> None:
        try:
            message = json.loads(line) if line is not None else None
        except ValueError:
            message = None  # not ours to judge: a server's stray output
        if not isinstance(message, dict) or "method" in message:
            return  # a notification or request of the server's: the probe needs none
        if "error" in message:
            error = message.get("error") or {}
            said = error.get("message") if isinstance(error, dict) else error
            self.found = Reached(failed=f"it answered an error: {said}")
        elif message.get("id") == INITIALIZE_ID:
            self.send(WHOAMI)
        elif message.get("id") == WHOAMI_ID:
            self.found = _read_whoami(message.get("result"))

    def close(self) -> None:
        """Close its stdin: the end of the session, for a server of the MCP stdio kind."""
        if self.process is not None and self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def reap(self, deadline: float) -> None:
        """Wait for it to exit until `deadline`, then kill it: nothing is left running."""
        if self.process is None:
            return
        try:
            self.process.wait(max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def reached(self) -> Reached:
        found = self.found or Reached(failed="it did not answer whoami")
        if found.failed is not None:
            found = Reached(socket=found.socket, failed=found.failed + self._stderr_tail())
        return found

    def _stderr_tail(self) -> str:
        self.errlog.seek(0)
        text = " ".join(self.errlog.read().split())
        return f" (its stderr: {text[-STDERR_CHARS:]})" if text else ""


def _converse(talks: list[_Talk], deadline: float, timeout_s: float) -> None:
    """Read every server until each has answered (or ended), or the deadline."""
    with selectors.DefaultSelector() as selector:
        for talk in talks:
            assert talk.process is not None and talk.process.stdout is not None
            selector.register(talk.process.stdout, selectors.EVENT_READ, talk)
        waiting = set(map(id, talks))
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for key, _ in selector.select(left):
                talk = key.data
                talk.read()
                if talk.found is not None:
                    selector.unregister(key.fileobj)
                    waiting.discard(id(talk))
    for talk in talks:
        if talk.found is None:
            talk.found = Reached(failed=f"did not answer whoami within {timeout_s:.0f} s")


def _read_whoami(result: Any) -> Reached:
    content = result.get("structuredContent") if isinstance(result, dict) else None
    if not isinstance(content, dict) or result.get("isError"):
        return Reached(failed="its whoami tool answered no result")
    if "board_id" not in content:
        return Reached(
            socket=content.get("socket"),
            failed="its coord is older than board ids (upgrade it, then run coord setup again)",
        )
    return Reached(content["board_id"], content.get("socket"), content.get("board_unreached"))
