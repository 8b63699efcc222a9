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
surface lands in the same "waiting for you" list (the TypeScript client has the
same rule in `clients/ts/src/human.ts`).

**Former names.** Before a terminal was the human's, rule 7 named each terminal
session `<user>-<terminal>-<leader pid>-<4 hex>` (`ada-pts3-4242-1a2b`). Those
names stay on the board (the daemon never forgets one), and mail still reaches
them: the answer to a question the person asked from that terminal, a reply to
it later, a release request for a file it reserved. A name of this user's with a
terminal in it (`pts<N>`, `tty<N>`) had a controlling terminal, so by today's rule
it was the person: it is one of the human's names (`is_former_name`). The
human's inbox on every human surface (`coord inbox`, `coord top`, `coord web`)
reads its unread messages beside `human-<user>`'s (`inbox_names`, `merged`) and
marks them read with them; a request addressed to it is answered as it
(`answering_as`), since the daemon takes an answer only from the name asked; and
the tabs are not told it is another agent (`is_person`). A `<user>-session-...`
name had no terminal (cron, a service, a detached script) and still has none: it
is no person's, and its mail stays its own (`coord inbox --agent NAME`). The rule
is the client's, from the name alone: the daemon knows nothing of people.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coordd_wire.wire_messages import Message

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
    from coordd_client.text import clean  # not at import: `identity` loads this module

    return f"{HUMAN_PREFIX}{clean(user)}"


def is_human(agent: str) -> bool:
    """Whether `agent` is a person's name by this rule (any user's, in team mode)."""
    return agent.startswith(HUMAN_PREFIX)


def resolve_assignee(name: str | None) -> str | None:
    """`human` becomes `human-<user>`; every other name (and None) is kept as given."""
    return human_agent() if name == HUMAN else name


#: What follows `<user>-` in a name rule 7 gave a terminal session before issue 47:
#: the terminal (`pts3`, `tty1`, `tty4.64`), the session leader's pid, 4 hex digits.
_FORMER_TERMINAL = re.compile(r"(?:pts\d+|tty\d+(?:\.\d+)?)-\d+-[0-9a-f]{4}")
_FORMER_TAIL = re.compile(r"-(?:pts\d+|tty\d+(?:\.\d+)?)-\d+-[0-9a-f]{4}$")


def shell_user(environ: Mapping[str, str] | None = None) -> str:
    """The user as rule 7 writes it into a session's name (`ada` of `ada-session-...`),
    and wrote it into a terminal's before issue 47: `identity.terminal_session_agent`'s
    spelling (its `slug` of `$USER`, `$LOGNAME` or the login name), said again here
    because the hooks that tell the person apart do not load `identity`
    (tests/system/test_hook_imports.py); tests/system/test_one_human.py holds the two
    spellings equal."""
    env = os.environ if environ is None else environ
    user = env.get("USER") or env.get("LOGNAME")
    if not user:
        try:
            import pwd

            user = pwd.getpwuid(os.getuid()).pw_name
        except (ImportError, KeyError):
            user = "user"
    return re.sub(r"[^a-z0-9_.]+", "-", user.lower()).strip("-") or "proc"


def is_former_name(agent: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `agent` is a name this user's terminal had before it was the human's
    (`ada-pts3-4242-1a2b`): one of the human's names, whose mail is the human's."""
    if _FORMER_TAIL.search(agent) is None:
        return False  # the common case, decided without asking who the user is
    prefix = f"{shell_user(environ)}-"
    rest = agent[len(prefix) :] if agent.startswith(prefix) else ""
    return _FORMER_TERMINAL.fullmatch(rest) is not None


def is_person(agent: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the tabs are to be told `agent` is a person, not another agent: a human's
    name (`human-<user>`, any user's) or a former terminal name of this user's."""
    return is_human(agent) or is_former_name(agent, environ)


def inbox_names(
    agent: str, known: Iterable[str], environ: Mapping[str, str] | None = None
) -> list[str]:
    """Whose unread messages `agent`'s inbox shows: its own, and when it is this user's
    human, each former terminal name among the names the daemon `known`s (`agent.list`)."""
    if agent != human_agent(environ):
        return [agent]
    return [agent, *sorted({n for n in known if n != agent and is_former_name(n, environ)})]


def merged(inboxes: Iterable[Sequence[Message]]) -> list[Message]:
    """Several names' unread messages as one inbox, oldest first, each message once (a
    message to the project reaches each of the human's live names)."""
    return sorted({m.id: m for found in inboxes for m in found}.values(), key=lambda m: m.id)


def answering_as(
    addressed_to: str | None, human: str, environ: Mapping[str, str] | None = None
) -> str:
    """The name the human answers a request as: the former name it was addressed to,
    else the human's own (the daemon refuses an answer from any other name)."""
    if addressed_to is None or human != human_agent(environ):
        return human
    return addressed_to if is_former_name(addressed_to, environ) else human
