"""Usage in (issue 48): the hooks send the ledger what is new in their host's transcript.

Each hook that already runs (Claude Code's `post-tool`, `wake` on Stop, `deliver`
and `session-end`; Codex's `post-tool`, `deliver`, `turn-end` on Stop and `session-end`) reads its
payload's `transcript_path` from where the last read of that file stopped: an
offset per transcript, kept in the user's state directory beside the hooks' other
state (`<state>/usage/<hash of the path>.json`, with the file's inode and, for
Codex, the model in force there and whether the rollout has per-response
`token_usage_record` lines). A read stops at the last whole line, so a line
the host is still writing is read next time, complete. A file whose inode changed
(rotated) or that is shorter than the offset (truncated) is read again from its
start: the ledger counts an entry it already has once, so a re-read costs time,
never tokens. The offset moves only once the daemon has the entries.

A hook must never brick an agent: every error here is written to
`<state>/usage/usage.log` and swallowed; the hook's own answer is unchanged. The
daemon never reads a transcript.

A report that spends a task's whole budget also messages the person (`notify`):
the daemon writes that message with the crossing, so it is in their inbox on every
surface whatever becomes of this hook afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coordd_apps.hooks.payload import HookInput
from coordd_wire import bounds
from coordd_wire.paths import state_dir

if TYPE_CHECKING:
    from coordd_wire.method_table import Call

#: Bytes one hook reads of a transcript: the rest waits for the next hook, so a first
#: read of a long session costs a few hooks a little each, not one hook a lot.
MAX_READ = 8 * 1024 * 1024
#: The log of what went wrong is cut back to its newest half past this size.
MAX_LOG = 64 * 1024
#: Hosts whose transcripts this reads (Cursor's records carry no token counts).
HOSTS = ("claude", "codex")


def report_new_usage(socket: Callable[[], Path], given: HookInput) -> None:
    """Send what is new in `given`'s transcript; never raises."""
    try:
        path = given.raw.get("transcript_path")
        if given.host in HOSTS and isinstance(path, str) and path:
            _report(socket, given, path)
    except Exception as exc:  # a hook never bricks an agent: logged, and the hook goes on
        _log(f"{given.host} {given.agent.value}: usage not reported: {exc!r}")


def _state_file(path: str) -> Path:
    return state_dir() / "usage" / f"{hashlib.sha1(path.encode()).hexdigest()[:20]}.json"


def _load(file: Path) -> dict[str, Any]:
    try:
        saved = json.loads(file.read_text())
    except (OSError, ValueError):
        return {}
    return saved if isinstance(saved, dict) else {}


def _save(file: Path, state: dict[str, Any]) -> None:
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = file.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(state))
    os.replace(temporary, file)  # whole or not at all: two hooks of one turn may race


def _report(socket: Callable[[], Path], given: HookInput, path: str) -> None:
    from coordd_apps.hooks import transcript

    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return  # not written yet (a session's first hook), or a host that names none
    file = _state_file(path)
    saved = _load(file)
    offset = saved.get("offset", 0)
    if saved.get("inode") != stat.st_ino or not isinstance(offset, int) or offset > stat.st_size:
        offset = 0  # a new file at this path, or the old one cut short: from the start
    if offset == stat.st_size:
        return
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(MAX_READ)
    end = data.rfind(b"\n") + 1
    if end == 0:
        if len(data) < MAX_READ:
            return  # a line still being written: read it whole next time
        end = len(data)  # one line longer than a read: skipped, it carries no usage
    lines = data[:end].split(b"\n")
    session = given.raw.get("session_id")
    session = session if isinstance(session, str) and 0 < len(session) <= 256 else None
    model = saved.get("model")
    records = offset > 0 and saved.get("records") is True
    if given.host == "codex":
        hook_model = given.raw.get("model")
        model = model if isinstance(model, str) else hook_model
        entries, model, records = transcript.codex_entries(lines, session or path, model, records)
    else:
        entries = transcript.claude_entries(lines)
    if entries:
        _send(socket(), given, entries, session)
    state = {"path": path, "inode": stat.st_ino, "offset": offset + end, "model": model}
    _save(file, {**state, "records": records})


