"""Codex apply_patch headers: the paths a patch touches, and nothing else."""

from __future__ import annotations

from coordd_apps.hooks.patch import patch_paths


def test_every_header_kind_indented_or_not() -> None:
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: new.py",
            "+print('hi')",
            "  *** Update File: src/a.py",
            "\t*** Move to: src/b.py",
            "*** Delete File: old/gone.txt",
            "*** Update File: src/a.py",  # twice: once
            "*** End Patch",
        ]
    )
    assert patch_paths(patch) == ["new.py", "src/a.py", "src/b.py", "old/gone.txt"]


def test_lookalikes_inside_hunks_are_not_headers() -> None:
    patch = "\n".join(
        [
            "*** Update File: real.py",
            "@@ def f():",
            "-*** Update File: fake.py",
            "+ *** Add File: also-fake.py",
            " context *** Delete File: nope.py",
            "***Update File: no-space.py",
            "*** Update File:",  # no path
            "*** Update File: spaced name.py   ",
        ]
    )
    assert patch_paths(patch) == ["real.py", "spaced name.py"]


def test_garbage_yields_nothing() -> None:
    assert patch_paths("") == []
    assert patch_paths("\x00\x01 not a patch *** at all") == []
