"""The one rule for the human's agent name: `human-<user>`.

The person at the keyboard is one agent on every human surface (issue 47
item 1): their shells (`coord` on a terminal outside any host's tab,
`identity.last_resort`), `coord top` and `coord web` all act as it, so a
question asked from the terminal is answered into the inbox top and web
show, and a file reserved from a shell is one the web can hand over. An
agent that wants a person to approve something assigns a task to it (an
approval gate) or messages it. Agents say `--to human` (CLI) or `assignee:
"human"` / `to: "human"` (MCP, the Python clients): the builders in
`methods.py` turn that word into this user's name, so a gate posted from any
surface lands in the same "waiting for you" list.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from coordd_client.render import clean

#: The assignee word that means "the person at this machine".
HUMAN = "human"


#: The prefix every human's name has: how the tabs' context tells a person from an agent.
HUMAN_PREFIX = f"{HUMAN}-"


def human_agent(environ: Mapping[str, str] | None = None) -> str:
    """The agent a human acts as, so every history says a person did it. The user is
    read as `getpass.getuser` reads it, from `environ` when given."""
    env = os.environ if environ is None else environ
    user = next((env[k] for k in ("LOGNAME", "USER", "LNAME", "USERNAME") if env.get(k)), None)
    if user is None:  # getpass only then: the hooks' import budget (its pwd, termios)
        import getpass

        user = getpass.getuser()
    return f"{HUMAN_PREFIX}{clean(user)}"


def is_human(agent: str) -> bool:
    """Whether `agent` is a person's name by this rule (any user's, in team mode)."""
    return agent.startswith(HUMAN_PREFIX)


def resolve_assignee(name: str | None) -> str | None:
    """`human` becomes `human-<user>`; every other name (and None) is kept as given."""
    return human_agent() if name == HUMAN else name
