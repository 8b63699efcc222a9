"""A separate OS process taking a slot or a port lease, released by a stdin barrier.

    python slotter.py SOCKET AGENT PROJECT slot NAME CAPACITY
    python slotter.py SOCKET AGENT PROJECT port LOW HIGH

Prints one JSON line. `slot`: waits for a unit (up to 120 s), looks at how many
hold it, releases it: {"agent", "fence", "holders_seen"}. `port`: leases one and
keeps it: {"agent", "port"} (or {"agent", "port": null} when the range is full).
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client
from coordd_wire.errors import Conflict


def main() -> None:
    socket_path, agent, project, mode = sys.argv[1:5]
    with Client(socket_path, agent=agent, project=project, timeout_s=180) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        if mode == "slot":
            name, capacity = sys.argv[5], int(sys.argv[6])
            lease = client.acquire_slot(name, capacity=capacity, wait_s=120).lease
            seen = len(client.slots(name=name).leases)
            client.release_slots([name])
            result: dict[str, object] = {"agent": agent, "fence": lease.fence, "holders_seen": seen}
        else:
            low, high = int(sys.argv[5]), int(sys.argv[6])
            try:
                port = client.lease_port(f"web-{agent}", low=low, high=high).lease.port
            except Conflict:
                port = None
            result = {"agent": agent, "port": port}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
