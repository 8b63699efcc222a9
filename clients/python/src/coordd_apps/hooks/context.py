"""The context a session starts with: the board summary, then the workflow.

The summary (`summary.py`) is at most `SUMMARY_CHARS`; the workflow is ours, or
the repository's own `.coord/PRIME.md` (`PRIME_FILE`, at the project's
directory: the main worktree's top), for a team that wants its own words there,
as beads' `.beads/PRIME.md`. The live board lines come first either way; the file
replaces the workflow text only, and is cut at `WORKFLOW_CHARS`, so the whole
stays under `CONTEXT_CHARS`.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from coordd_apps.hooks import reported
from coordd_apps.summary import NAME_CHARS, SUMMARY_CHARS, cut, summarize
from coordd_client import boards, tabs
from coordd_client.autostart import connect
from coordd_client.client import Client
from coordd_client.text import clean_block
from coordd_wire.errors import CoordError, SeveralBoards, WrongBoard

WORKFLOW = """\
Workflow (coordd): claim before you work (claim_next or claim_task; `coord next` in a shell);
your first edit of a file reserves it (reserve_paths for a whole area first); edits of files
another agent reserved are denied (request_release asks for them); heartbeat on long work;
complete_task with the fence and then_post an ack; `coord land` to merge a branch in turn;
post_task what you find instead of doing it unasked."""
#: The same for a Cursor window, whose terminal is not the window's agent.
CURSOR_WORKFLOW = WORKFLOW.replace("claim_task; `coord next` in a shell", "claim_task")

#: How the context of a session whose board cannot be read begins.
UNAVAILABLE = "coordd board unavailable"
#: The repository's own workflow text, relative to the project's directory.
PRIME_FILE = Path(".coord") / "PRIME.md"
#: At most this much of it is used (about 400 tokens); the rest is cut, and said to be.
WORKFLOW_CHARS = 1600
#: The bound on the whole session-start context, in characters (about 1,300 tokens,
#: and 400 more when unread messages are delivered with it).
CONTEXT_CHARS = SUMMARY_CHARS + 1 + reported.DELIVERY_CHARS + 1 + WORKFLOW_CHARS
#: Characters of a daemon's error message shown when the board is unavailable: enough
#: for a refusal of several boards or of a wrong one whole (it ends with what to do),
#: and within the summary's bound, whose place it takes.
ERROR_CHARS = 1200
#: Hosts whose shell tool runs a login shell, which may rebuild `PATH` from the login
#: profile and so not find a virtualenv's `coord` (Codex runs `bash -lc`).
LOGIN_SHELL_HOSTS = frozenset({"codex"})
#: The note naming `coord`'s absolute path is left out rather than cut past this.
SHELL_NOTE_CHARS = 300


def session_start_context(
    socket: os.PathLike[str] | str,
    agent: str,
    project: str,
    *,
    autostart: bool,
    host: str = "claude",
    derived: bool = False,
) -> str:
    """The board summary, who you are, and the workflow: at most `CONTEXT_CHARS`.
    `derived`: the socket was not asked for (`autostart.connect`).

    Raises `CoordError` when the board cannot be read (`unavailable` says so instead).
    """
    with connect(Path(socket), autostart=autostart, derived=derived) as client:
        bind_board(client)
        board = summarize(client, agent, project, shell_is_the_agent=host != "cursor")
        # 1.2: what others said to this tab while it was away, shown (and acked) once.
        unread = reported.take_unread(client, agent)
    reported.remember(agent, board.assigned)
    workflow = _workflow(project, host)
    if unread:
        return f"{board.text}\n{unread}\n{workflow}"
    return f"{board.text}\n{workflow}"


def unavailable(failure: CoordError, agent: str, project: str, *, host: str = "claude") -> str:
    """The context of a session whose board cannot be read: why, what its edits will
    meet until it can (`guard.unreachable_policy`), what to do, and the workflow."""
    # Starting a daemon would not help when one holds the board, or when the trouble
    # is which board (section 1a's refusal, `boards.py`'s): the message says what does.
    held = failure.data.get("reason") == "database_held" or isinstance(
        failure, (SeveralBoards, WrongBoard)
    )
    step = "" if held else " Start it with `coordd serve`."
    why, who = cut(failure.message, ERROR_CHARS), cut(agent, NAME_CHARS)
    return f"{UNAVAILABLE} ({why}); you are {who}.{step} {_edits_meanwhile(failure, project)}" + (
        f"\n{_workflow(project, host)}"
    )


def _edits_meanwhile(failure: CoordError, project: str) -> str:
    if isinstance(failure, WrongBoard):
        return "Edits and commits are refused while it is so."
    from coordd_apps.hooks.guard import unreachable_policy

    policy = unreachable_policy([project])
    if policy.deny:
        return f"Edits and commits are refused until it answers ({policy.source})."
    return (
        "Until it answers, edits and commits go ahead UNCHECKED against other agents'"
        " reservations (each edit says so): mention it to the user."
    )


def _workflow(project: str, host: str) -> str:
    """The repository's workflow or ours, and where `coord` is for a login-shell host,
    within `WORKFLOW_CHARS` together."""
    note = shell_note(host)
    limit = WORKFLOW_CHARS - (len(note) + 1 if note else 0)
    shell_is_the_agent = host != "cursor"
    workflow = repository_workflow(project, limit) or (
        WORKFLOW if shell_is_the_agent else CURSOR_WORKFLOW
    )
    return f"{workflow}\n{note}" if note else workflow


def bind_board(client: Client) -> None:
    """Record the board this tab works on at its first session start, and refuse (loudly,
    in the context the model reads) one that starts on another board than the tab's
    (`boards.py`): /clear, /resume and compaction keep the tab, so they keep its board."""
    reached = client.server_info().board_id
    if reached is None:
        return  # a daemon from before section 1b: nothing to compare
    refusal = boards.mismatch(tabs.bind_board(reached), reached, client.socket_path)
    if refusal is not None:
        raise refusal


def shell_note(host: str) -> str:
    """Where `coord` is, for a host whose shell tool may not find it (empty otherwise).

    Codex runs the model's commands through `bash -lc`: a login shell may reset
    `PATH` from the profile, and `coord` installed in a virtualenv is then "command
    not found" although the hooks (absolute paths) run. The instructions setup
    writes say it too, but only in the user's own file (a project's AGENTS.md may be
    committed); this hook runs on every machine with its own path.
    """
    if host not in LOGIN_SHELL_HOSTS:
        return ""
    coord = Path(sys.executable).parent / "coord"
    if not coord.is_file():
        return ""
    note = f"In your shell, run coord as {_shell_word(str(coord))} if `coord` is not found."
    return note if len(note) <= SHELL_NOTE_CHARS else ""


def _shell_word(text: str) -> str:
    """`text` as one word for `bash` (`shlex.quote`'s rule, without loading `shlex` and
    `re` into a hook: `bench/hooks.py` times every hook)."""
    if text and all(c.isalnum() or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def repository_workflow(project: str, limit: int = WORKFLOW_CHARS) -> str | None:
    """The text of the project's `.coord/PRIME.md`, cut to `limit` (`WORKFLOW_CHARS` less
    the shell note's room); None when there is none (or it cannot be read: the built-in
    workflow is then used).

    Why it reads so carefully: the file is the repository's, so anyone who can push
    decides what it is, and every session start reads it. Only a regular file is read
    (a FIFO would block the hook, and the tab's start, until the host's hook timeout;
    a link to `/dev/zero` would never end), and only the bytes the cut can use.
    """
    try:
        fd = os.open(Path(project) / PRIME_FILE, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, limit * 4)  # 4 bytes: the widest UTF-8 character
    except OSError:
        return None
    finally:
        os.close(fd)
    text = clean_block(raw.decode("utf-8", errors="replace")).strip()
    if not text:
        return None
    if len(text) <= limit:
        return text
    note = f"\n(... {PRIME_FILE} goes on; cut at {limit:,} characters)"
    return text[: limit - len(note)] + note
