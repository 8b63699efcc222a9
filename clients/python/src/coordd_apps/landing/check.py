"""Run a landing's check in a process group of its own that dies with the lander.

The check (`make test`) runs in the throwaway worktree, which the next lander
may remove once this one is gone. So nothing of the check may outlive its
lander, whatever way the lander ends:

- The check runs in a process group of its own, led by a small watchdog
  process that reads a pipe only the lander holds the write end
  of. When the lander closes it (the check ended, the landing was fenced
  out) or dies (`kill -9` closes it too), the watchdog kills the whole
  group: the shell, `make`, and whatever they left running in the
  background. (A group, not a new session: a process joins only a group of
  its own session. The check's stdin is /dev/null: a background group that
  read the terminal would stop.)
- While the check runs the lander polls `stop`: an event the heartbeat
  thread sets when the landing is fenced out (`renewer.py`), which ends the
  check at once with the renewer's reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

#: The watchdog: lead the group, wait for the lander's pipe to close, kill the group.
_WATCHDOG = (
    "import os, signal\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "while os.read(0, 512):\n"
    "    pass\n"
    "os.killpg(0, signal.SIGKILL)\n"
)
#: Seconds between looks at `stop` while the check runs.
_POLL_S = 0.2


class CheckFailed(Exception):
    """The check exited non-zero; the message says how, with the end of its output."""


class CheckStopped(Exception):
    """The check was killed before it ended, because the landing was fenced out."""


def run_check(
    place: Path,
    command: str,
    *,
    env: dict[str, str],
    stop: threading.Event,
    why_stopped: Callable[[], str],
    keep_chars: int,
) -> None:
    """Run `command` in `place`; return if it passed, else raise `CheckFailed` or `CheckStopped`."""
    read_end, write_end = os.pipe()  # not inheritable: only this process holds write_end
    with tempfile.TemporaryFile() as output:
        try:
            watchdog = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG], stdin=read_end,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, process_group=0,
            )  # fmt: skip
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        try:
            check = subprocess.Popen(
                command, shell=True, cwd=place, env=env, process_group=watchdog.pid,
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            )  # fmt: skip
            code = _wait(check, stop)
        finally:
            os.close(write_end)  # the watchdog kills what is left of the group, then itself
            watchdog.wait()
        if code is None:
            raise CheckStopped(f"check stopped: {why_stopped()}")
        if code != 0:
            raise CheckFailed(f"check failed (exit {code}): {command}\n{_tail(output, keep_chars)}")


def _wait(check: subprocess.Popen[bytes], stop: threading.Event) -> int | None:
    """The check's exit status, or None if `stop` was set first (the check is then killed)."""
    while True:
        try:
            return check.wait(timeout=_POLL_S)
        except subprocess.TimeoutExpired:
            if stop.is_set():
                _kill_group(check)
                return None


def _kill_group(check: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(os.getpgid(check.pid), signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    check.wait()


def _tail(output: IO[bytes], keep_chars: int) -> str:
    """The last `keep_chars` characters the check wrote (stdout and stderr, interleaved)."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(size - 4 * keep_chars, 0))
    text: str = output.read().decode(errors="replace")
    return text[-keep_chars:]
