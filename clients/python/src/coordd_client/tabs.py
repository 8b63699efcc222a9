"""The tab registry: one agent name per host process, whichever surface asks.

A Claude Code or Codex tab is one host process; its MCP server, its hooks
(run through `sh -c`) and the commands of its shell tool are all its
descendants. The hosts do not give every surface the same session id:
Codex starts MCP servers without `CODEX_THREAD_ID`, and after `/clear` a
Claude Code MCP server keeps the id it was spawned with while hooks and
the shell get a new one. So the tab's first session-start hook records the
name it derived under the host process's identity (pid and start time, so
a reused pid is another tab), and every surface looks for the nearest
ancestor that has such a record. The first name stays for the tab's life:
`/clear`, `/resume` and compaction keep it; a new process is a new tab.

Records are small files in the user's state directory as `HOME` places it
(`~/.local/state/coordd/tabs`; `$XDG_STATE_HOME` is not used here, because
Codex starts MCP servers with `HOME`, `PATH`, `LANG` and `TERM` only, and a
tab's hooks and its MCP server must find the same directory), written
atomically; a record whose process is gone, or whose pid
now belongs to a process started at another time, is ignored and pruned, and
its agent is reported ended to the board first (`ended`, `hooks/session.py`).
The daemon is not involved: a lookup costs a few `/proc` reads and one
file read, no round trip, so it can sit in front of every hook.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import msgspec

from coordd_wire.rendezvous import home_state_dir

#: Programs that only wrap a command: a host's hook runs as `sh -c "coord hook ..."`.
WRAPPERS = frozenset(
    {"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "nice", "nohup", "stdbuf"}
)
#: How far up the process tree a lookup climbs (a host is a few levels up at most).
MAX_DEPTH = 24
#: Claude Code names its own pid for hooks and its shell tool (not for MCP servers).
CLAUDE_PID_ENV = "CLAUDE_PID"


class Process(msgspec.Struct, frozen=True):
    pid: int
    parent: int
    name: str
    started: str

    @property
    def key(self) -> str:
        return f"{self.pid}-{re.sub(r'[^0-9A-Za-z]+', '_', self.started)}"


class Tab(msgspec.Struct, frozen=True):
    """A registered tab: the name its surfaces share, and what it was derived from."""

    agent: str
    host: str
    session: str
    process: int
    #: The board its first session-start reached (docs/PROTOCOL-1.2.md section 1b): every
    #: surface of the tab checks it reaches that board (`boards.py`); None until known.
    board: str | None = None


def process(pid: int) -> Process | None:
    """A process's parent, short name and start time; None if it is gone."""
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                raw = stat.read().decode(errors="replace")
        except OSError:
            return None
        # comm may hold spaces and parentheses: split at the last ')'.
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        return Process(pid, int(fields[1]), name, fields[19])
    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=,lstart=,comm=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"(\d+)\s+(\w+\s+\w+\s+\d+\s+[\d:]+\s+\d+)\s+(.*)", out)
    if not match:
        return None
    return Process(pid, int(match.group(1)), os.path.basename(match.group(3)), match.group(2))


#: Whose process a call is about (issue 46): this one's, or, in a quick worker
#: (`coordd_apps.quick.worker`, forked from the warm server, so its own parent and
#: session are the server's), the caller's. The rules that read the process tree
#: (this registry's ancestors, identity rule 7's terminal session) ask here.
_caller: tuple[int, int] | None = None


def act_for(parent: int, session: int) -> None:
    """Make this process answer for a caller with this parent and session."""
    global _caller
    _caller = (parent, session)


def act_for_self() -> None:
    """Answer for this process again (a quick worker between two callers)."""
    global _caller
    _caller = None


def parent_pid() -> int:
    """The parent of the process this call is about."""
    return os.getppid() if _caller is None else _caller[0]


def session_id() -> int:
    """The session of the process this call is about."""
    return os.getsid(0) if _caller is None else _caller[1]


def alive(known: Process) -> bool:
    """Whether `known` still runs (the same pid, started at the same time)."""
    now = process(known.pid)
    return now is not None and now.key == known.key


def ancestors(start: int | None = None) -> Iterator[Process]:
    """The processes above `start` (default: this one), nearest first, init excluded."""
    pid = parent_pid() if start is None else start
    for _ in range(MAX_DEPTH):
        if pid <= 1:
            return
        found = process(pid)
        if found is None:
            return
        yield found
        pid = found.parent


def host_process(environ: Mapping[str, str] | None = None) -> Process | None:
    """The process of the host that runs this one: `$CLAUDE_PID` when it is an
    ancestor, else the nearest ancestor that is not a shell or a wrapper."""
    env = os.environ if environ is None else environ
    chain = list(ancestors())
    claimed = env.get(CLAUDE_PID_ENV, "")
    if claimed.isdigit():
        for candidate in chain:
            if candidate.pid == int(claimed):
                return candidate
    for candidate in chain:
        if candidate.name.lstrip("-") not in WRAPPERS:
            return candidate
    return None


