"""A daemon whose disk syncs can be made to fail while it runs (libfiu's fiu-run, fiu-ctrl).

`fiu-run -x` starts the daemon with libfiu's POSIX wrappers preloaded and a
control fifo open; `fiu-ctrl` then turns the failure points of fsync and
fdatasync (SQLite syncs its WAL with fdatasync on Linux) on at a moment the
test chooses, failing them with EIO as a dying disk would. The tools come
from Debian's fiu-utils (scripts/ensure-fiu.sh). Without them the
disk-fault tests skip with the command that installs them, except under
`COORDD_REQUIRE_FIU=1` (set by .ci/run) or `CI=true`, where they fail:
CI never passes by skipping the disk-fault round.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import DaemonProcess

REQUIRE_ENV = "COORDD_REQUIRE_FIU"
INSTALL_HINT = "install it with `sudo apt-get install fiu-utils` (Debian/Ubuntu), then make test"
#: fsync and fdatasync, failing with EIO (libfiu's POSIX wrappers take failinfo as errno).
FAIL_SYNCS = f"enable name=posix/io/sync/*,failinfo={errno.EIO}"
HEAL_SYNCS = "disable name=posix/io/sync/*"


def require_fiu() -> None:
    """Skip without fiu-run and fiu-ctrl; fail instead where CI requires them."""
    missing = [tool for tool in ("fiu-run", "fiu-ctrl") if shutil.which(tool) is None]
    if not missing:
        return
    why = f"{' and '.join(missing)} not on PATH; {INSTALL_HINT}"
    if os.environ.get(REQUIRE_ENV) == "1" or os.environ.get("CI") == "true":
        pytest.fail(f"fiu-utils is required here ({REQUIRE_ENV}=1 or CI=true) but {why}")
    pytest.skip(f"fiu-utils is not installed: {why}")


class FaultyDaemon(DaemonProcess):
    """`coordd serve` under `fiu-run -x`: `fail_syncs()` makes every sync fail from then on."""

    def __init__(self, workdir: Path, *, args: tuple[str, ...] = ()) -> None:
        require_fiu()
        super().__init__(workdir, args=args)
        #: fiu-run opens `<prefix>-<pid>.in` and `.out`; kept in the test's directory.
        self.ctrl_prefix = workdir / "fiu"

    def command(self) -> list[str]:
        return ["fiu-run", "-x", "-f", str(self.ctrl_prefix), *super().command()]

    def fail_syncs(self) -> None:
        """Returns once the daemon's libfiu has the failure point on (fiu-ctrl waits)."""
        self._control(FAIL_SYNCS)

    def heal_syncs(self) -> None:
        self._control(HEAL_SYNCS)

    def _control(self, command: str) -> None:
        # fiu-run execs the daemon: its pid is the one fiu-run's fifos are named by.
        subprocess.run(
            ["fiu-ctrl", "-f", str(self.ctrl_prefix), "-c", command, str(self.pid)],
            check=True,
            timeout=30,
        )
