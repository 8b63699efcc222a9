"""Every generated file is what the code declares now.

Each generator runs as its own process, as `make generate` runs it, with `--check`:
a method, a param, a bound, a result member, a feature flag, an error kind or a
builder changed in the code only fails here until its files are regenerated and
committed, so neither a client nor the wire contract a clone carries describes a
daemon that no longer exists.

- scripts/ts_wire.py: the TS client's `src/wire.ts` (methods, states, event types,
  task keys, error kinds, bounds) and `src/wire_types.ts` (every params and result
  interface, the `Methods` map); the TS compiler then checks the client against them.
- scripts/client_methods.py: `coordd_client/rpc_methods.py`, every builder as a
  method of `Client` and `AsyncClient`.
- scripts/protocol_reference.py: docs/PROTOCOL.md's generated reference.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from parity import ROOT


@pytest.mark.parametrize("script", ["ts_wire.py", "client_methods.py", "protocol_reference.py"])
def test_the_generated_files_are_fresh(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
