"""The TypeScript client's generated `src/wire.ts` is what the Python declarations say now.

Run as its own process, as `make ts-wire` runs it: a method, a task key, an error kind
or a bound changed on the Python side only fails here until wire.ts is regenerated
(and the TS compiler then checks the client against it).
"""

from __future__ import annotations

import subprocess
import sys

from parity import ROOT

SCRIPT = ROOT / "scripts" / "ts_wire.py"


def test_the_generated_typescript_wire_module_is_fresh() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
