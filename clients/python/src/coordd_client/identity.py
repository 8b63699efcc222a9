"""The default agent identity for `coord`: stable within one agent session, distinct across tabs.

How the agents run shell commands (checked against their public issue trackers):

- Claude Code runs every Bash command in a fresh shell, a child of the long-lived
  `claude` process of that session, and sets `CLAUDECODE=1`; it exposes no session
  id to commands.
- Codex injects `CODEX_THREAD_ID` into the environment of the commands it runs.
- Cursor runs agent commands in shells under its own long-lived process; it
  documents no session variable.

So, in order: `$COORD_AGENT`; `codex-<thread>` from `CODEX_THREAD_ID`; otherwise
the nearest ancestor process that is not a shell or a wrapper (the agent itself),
named `<program>-<pid>-<start>`: the pid makes tabs distinct, and a short hash
of the process start time makes sure a reused pid never inherits a dead tab's
claims. A person typing in a terminal gets their tab's shell instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

AGENT_ENV = "COORD_AGENT"

# Programs that sit between an agent and `coord` and say nothing about who is calling.
_SHELLS = {"sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "pwsh"}
_WRAPPERS = {"env", "timeout", "nohup", "sudo", "doas", "xargs", "nice", "stdbuf", "time",
             "coord", "uv", "uvx", "npx", "script", "direnv", "flock", "setsid"}  # fmt: skip
_KNOWN_AGENTS = {"claude": "claude", "cursor": "cursor", "cursor-agent": "cursor", "codex": "codex"}
_MAX_DEPTH = 32


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    name: str
    start: str


def _read_process(pid: int) -> ProcessInfo | None:
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                raw = stat.read().decode(errors="replace")
        except OSError:
            return None
        # comm may contain spaces and parentheses: split at the last ')'.
        name = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        return ProcessInfo(pid, int(fields[1]), name, fields[19])
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
    return ProcessInfo(pid, int(match.group(1)), os.path.basename(match.group(3)), match.group(2))


def _ancestors(start_pid: int) -> list[ProcessInfo]:
    chain = []
    pid = start_pid
    for _ in range(_MAX_DEPTH):
        info = _read_process(pid)
        if info is None or info.pid <= 1:
            break
        chain.append(info)
        pid = info.ppid
    return chain


def _program(name: str) -> str:
    base = name.lower()
    if base.startswith("python"):
        return "python"
    return _KNOWN_AGENTS.get(base, re.sub(r"[^a-z0-9_.-]+", "-", base).strip("-") or "proc")


def _label(info: ProcessInfo, program: str) -> str:
    digest = hashlib.sha1(f"{info.pid}:{info.start}".encode()).hexdigest()[:4]
    return f"{program}-{info.pid}-{digest}"


def default_agent(environ: Mapping[str, str] | None = None, start_pid: int | None = None) -> str:
    env = os.environ if environ is None else environ
    if env.get(AGENT_ENV):
        return env[AGENT_ENV]
    if env.get("CODEX_THREAD_ID"):
        return f"codex-{env['CODEX_THREAD_ID'][:12]}"
    chain = _ancestors(os.getppid() if start_pid is None else start_pid)
    driven_by_agent = bool(
        env.get("CLAUDECODE") or env.get("CURSOR_AGENT") or env.get("CODEX_SANDBOX")
    )
    for info in chain:
        base = info.name.lower()
        if base in _WRAPPERS:
            continue
        if base in _SHELLS:
            if driven_by_agent:
                continue  # a fresh shell per command: look further up, to the agent
            return _label(info, f"{env.get('USER', 'user')}-{base}")
        return _label(info, _program(info.name))
    return f"{env.get('USER', 'user')}-{os.getppid()}"
