"""docs/PROTOCOL.md's generated reference is what the code declares now.

Run as its own process, as `make protocol-doc` runs it: a method, a param, a bound, a
result member, a feature flag or an error kind changed in the code only fails here
until the document is regenerated, so the wire contract a clone carries never
describes a daemon that no longer exists.
"""

from __future__ import annotations

import subprocess
import sys

from parity import ROOT

SCRIPT = ROOT / "scripts" / "protocol_reference.py"


def test_the_generated_protocol_reference_is_fresh() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
