"""Which code a process runs: a build id named for the files of its packages.

`pip install` of a newer coordd replaces the files while a daemon, a quick server
or a shared MCP server keeps running what it loaded. Each names the code it loaded
by this id, taken at its start, and anyone can take it again from the files now:
two ids that differ mean the process runs other code than the one installed.

The id covers each package's `.py` files by path, size and modification time (a
stat each, no reading), so an upgrade that keeps the version number is still
seen; reinstalling the same files also changes it, which costs a needless restart
at worst. An installed package (under `site-packages`) is covered by its directories'
modification times instead: an installer never rewrites a file where it stands (it
takes the old files away, then writes new ones), and either changes the directory, so
a directory's stat says what its files' would, for a tenth of the stats (the quick
relay takes this id on every hook). Standard library only: the relay's import time is
what a tab waits for.
"""

from __future__ import annotations

import os
import zlib

#: The daemon's code: its package and the wire it speaks (the wheel installs both).
DAEMON_PACKAGES = ("coordd", "coordd_wire")


def files_id(package_dirs: tuple[str, ...], *extra: str) -> str:
    """16 hex digits naming the `.py` files under `package_dirs` (and `extra` words)."""
    parts = [*package_dirs, *extra]
    for root, dirs, files in (walked for d in package_dirs for walked in os.walk(d)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        if _installed(root):
            try:
                parts.append(f"{root}:{os.stat(root).st_mtime_ns}")
            except OSError:
                pass
            continue
        for name in sorted(files):
            if name.endswith(".py"):
                try:
                    found = os.stat(os.path.join(root, name))
                except OSError:
                    continue
                parts.append(f"{root}/{name}:{found.st_size}:{found.st_mtime_ns}")
    text = "\0".join(parts).encode(errors="surrogateescape")
    # Two CRC-32s with different seeds: a name, not a defence.
    return f"{zlib.crc32(text):08x}{zlib.crc32(text, 0x5BD1E995):08x}"


def _installed(directory: str) -> bool:
    """Whether `directory` is an installer's (its files are only ever replaced whole)."""
    return (
        f"{os.sep}site-packages{os.sep}" in directory
        or f"{os.sep}dist-packages{os.sep}" in directory
    )


def package_dirs(names: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where each package of `names` is installed (without importing it), or None if
    one is not installed here."""
    from importlib.util import find_spec  # only here: the relay imports this module

    found = []
    for name in names:
        spec = find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return None
        found.append(os.path.abspath(next(iter(spec.submodule_search_locations))))
    return tuple(found)


def daemon_build() -> str | None:
    """The build id of the daemon's code installed here now (None: no daemon here)."""
    dirs = package_dirs(DAEMON_PACKAGES)
    return None if dirs is None else files_id(dirs)
