"""The leanest floor: `bench/floor.py`'s bare server, its UPDATE returning nothing.

    python -m bench.floor_lean SOCKET DB TASKS

The bare floor's claim answers with the whole task (`RETURNING` its JSON), as coordd's
does. This one runs the same conditional UPDATE without `RETURNING` and answers only
whether it won (`{"won": true}`, from the statement's row count): the least a server
of this design can do per claim. Its clients decode only `won` (`bench.worker`'s
`claim-won` mode), so they do less than coordd's do too. Everything else is the bare
floor's: the accept loop, framing, frames handled inline, one writer thread, group
commit, the same table. `make bench` runs it in the floor's alternated rounds; the
daemon never imports it.
"""

from __future__ import annotations

import sys
from typing import Any

import trio

from bench import floor

CLAIM = floor.CLAIM[: floor.CLAIM.index(" RETURNING ")]
WON, LOST = b'{"won":true}', b'{"won":false}'


class LeanWriter(floor.Writer):
    """The bare floor's writer: the UPDATE alone, its row count the whole answer."""

    def claim(self, batch: list[floor.Claim]) -> list[tuple[floor.Replies, Any, bytes]]:
        results = []
        for claim in batch:
            won = self.conn.execute(CLAIM, (claim.agent, claim.task_id)).rowcount
            results.append((claim.out, claim.request_id, WON if won else LOST))
        return results


if __name__ == "__main__":
    floor.prepare(sys.argv[2], int(sys.argv[3]))
    trio.run(floor.main, sys.argv[1], sys.argv[2], LeanWriter)