def _directory(environ: Mapping[str, str] | None = None) -> Path:
    """HOME's, whatever else the host passed (see above); raises `OSError` with no home."""
    return home_state_dir() / "tabs"


def _path(owner: Process, environ: Mapping[str, str] | None = None) -> Path:
    return _directory(environ) / f"{owner.key}.json"


def _read(path: Path, owner: Process) -> Tab | None:
    try:
        record = json.loads(path.read_text())
        board = record.get("board")
        return Tab(
            str(record["agent"]),
            str(record["host"]),
            str(record["session"]),
            owner.pid,
            board if isinstance(board, str) else None,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write(path: Path, tab: Tab) -> None:
    record = {"agent": tab.agent, "host": tab.host, "session": tab.session}
    if tab.board is not None:
        record["board"] = tab.board
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(record))
    temporary.replace(path)


def find(environ: Mapping[str, str] | None = None, of: int | None = None) -> Tab | None:
    """The tab this process (or process `of`: the shared MCP server asks for a relay's)
    belongs to: the nearest ancestor with a record."""
    try:
        directory = _directory(environ)
    except OSError:  # no home at all: no tab can have been recorded
        return None
    if not directory.is_dir():
        return None
    start = None
    if of is not None:
        asker = process(of)
        if asker is None:
            return None
        start = asker.parent
    for candidate in ancestors(start):
        found = _read(directory / f"{candidate.key}.json", candidate)
        if found is not None:
            return found
    return None


def register(
    agent: str, host: str, session: str, environ: Mapping[str, str] | None = None
) -> Tab | None:
    """Record `agent` for this process's host, unless the tab has a name already.

    Returns the tab's name as it stands (the earlier one wins), or None when
    no host process can be told apart (then nothing is recorded).
    """

    def first_name(owner: Process, existing: Tab | None) -> Tab:
        return existing or Tab(agent, host, session, owner.pid)

    return _update(first_name, environ)


def bind_board(board_id: str, environ: Mapping[str, str] | None = None) -> Tab | None:
    """Record the board this process's tab works on, unless it has one already.

    Returns the tab as it stands (its first board wins), or None when this
    process belongs to no registered tab.
    """

    def first_board(owner: Process, existing: Tab | None) -> Tab | None:
        if existing is None or existing.board is not None:
            return existing
        return msgspec.structs.replace(existing, board=board_id)

    return _update(first_board, environ)


def _update(
    change: Callable[[Process, Tab | None], Tab | None], environ: Mapping[str, str] | None
) -> Tab | None:
    """This process's tab's record, changed by `change` (given the host process and the
    record as it stands) and written if it changed; None without a host process, or when
    the state directory cannot be written (no home: the hook goes on, unrecorded)."""
    owner = host_process(environ)
    if owner is None:
        return None
    try:
        path = _path(owner, environ)
        existing = _read(path, owner)
        tab = change(owner, existing)
        if tab is not None and tab != existing:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if existing is None:
                _prune(path.parent)
            _write(path, tab)
    except OSError:
        return None
    return tab


def record_path(tab: Tab) -> Path | None:
    """Where `tab`'s record is (to name it in a refusal), if its process still runs."""
    owner = process(tab.process)
    try:
        return None if owner is None else _path(owner)
    except OSError:
        return None


def forget(environ: Mapping[str, str] | None = None) -> None:
    """The tab ended (its session-end hook): drop its record."""
    owner = host_process(environ)
    if owner is not None:
        with contextlib.suppress(OSError):
            _path(owner, environ).unlink(missing_ok=True)


def _records(directory: Path) -> Iterator[tuple[Path, Tab | None, bool]]:
    """Each record: its path, the tab it names (None if unreadable), and whether its
    host process still runs (the same pid, started at the same time)."""
    for entry in directory.glob("*.json"):
        pid_text = entry.stem.split("-", 1)[0]
        running = process(int(pid_text)) if pid_text.isdigit() else None
        live = running is not None and running.key == entry.stem
        owner = running or Process(int(pid_text) if pid_text.isdigit() else 0, 0, "", "")
        yield entry, _read(entry, owner), live


def ended(environ: Mapping[str, str] | None = None) -> list[Tab]:
    """The tabs whose host process is gone, their records not pruned yet: the board
    should hear that their agents ended (`agent.end`), unless a running tab has the
    same name (a session resumed in a new process)."""
    try:
        directory = _directory(environ)
        records = list(_records(directory)) if directory.is_dir() else []
    except OSError:
        return []
    running = {tab.agent for _, tab, live in records if live and tab is not None}
    return [tab for _, tab, live in records if not live and tab and tab.agent not in running]


def _prune(directory: Path) -> None:
    """Drop records of processes that are gone (or whose pid was reused)."""
    for entry, _, live in _records(directory):
        if not live:
            with contextlib.suppress(OSError):
                entry.unlink()


def prune(environ: Mapping[str, str] | None = None) -> None:
    """Drop the records of tabs whose host process is gone (after `ended` was reported)."""
    with contextlib.suppress(OSError):
        directory = _directory(environ)
        if directory.is_dir():
            _prune(directory)
