"""What every doctor check returns, and how it runs a host's command.

Each check returns `Finding`s: what was looked at, whether it is in order, and
when it is not, the command that fixes it. Nothing in the doctor writes anything
or starts a daemon, and every host call has a timeout: a host that hangs is a
finding ("did not answer within N s"), never a hung doctor. `run_host` is where
that timeout lives, so each host's module shares it rather than repeating it.
"""

from __future__ import annotations

import subprocess
import time
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


class HostSlow(HostFailed):
    """A host command that was still running when its time was up (and was killed)."""


class HostCall:
    """A host's command started now and read later, so that it runs while the doctor's
    other checks do (`claude mcp list` alone can take 20 s waiting on the network).

    `result(timeout_s)` waits at most that long more; past it the command is killed
    and the answer is `HostFailed`, as with `run_host`.
    """

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.argv = argv
        self.started = time.monotonic()
        self.failed: HostFailed | None = None
        self.process: subprocess.Popen[str] | None = None
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            self.failed = HostFailed(f"`{argv[0]}` could not run: {exc}")

    def result(self, timeout_s: float) -> subprocess.CompletedProcess[str]:
        if self.process is None:
            assert self.failed is not None
            raise self.failed
        try:
            out, err = self.process.communicate(timeout=max(timeout_s, 0.0))
        except subprocess.TimeoutExpired as exc:
            self.process.kill()
            self.process.communicate()
            waited = time.monotonic() - self.started
            raise HostSlow(
                f"`{' '.join(self.argv[-3:])}` did not answer within {waited:.0f} s"
            ) from exc
        return subprocess.CompletedProcess(self.argv, self.process.returncode, out, err)


def host_version(binary: str, cwd: Path) -> str | None:
    try:
        done = run_host([binary, "--version"], cwd, VERSION_TIMEOUT_S)
    except HostFailed:
        return None
    words = done.stdout.split()
    return next((w for w in words if w[:1].isdigit()), None)
