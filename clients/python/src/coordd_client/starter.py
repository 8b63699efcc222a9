"""The go-between that starts a daemon for a client, so the daemon is never its child.

Run as its own small process (`python -I -S starter.py LOG_FD COMMAND...`; the
standard library only): it starts COMMAND in a session of its own, stdin from
/dev/null and stdout/stderr on LOG_FD, prints `pid N`, and then waits for one of
two things: the daemon ends (it reaps it and prints `exit N`, the daemon's exit
code, negative for a signal), or its own stdin reaches its end (the client is
done waiting). Either way it exits at once. From then on the daemon has no parent
but init, which reaps it when it ends.

A daemon started as a client's own child would stay a zombie once it ended, for
as long as that client lived: the quick server's workers and the MCP server live
for hours, and a zombie's pid looks alive (`kill(pid, 0)` succeeds).
"""

from __future__ import annotations

import os
import select
import signal
import sys


def main(argv: list[str]) -> int:
    log = int(argv[0])
    command = argv[1:]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes the select
    pid = os.posix_spawnp(
        command[0],
        command,
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log, 1),
            (os.POSIX_SPAWN_DUP2, log, 2),
            (os.POSIX_SPAWN_CLOSE, log),
        ],
        setsid=True,
        # What Python ignores, the daemon starts with the system's defaults for.
        setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
    )
    _say(f"pid {pid}")
    while True:
        ready, _, _ = select.select([sys.stdin.fileno(), wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 512)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                _say(f"exit {os.waitstatus_to_exitcode(status)}")
                return 0
        if sys.stdin.fileno() in ready and not os.read(sys.stdin.fileno(), 512):
            return 0


def _say(line: str) -> None:
    """One line to the client (gone already: nobody to tell)."""
    try:
        os.write(sys.stdout.fileno(), f"{line}\n".encode())
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
