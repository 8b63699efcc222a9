"""Run many real OS processes against one daemon, released at the same instant."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: The worker scripts the system tests run as separate OS processes.
WORKERS = Path(__file__).parent / "workers"


def race(
    script: str, socket_path: Path, per_process_args: list[list[str]], timeout_s: float = 120
) -> list[Any]:
    """Start one process per arg list, wait for all to print "ready", release, collect JSON."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS / script), str(socket_path), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for args in per_process_args
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "ready", f"process did not get ready: {line!r}"
        for proc in procs:  # the barrier: everyone is connected; go
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = []
        for proc in procs:
            out, _ = proc.communicate(timeout=timeout_s)
            assert proc.returncode == 0
            outputs.append(json.loads(out))
        return outputs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
