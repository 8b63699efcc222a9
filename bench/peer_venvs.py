"""The agent-tool peers of `make bench-peers` (issue 46), each in a venv of its own.

    python -m bench.peer_venvs [NAME ...]

Each peer is installed from PyPI at a pinned version into `bench/.peers/NAME`
(gitignored), by this script only (bench/install-peers.sh runs it), so a new
release cannot move the figures in silence and the peers' dependencies never
meet the project's. A peer whose install fails is reported by the bench with
the reason (the last lines of pip's output, kept in `bench/.peers/NAME.log`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: name -> the pinned requirement.
PINS: dict[str, str] = {
    "coordinationhub": "coordinationhub==0.8.0",
    "coord-server": "coord-server==0.13.1",
    "coord-mcp-server": "coord-mcp-server==0.49.0",
    "mcp-agent-mail": "mcp-agent-mail==0.1.0",
}
HOME = Path(__file__).resolve().parent / ".peers"


def venv(name: str) -> Path:
    return HOME / name


def python(name: str) -> Path:
    return venv(name) / "bin" / "python"


def installed(name: str) -> bool:
    """True once the pinned requirement is in the peer's venv (the marker is written last)."""
    return (
        (venv(name) / "installed").read_text().strip() == PINS[name]
        if (venv(name) / "installed").exists()
        else False
    )


def install(name: str) -> str | None:
    """Install the peer if it is not; None on success, else why it failed."""
    if installed(name):
        return None
    HOME.mkdir(exist_ok=True)
    log = HOME / f"{name}.log"
    with open(log, "w") as out:
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv(name))],
            [str(python(name)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             PINS[name]],
        ]  # fmt: skip
        for step in steps:
            if (
                subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
                != 0
            ):
                tail = log.read_text().strip().splitlines()[-3:]
                return f"`pip install {PINS[name]}` failed: {' / '.join(tail)}"
    (venv(name) / "installed").write_text(PINS[name] + "\n")
    return None


def main(argv: list[str] | None = None) -> int:
    names = (sys.argv[1:] if argv is None else argv) or list(PINS)
    failed = 0
    for name in names:
        why = install(name)
        print(f"{PINS[name]}: {'installed' if why is None else why}", file=sys.stderr)
        failed += why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
