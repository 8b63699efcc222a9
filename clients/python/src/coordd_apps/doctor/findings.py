"""What every doctor check returns, and how it runs a host's command.

Each check returns `Finding`s: what was looked at, whether it is in order, and
when it is not, the command that fixes it. Nothing in the doctor writes anything
or starts a daemon, and every host call has a timeout: a host that hangs is a
finding ("did not answer within N s"), never a hung doctor. `run_host` is where
that timeout lives, so each host's module shares it rather than repeating it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: `--version` of a host.
VERSION_TIMEOUT_S = 15.0


@dataclass
class Finding:
    """One thing looked at. `ok` False is a problem (exit 1); `fix` says what to run."""

    section: str
    what: str
    ok: bool
    detail: str
    fix: str | None = None
    skipped: bool = False
    #: Worth saying, not a problem (a host's warning about coord's files).
    note: bool = False
    data: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        status = (
            "skipped" if self.skipped else "note" if self.note else "ok" if self.ok else "missing"
        )
        return {
            "section": self.section,
            "check": self.what,
            "status": status,
            "detail": self.detail,
            "fix": self.fix,
            **self.data,
        }


class HostFailed(Exception):
    """A host command did not answer in time, or answered nothing usable."""


def run_host(argv: list[str], cwd: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run a host's command with stdin closed; a timeout kills it (and is `HostFailed`)."""
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HostFailed(
            f"`{' '.join(argv[-3:])}` did not answer within {timeout_s:.0f} s"
        ) from exc
    except OSError as exc:
        raise HostFailed(f"`{argv[0]}` could not run: {exc}") from exc


def host_version(binary: str, cwd: Path) -> str | None:
    try:
        done = run_host([binary, "--version"], cwd, VERSION_TIMEOUT_S)
    except HostFailed:
        return None
    words = done.stdout.split()
    return next((w for w in words if w[:1].isdigit()), None)
