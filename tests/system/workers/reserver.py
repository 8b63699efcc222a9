"""A separate OS process asking for one set of reservations, released by a stdin barrier.

    python reserver.py SOCKET AGENT PROJECT PATTERN...

Prints one JSON line: {"agent", "won", "patterns" (granted), "in_the_way" (refusal's count)}.
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client, Reserved


def main() -> None:
    socket_path, agent, project, patterns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with Client(socket_path, agent=agent, project=project) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        try:
            granted = client.reserve(patterns).reservations
        except Reserved as exc:
            result = {
                "agent": agent,
                "won": False,
                "patterns": [],
                "in_the_way": len(exc.conflicts),
            }
        else:
            result = {
                "agent": agent,
                "won": True,
                "patterns": [r.pattern for r in granted],
                "in_the_way": 0,
            }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
