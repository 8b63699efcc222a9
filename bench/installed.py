"""`coord` as a user has it: a wheel of a tree, installed into a fresh venv, set up for hosts.

A user installs coordd with `python3 -m venv` and that venv's own pip (README, "Install it
for use"): a normal, non-editable install, whose console scripts are written by whichever
pip the venv came with, and whose bare interpreter start is not an editable install's
(whose path hooks cost every start about 10%). `coord setup` then registers command lines
with each host, which the host runs through a shell. So the bench does the same:

- `install(root)`: a wheel of the tree at `root` (`pip wheel`, no build isolation: the
  dev venv has hatchling), installed with its extras into a venv made by the interpreter
  this venv was made from, with the pip that venv brings (never upgraded: that is what a
  user gets). Kept under the temporary directory, named for a hash of the files the wheel
  is made of, so a second run of an unchanged tree reuses it (a venv takes a minute).
- `registrations(venv, home)`: `coord setup claude`, `coord setup codex` and `coord setup
  git` in a home and repository of the bench's own, and the command lines they wrote.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: What the wheel is made of (relative to a tree's root): a change in any is another install.
BUILT_FROM = ("pyproject.toml", "constraints.txt", "src/coordd", "clients/python")
#: The extras the README installs.
EXTRAS = "mcp,tui,web"
#: The file that says an install finished (a run stopped half-way is built again).
DONE = ".installed"


def tree_hash(root: Path) -> str:
    """16 hex digits naming the files a wheel of `root` is built from."""
    digest = hashlib.sha256()
    for part in BUILT_FROM:
        top = root / part
        paths = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in paths:
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            if "node_modules" in path.parts:
                continue
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def base_python() -> str:
    """The interpreter this venv was made from: the `python3` a user runs `-m venv` with."""
    return getattr(sys, "_base_executable", None) or sys.executable


def install(root: Path, cache: Path | None = None) -> Path:
    """A venv with the tree at `root` installed as a user installs it; its directory."""
    cache = cache or Path(tempfile.gettempdir()) / "coordd-bench-installs"
    venv = cache / f"venv-{tree_hash(root)}"
    if (venv / DONE).exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.parent) as wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "-q", "-w", wheels, str(root)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        (wheel,) = Path(wheels).glob("coordd-*.whl")
        subprocess.run([base_python(), "-m", "venv", str(venv)], check=True, timeout=600)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
             f"{wheel}[{EXTRAS}]", "-c", str(root / "constraints.txt")],
            check=True, capture_output=True, timeout=1200,
        )  # fmt: skip
    (venv / DONE).touch()
    return venv


def registrations(venv: Path, home: Path, repo: Path) -> dict[str, str]:
    """`coord setup claude`, `codex` and `git` run as a user runs them (in `home`, in the
    git repository `repo`): `HOST EVENT` -> the command line the host runs (`git
    pre-commit`: the hook file git runs, moved into `home`)."""
    coord = str(venv / "bin" / "coord")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "CLAUDE", "CODEX"))}
    env |= {"HOME": str(home), "COORD_NO_AUTOSTART": "1"}
    for host in ("claude", "codex", "git"):
        subprocess.run(
            [coord, "setup", host], env=env, cwd=repo, check=True, capture_output=True, timeout=120
        )
    found: dict[str, str] = {}
    for host, settings in (
        ("claude", home / ".claude" / "settings.json"),
        ("codex", home / ".codex" / "hooks.json"),
    ):
        for groups in json.loads(settings.read_text())["hooks"].values():
            for group in groups:
                for hook in group["hooks"]:
                    words = hook["command"].split()
                    found[f"{host} {words[words.index('hook') + 1]}"] = hook["command"]
    hooks_dir = subprocess.run(
        ["git", "rev-parse", "--git-path", "hooks"], cwd=repo, capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    # Each install's git hook kept in its home: another install's setup would chain it.
    written = repo / hooks_dir / "pre-commit"
    kept = home / "pre-commit"
    written.rename(kept)
    found["git pre-commit"] = shlex.quote(str(kept))
    return found
