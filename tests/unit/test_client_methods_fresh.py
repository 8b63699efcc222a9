"""The Python clients' generated methods (`coordd_client/rpc_methods.py`) are the builders
there are now.

Run as its own process, as `make client-methods` runs it: a builder added, renamed or
removed only fails here until the file is regenerated, so `Client` and `AsyncClient`
never offer a method the builders lack, or lack one they have.
"""

from __future__ import annotations

import subprocess
import sys

from parity import ROOT

SCRIPT = ROOT / "scripts" / "client_methods.py"


def test_the_generated_client_methods_are_fresh() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