def _send(
    socket: Path, given: HookInput, entries: list[dict[str, Any]], session: str | None
) -> None:
    """The entries, in reports of at most 256. Each names the person (`notify`: this
    user's `human-<user>`), whom the daemon messages in the report's own transaction
    when it spends a task's whole budget; a daemon without `budget_notify` refuses the
    member and is asked again without it (nothing of a refused report is recorded)."""
    from coordd_client.client import Client
    from coordd_wire.errors import InvalidParams, MethodNotFound

    size = bounds.MAX_USAGE_ENTRIES
    with Client(socket) as client:
        notify: str | None = "human"
        for start in range(0, len(entries), size):
            chunk = entries[start : start + size]
            try:
                try:
                    answer = client.request(_built(given, chunk, session, notify))
                except InvalidParams as exc:
                    if notify is None or "notify" not in exc.message:
                        raise
                    notify = None  # an older daemon: the tab's model is still told
                    answer = client.request(_built(given, chunk, session, notify))
            except MethodNotFound:
                return  # a daemon without the ledger: nothing to keep for it
            _keep_notices(given.agent.value, answer.get("budgets") or [])


def _built(
    given: HookInput, chunk: list[dict[str, Any]], session: str | None, notify: str | None
) -> Call[dict[str, Any]]:
    from coordd_client.methods_usage import report_usage

    built = report_usage(given.host, chunk, agent=given.agent.value,
                         project=given.project.value, session=session, notify=notify)  # fmt: skip
    return built.as_type(dict)


def _notices_file(agent: str) -> Path:
    return state_dir() / "usage" / f"notices-{hashlib.sha1(agent.encode()).hexdigest()[:16]}.json"


def _keep_notices(agent: str, crossings: list[dict[str, Any]]) -> None:
    """A budget this tab's report crossed, kept until a hook that speaks to the model
    (`take_notices`): the Stop and session-end hooks have no such channel."""
    if not crossings:
        return
    file = _notices_file(agent)
    kept = _load_list(file)
    kept += [notice(c) for c in crossings if isinstance(c, dict)]
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    file.write_text(json.dumps(kept[-20:]))


def _load_list(file: Path) -> list[str]:
    try:
        found = json.loads(file.read_text())
    except (OSError, ValueError):
        return []
    return [n for n in found if isinstance(n, str)] if isinstance(found, list) else []


def has_notices(agent: str) -> bool:
    try:
        return _notices_file(agent).exists()
    except OSError:
        return False


def take_notices(agent: str) -> str:
    """The budget notices not yet told to this tab's model, each once; never raises."""
    try:
        file = _notices_file(agent)
        found = _load_list(file)
        if found:
            file.unlink(missing_ok=True)
        return "\n".join(found)
    except OSError:
        return ""


def notice(crossing: dict[str, Any]) -> str:
    """What the model is told when its task's charges cross a threshold of its budget."""
    task, spent, tokens = crossing.get("task_id"), crossing.get("spent"), crossing.get("tokens")
    used = f"{spent:,} of its {tokens:,}-token budget"
    if crossing.get("threshold") == 100 and crossing.get("released"):
        return (
            f"coord: task #{task} has used its whole token budget ({used}), and it asked"
            " for its claim to be released then: you no longer hold it. Stop work on"
            " it, say where it stands (a note on the task), and ask the human."
        )
    if crossing.get("threshold") == 100:
        return (
            f"coord: task #{task} has used its whole token budget ({used}). Stop, say"
            " where the work stands (coord done, or a note on the task), and ask the"
            " human before spending more on it."
        )
    return (
        f"coord: task #{task} has reached {crossing.get('threshold')}% of its token budget"
        f" ({used}). Aim to finish within it, or tell the human it needs more."
    )


def _log(line: str) -> None:
    try:
        log = state_dir() / "usage" / "usage.log"
        log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if log.exists() and log.stat().st_size > MAX_LOG:
            log.write_bytes(log.read_bytes()[-MAX_LOG // 2 :])
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {line}\n")
    except OSError:
        pass  # nowhere to say it: the hook still goes on
