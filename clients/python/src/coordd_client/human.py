"""The one rule for the human's agent name: `human-<user>`.

`coord top` and `coord web` act as it, and an agent that wants a person to
approve something assigns a task to it (an approval gate). Agents say
`--to human` (CLI) or `assignee: "human"` (MCP, the Python clients): the
builders in `methods.py` turn that word into this user's name, so a gate
posted from any surface lands in the same "waiting for you" list.
"""

from __future__ import annotations

import getpass

from coordd_client.render import clean

#: The assignee word that means "the person at this machine".
HUMAN = "human"


def human_agent() -> str:
    """The agent a human acts as, so every history says a person did it."""
    return f"{HUMAN}-{clean(getpass.getuser())}"


def resolve_assignee(name: str | None) -> str | None:
    """`human` becomes `human-<user>`; every other name (and None) is kept as given."""
    return human_agent() if name == HUMAN else name
