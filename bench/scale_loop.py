"""The `claim_next` loop `make bench-scale` runs beside a write (bench/scale_surfaces.py):
claim the project's next task, complete it, post a replacement, until stdin closes.

    python -m bench.scale_loop SOCKET PROJECT

Prints `looping` once its first claim is made, and the number of claims when it stops.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from coordd_client import Client


def main(argv: list[str]) -> int:
    socket, project = Path(argv[0]), argv[1]
    stop = threading.Event()

    def until_closed() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=until_closed, daemon=True).start()
    claims = 0
    with Client(socket, agent="bench-looper", project=project) as client:
        while not stop.is_set():
            got = client.claim_next()
            if got.task is None:
                break
            claims += 1
            if claims == 1:
                print("looping", flush=True)
            client.complete(got.task.id, result="looped")
            client.post(f"bench loop replacement {claims}", priority=-5)
    if claims == 0:
        print("looping", flush=True)  # nothing to claim: say so with a count of 0
    print(claims, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
