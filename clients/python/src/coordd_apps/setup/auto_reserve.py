"""`coord setup --no-auto-reserve` / `--auto-reserve`: the repository's switch for
reserve-on-first-edit (issue 33), kept in `.coord/config.json` at the main worktree's
top (`hooks.files.CONFIG_FILE`), so a team commits it once and every worktree,
every host and every tab reads the same answer.

Only the `auto_reserve` key is ours: any other key in the file is kept, and a file
left empty by turning the switch back on is removed.
"""

from __future__ import annotations

import json
from pathlib import Path

from coordd_apps.hooks.files import CONFIG_FILE
from coordd_apps.setup.hosts import SetupError
from coordd_client.repository import worktree_and_main


def switch(on: bool, cwd: Path | None = None) -> tuple[Path, bool]:
    """Turn automatic reservations on or off for the repository at `cwd`; return the
    file and whether it changed."""
    found = worktree_and_main(cwd or Path.cwd())
    if found is None or found[1] is None:
        raise SetupError("not in a git repository: the switch is per repository")
    path = Path(found[1]) / CONFIG_FILE
    try:
        config = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise SetupError(f"{path} is not JSON ({exc}): fix or remove it first") from None
    if not isinstance(config, dict):
        raise SetupError(f"{path} is not a JSON object: fix or remove it first")
    before = dict(config)
    if on:
        config.pop("auto_reserve", None)
    else:
        config["auto_reserve"] = False
    if config == before:
        return path, False
    if config:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(config, indent=2) + "\n")
    else:
        path.unlink()
    return path, True
