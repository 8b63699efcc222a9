"""Start an MCP server as a host would, and ask its `whoami` which board it reached.

`coord doctor` (`doctor/boards.py`) compares the board each host's server reaches
with the shell's (issue 43). Driving a server takes the MCP SDK's client, under trio:
both come with the `mcp` extra, so this lives in the bridge's package, and is
imported only where the doctor probes (`mcp_sdk_missing` says when it cannot).
It knows a surface only by the shape below (`Launch`) and is given the environment
to start it with: importing the doctor's `hostenv` made a circle through the
doctor's package, `doctor` -> `doctor.boards` -> here -> `doctor.hostenv` (issue 45).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar


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

#: The whole probe of one server: its start (the MCP SDK's import is most of a second,
#: more on a loaded machine), the handshake and one `whoami`.
PROBE_TIMEOUT_S = 30.0
#: The tail of a server's stderr quoted when it failed.
STDERR_CHARS = 300


@dataclass(frozen=True)
class Reached:
    """What a surface's `whoami` said (or why it said nothing)."""

    board_id: str | None = None
    socket: str | None = None
    #: The server's reason for reaching no board (nothing answers, several boards, ...).
    unreached: str | None = None
    #: The probe's own failure: the server did not start, or did not answer in time.
    failed: str | None = None


# -- probing --------------------------------------------------------------------------


def mcp_sdk_missing() -> str | None:
    """Why the servers cannot be probed from here, or None."""
    try:
        import mcp.client.stdio  # noqa: F401
        import trio  # noqa: F401
    except ImportError:
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
    import trio

    distinct = list(dict.fromkeys(surface.spawn for surface in surfaces))
    first = {spawn: next(s for s in surfaces if s.spawn == spawn) for spawn in distinct}
    found: dict[Any, Reached] = {}

    async def one(spawn: Any) -> None:
        surface = first[spawn]
        found[spawn] = await _probe(surface, env_of(surface), timeout_s)

    async def every() -> None:
        async with trio.open_nursery() as nursery:
            for spawn in distinct:
                nursery.start_soon(one, spawn)

    trio.run(every)
    return [found[surface.spawn] for surface in surfaces]


async def _probe(surface: Launch, env: dict[str, str], timeout_s: float) -> Reached:
    import trio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=surface.command, args=surface.args, env=env, cwd=surface.cwd
    )
    with tempfile.TemporaryFile("w+") as errlog:
        result: Any = None
        problem: str | None = None
        with trio.move_on_after(timeout_s) as scope:
            try:
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    result = await client.call_tool("whoami", {})
            except Exception as exc:  # the server did not start, or broke off: say how
                problem = _why(exc)
        if scope.cancelled_caught:
            problem = f"did not answer whoami within {timeout_s:.0f} s"
        if problem is not None:
            return Reached(failed=problem + _stderr_tail(errlog))
    return _read_whoami(result)


def _why(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}".strip()


def _stderr_tail(errlog: Any) -> str:
    errlog.seek(0)
    text = " ".join(errlog.read().split())
    return f" (its stderr: {text[-STDERR_CHARS:]})" if text else ""


def _read_whoami(result: Any) -> Reached:
    content = getattr(result, "structured_content", None)
    if getattr(result, "is_error", False) or not isinstance(content, dict):
        return Reached(failed="its whoami tool answered no result")
    if "board_id" not in content:
        return Reached(
            socket=content.get("socket"),
            failed="its coord is older than board ids (upgrade it, then run coord setup again)",
        )
    return Reached(content["board_id"], content.get("socket"), content.get("board_unreached"))
