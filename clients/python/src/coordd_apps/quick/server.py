"""The quick server: the whole client loaded once, served to `coord` calls by warm workers.

Started in the background by a call that found none (`relay.start_server`), in a
session of its own, with its lock file held for its whole life (a second server
for the same place exits at once). It loads every module a quick command needs,
binds `quick-<stamp>.sock` (0600, in the user's private directory), and forks
workers that accept the calls on it (`worker.py`): each serves calls one after
another, so a call pays neither a fork nor the copying of the pages it touches,
which a child forked per call paid every time. The server keeps a spare: whenever
no worker is waiting for a call, it forks one (up to `MAX_WORKERS`; more calls
wait in the socket's backlog). Workers say on a pipe when they wait and when they
serve; the server reaps the ones that end.

It has no threads (a fork copies only the forking thread), and exits after
`IDLE_S` without a call, or within `CHECK_S` of its socket being removed or
replaced; its workers see it gone within `worker.CHECK_S` and end too, never in the
middle of a call. Code that changes (an upgrade, an edit of an editable install) is
another stamp, hence another server; the old one sees the files' stamp differ from
its own within `CHECK_S` and retires the same way.
"""

from __future__ import annotations

import fcntl
import gc
import os
import select
import signal
import socket
import time

from coordd_apps.mcp_relay.place import code_stamp
from coordd_apps.quick import worker

#: Seconds without a call before the server exits.
IDLE_S = 900.0
#: Seconds between looks at the socket (gone or replaced: the server exits).
CHECK_S = 5.0
#: Workers at most: calls beyond them wait for one (they are short; the cores are few).
MAX_WORKERS = max(4, min(16, 2 * (os.cpu_count() or 2)))
#: Workers in a row that may end before serving, before the server gives up (no loop
#: of forks when something breaks every worker at its start).
MAX_FAILED_STARTS = 8
#: A worker forked and not heard from yet (it counts as a spare).
STARTING = b"s"


def main(argv: list[str]) -> int:
    socket_path, lock_path = argv
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server holds this place
    # Not the directory of the call that started it: a worktree removed since would fail
    # every worker's way back to it between calls (and keep the directory in use).
    os.chdir("/")
    _preload()
    listener = _bind(socket_path)
    gc.freeze()  # what is loaded stays shared with every worker (no copy on a collection)
    bound = os.stat(socket_path)
    pool = _Pool(listener, lock)
    code = _Code(socket_path)
    last_call = time.monotonic()
    while (
        _still_ours(socket_path, bound)
        and time.monotonic() - last_call < IDLE_S
        and not pool.broken
        and code.current()
    ):
        if pool.serving(CHECK_S):
            last_call = time.monotonic()
    if _still_ours(socket_path, bound):
        os.unlink(socket_path)
    return 0


class _Pool:
    """The workers: which wait for a call and which serve one, and a spare kept."""

    def __init__(self, listener: socket.socket, lock: int) -> None:
        self.listener = listener
        self.lock = lock
        self.notify_r, self.notify_w = os.pipe()
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes the select
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        #: pid -> what it last said (`worker.IDLE`, `worker.BUSY`), or STARTING.
        self.state: dict[int, bytes] = {}
        #: Workers in a row that ended before they ever waited for a call.
        self.failed_starts = 0

    @property
    def broken(self) -> bool:
        """Workers cannot start (the server then ends; calls run in their own process)."""
        return self.failed_starts >= MAX_FAILED_STARTS

    def serving(self, timeout_s: float) -> bool:
        """Keep a spare, wait for news up to `timeout_s`; whether a call was taken."""
        spare = any(said != worker.BUSY for said in self.state.values())
        if not spare and len(self.state) < MAX_WORKERS:
            self._fork()
        ready, _, _ = select.select([self.notify_r, self.wake_r], [], [], timeout_s)
        took = False
        if self.notify_r in ready:
            news = os.read(self.notify_r, 5 * 256)  # whole records: writes of 5 are atomic
            for at in range(0, len(news) - len(news) % 5, 5):
                pid = int.from_bytes(news[at + 1 : at + 5], "little")
                if pid in self.state:
                    self.state[pid] = news[at : at + 1]
                    took = took or self.state[pid] == worker.BUSY
                    self.failed_starts = 0
        if self.wake_r in ready:
            os.read(self.wake_r, 4096)
        self._reap()
        return took

    def _fork(self) -> None:
        keeper = not self.state  # the first never idles out: a lone call finds it warm
        pid = os.fork()
        if pid == 0:
            for fd in (self.lock, self.notify_r, self.wake_r):
                os.close(fd)
            worker.work(self.listener, self.notify_w, os.getppid(), keeper)
        self.state[pid] = STARTING

    def _reap(self) -> None:
        while self.state:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.state.pop(pid, None) == STARTING:
                self.failed_starts += 1


def _preload() -> None:
    """Every module a quick command may run, so a worker imports nothing on a call: all of
    the CLI's and the hooks' modules, and what they import only inside a function."""
    import importlib
    import pkgutil

    from coordd_apps import cli, hooks

    for package in (cli, hooks):
        for found in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            if not found.name.endswith(".__main__"):
                importlib.import_module(found.name)
    for name in LAZY_IMPORTS:
        importlib.import_module(name)
    cli.load_groups()
    from coordd_apps.cli.registry import build_parser

    build_parser(cli.WORKFLOW)


#: Modules the quick commands import inside a function (not needed by every call).
LAZY_IMPORTS = (
    "coordd_apps.wording.advice",
    "coordd_apps.cost_report",
    "coordd_apps.export",
    "coordd_client.human",
    "coordd_client.methods_usage",
    "coordd_apps.prices",
    "coordd_wire.wire_edits",
    "coordd_wire.wire_messages",
    "coordd_wire.wire_usage",
    "coordd_apps.wording.render",
    "coordd_apps.setup.auto_reserve",
    "coordd_apps.summary",
)


class _Code:
    """Whether the code installed now is still the code this server loaded: its socket is
    named for the code's stamp (`quick-<stamp>.sock`), taken again at most every
    `CHECK_S` (a stat of each file). After an upgrade the next call goes to a new
    server under the new stamp; this one retires rather than idling for `IDLE_S`."""

    def __init__(self, socket_path: str) -> None:
        self.loaded = os.path.basename(socket_path).removesuffix(".sock").rpartition("-")[2]
        self.home = os.environ.get("HOME") or os.path.expanduser("~")
        self.looked = time.monotonic()

    def current(self) -> bool:
        if time.monotonic() - self.looked < CHECK_S:
            return True
        self.looked = time.monotonic()
        return code_stamp(self.home) == self.loaded


def _bind(path: str) -> socket.socket:
    if os.path.exists(path):
        os.unlink(path)  # only a server holding the lock gets here: it was a dead one's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(128)
    return listener


def _still_ours(path: str, bound: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (bound.st_dev, bound.st_ino)


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
