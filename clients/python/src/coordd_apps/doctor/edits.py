"""The edit-protection check: the repository's switch (`.coord/config.json` at the main
worktree's top, `hooks.files.CONFIG_FILE`) as the edit hooks read it.

A file the hooks cannot use as written is passed over there, silently, because a hook
must never fail on the repository's file; this is where the user hears of it.
"""

from __future__ import annotations

from pathlib import Path

from coordd_apps.doctor.findings import Finding
from coordd_apps.hooks.files import CONFIG_FILE, read_config


def check_edit_config(project: Path) -> list[Finding]:
    path = project / CONFIG_FILE
    config, problem = read_config(str(project))
    mode = (
        "a first edit reserves the file"
        if config.auto_reserve
        else "advisory: edits reserve nothing (others' reservations and stale writes still refused)"
    )
    # What a guard does when it cannot ask the board (`hooks.guard.unreachable_policy`).
    mode += (
        "; with no board to ask, edits and commits are refused"
        if config.unreachable == "deny"
        else "; with no board to ask, edits and commits go ahead unchecked, saying so"
    )
    data = {
        "file": str(path),
        "auto_reserve": config.auto_reserve,
        "ttl_s": config.ttl_s,
        "unreachable": config.unreachable,
    }
    if problem is not None:
        return [
            Finding(
                "edits",
                str(path),
                False,
                f"{path} {problem}: the hooks pass it over, so {mode}",
                f'fix or remove {path} (a JSON object: {{"auto_reserve": false}} is advisory mode)',
                data=data,
            )
        ]
    source = str(path) if path.is_file() else f"no {CONFIG_FILE}: the default"
    return [Finding("edits", str(path), True, f"{mode} ({source})", data=data)]
