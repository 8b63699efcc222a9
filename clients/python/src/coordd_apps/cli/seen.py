"""A name the daemon has never seen is most likely a typo: say so, without refusing.

Assigning to an agent that has not started yet is legitimate (PROTOCOL.md lets
any name be an assignee), and releasing what nobody holds is a success; but a
misspelt `--to` otherwise strands a task silently, so these commands add one
line on stderr when the name is unknown.
"""

from __future__ import annotations

import sys

from coordd_client.client import Client
from coordd_client.text import clean


def note_if_unseen(client: Client, name: str | None, consequence: str) -> None:
    """One stderr line when `name` is set and no agent of that name has been seen (the
    word `human` is a person, who acts from `coord web` or `coord top`, not a tab)."""
    if not name or name == "human" or any(a.agent == name for a in client.agents().agents):
        return
    sys.stderr.write(
        f"coord: note: no agent named {clean(name)} has been seen; {consequence}"
        " (`coord agents --all` lists the names)\n"
    )
