"""Optional peers for `make bench-peers`: Redis and PostgreSQL on this machine, durable.

Each peer is a real server from the distribution's packages, started in the
benchmark's scratch directory on a Unix socket, configured to acknowledge a
write only after it is on disk (Redis `appendfsync always`, PostgreSQL
`synchronous_commit=on` with `fsync=on`). Both group-commit concurrent
writers the way coordd does, so the comparison is like for like. A peer whose
server binary or Python client is missing is skipped with a reason, never a
failure. The PostgreSQL cluster is the suite's own (tests/servers.py).
"""

from __future__ import annotations

from pathlib import Path

from servers import PostgresPeer, launch, require_package, wait_for, which


class RedisPeer:
    """redis-server with an append-only file fsynced before every reply."""

    name = "redis"
    settings = "appendonly yes, appendfsync always, no RDB snapshots"

    def __init__(self, workdir: Path) -> None:
        require_package("redis")
        binary = which("redis-server")
        self.directory = workdir / "redis"
        self.directory.mkdir()
        self.address = str(self.directory / "redis.sock")
        self.proc = launch(
            [
                binary,
                "--port", "0",
                "--unixsocket", self.address,
                "--unixsocketperm", "700",
                "--dir", str(self.directory),
                "--appendonly", "yes",
                "--appendfsync", "always",
                "--save", "",
            ],
            self.directory / "redis.log",
        )  # fmt: skip
        wait_for(Path(self.address), self.proc, "redis-server")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


Peer = RedisPeer | PostgresPeer
PEERS: list[type[RedisPeer] | type[PostgresPeer]] = [RedisPeer, PostgresPeer]
