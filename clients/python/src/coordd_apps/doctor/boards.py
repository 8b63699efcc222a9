"""One board, provably (issue 43): which board each surface reaches, by starting each
host's MCP server as that host does (`hostenv`) and asking its `whoami`; every live
daemon of this user (the rendezvous); and, when more than one board is live, which
surface reaches which and the one command that ends the split.

Why start the servers rather than work it out: twice a host's stripped environment
sent `coord mcp` to a second board while a simulation said all was well. The
probe runs the host's own command with the host's own environment, plus
`hostenv.PROBE_ENV`, so it never starts a daemon (nor a shared MCP server): where
the host's server would start one, the finding says where, and on which board.

One cause is one finding: a split is reported once, with one command, however
many surfaces and worktrees it touches; the surfaces on the other board are
named in it and listed as notes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coordd_apps.doctor.findings import Finding
from coordd_apps.doctor.hostenv import Surface, probe_env, would_autostart
from coordd_apps.doctor.probe import Reached, mcp_sdk_missing, probe_all
from coordd_apps.wording.advice import plural
from coordd_wire.probe import PROBE_TIMEOUT_S, answering
from coordd_wire.rendezvous import LiveDaemon, describe, live_daemons, rendezvous_dir

SECTION = "boards"
#: How `whoami`'s `board_unreached` begins when several boards are live (the split's).
SEVERAL_BOARDS = "several_boards:"


# -- the findings ---------------------------------------------------------------------


def live_boards(environ: Mapping[str, str] | None = None) -> list[tuple[LiveDaemon, int]]:
    """This user's live daemons that answer (from the rendezvous, never starting one),
    each with its board's event count (`server.info.last_seq`; -1 if it did not say).
    All are pinged at once first: sockets that never answer cost one bound together."""
    records = live_daemons(environ)
    up = answering((Path(record.socket) for record in records), PROBE_TIMEOUT_S)
    live = []
    for record in records:
        if Path(record.socket) not in up:
            continue
        info = _server_info(Path(record.socket))
        if info is not None:
            live.append((record, int(info.get("last_seq") or 0)))
    return live


def kept_board(live: list[tuple[LiveDaemon, int]], shell_board: str | None) -> str | None:
    """The board to keep when several are live: the one this shell reaches (the user
    runs doctor where they work), else the one with the most events (a board started
    by a stripped environment is a new, empty one)."""
    if shell_board in {record.board_id for record, _ in live}:
        return shell_board
    ranked = sorted(live, key=lambda pair: pair[1], reverse=True)
    return ranked[0][0].board_id if ranked else None


def split_command(live: list[LiveDaemon], keep: str | None) -> str:
    """The one command that ends a split: stop every daemon serving another board
    (SIGTERM: a clean stop, which withdraws its rendezvous record)."""
    pids = [str(record.pid) for record in live if record.board_id != keep]
    return "kill " + " ".join(pids)


def check_boards(
    shell_board: str | None,
    shell_socket: Path,
    surfaces: list[Surface],
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """The live daemons, each surface's board, and the split if there is one."""
    counted = live_boards(environ)
    # A board started on purpose (`LiveDaemon.separate`) is no half of a split: no
    # surface is sent to it unless its socket is given.
    yours = [(record, count) for record, count in counted if not record.separate]
    live = [record for record, _ in yours]
    events = {record.board_id: count for record, count in yours}
    findings = [_daemon_note(record, count) for record, count in counted]
    lost = unrecorded(shell_board, environ)
    if lost is not None:
        findings.append(lost)
    split = len(events) > 1
    keep = kept_board(yours, shell_board) if split else shell_board
    missing = mcp_sdk_missing()
    reached = [] if missing else probe_all(surfaces, probe_env)
    if missing:
        findings.append(Finding(SECTION, "mcp servers", True, missing, skipped=True))
    for surface, answer in zip([] if missing else surfaces, reached, strict=True):
        shell = (shell_board, shell_socket)
        finding = _surface_finding(surface, answer, keep=keep, shell=shell, split=split)
        if lost is not None and not finding.ok and answer.board_id is None:
            # One cause, one finding: the missing record, not this surface's setup.
            finding = Finding(
                SECTION,
                finding.what,
                True,
                f"{finding.detail} (see the rendezvous)",
                note=True,
                data=finding.data,
            )
        findings.append(finding)
    if split:
        findings.append(
            _split_finding(
                live,
                keep=keep,
                shell_board=shell_board,
                shell_socket=shell_socket,
                surfaces=surfaces,
                reached=reached,
            )
        )
    return findings


def _server_info(socket: Path) -> dict[str, Any] | None:
    from coordd_apps.doctor.daemon import server_info

    return server_info(socket)


def _daemon_note(record: LiveDaemon, events: int) -> Finding:
    data = {"pid": record.pid, "board_id": record.board_id, "socket": record.socket}
    purpose = (
        " (started on purpose with its own store and socket: no surface uses it unless"
        " given its socket)"
        if record.separate
        else ""
    )
    return Finding(
        SECTION,
        f"daemon {record.pid}",
        True,
        f"live: {describe(record)}; {plural(events, 'event')}{purpose}",
        note=True,
        data={**data, "store": record.store, "events": events, "separate": record.separate},
    )


def unrecorded(board_id: str | None, environ: Mapping[str, str] | None = None) -> Finding | None:
    """A FAIL naming the cause when the daemon this shell reaches serves `board_id` but
    no rendezvous record names that board: a surface whose host strips the environment
    cannot find it, and would start a second, empty board. The usual cause is the state
    folder removed while the daemon runs (a clean-up); a current daemon writes its record
    again within seconds, so the fix is to look again, then to restart it."""
    if board_id is None or board_id in {record.board_id for record in live_daemons(environ)}:
        return None
    try:
        directory = rendezvous_dir(environ)
    except OSError:
        return None
    gone = "is gone" if not directory.exists() else "has no record of it"
    detail = (
        f"the daemon this shell reaches (board {board_id}) is missing from the rendezvous:"
        f" {directory} {gone}, most likely removed while the daemon runs (a clean-up of"
        f" {directory.parent}). Until it is back, a surface whose host strips the"
        " environment cannot find this board"
    )
    fix = (
        "run coord doctor again: a current coordd writes its record again within seconds;"
        " if it stays missing (an older coordd, or it cannot write there), restart it from"
        " your shell (`kill <its pid>`, then `coordd serve`)"
    )
    return Finding(SECTION, "rendezvous", False, detail, fix, data={"board_id": board_id})


def _surface_finding(
    surface: Surface,
    answer: Reached,
    *,
    keep: str | None,
    shell: tuple[str | None, Path],
    split: bool,
) -> Finding:
    shell_board = shell[0]
    label = f"{surface.title} starts coord's MCP server ({surface.source}); it"
    data: dict[str, Any] = {
        "surface": surface.name,
        "source": surface.source,
        "command": [surface.command, *surface.args],
        "env": sorted(surface.env),
        "board_id": answer.board_id,
        "socket": answer.socket,
        "failed": answer.failed,
    }
    check = f"{surface.name} mcp server"
    if answer.failed is not None:
        fix = "run the command above by hand to see why"
        detail = f"{label} failed: {answer.failed}"
        return Finding(SECTION, check, False, detail, fix, data=data)
    if answer.board_id is not None and answer.board_id == keep:
        detail = f"{label} reaches board {answer.board_id} on {answer.socket}"
        return Finding(SECTION, check, True, detail, data=data)
    if answer.board_id is not None and split:
        # The split's own finding names this surface and the command: one cause, one line.
        detail = f"{label} reaches board {answer.board_id} on {answer.socket} (see the split)"
        return Finding(SECTION, check, True, detail, note=True, data=data)
    if answer.board_id is not None:
        detail = (
            f"{label} reaches board {answer.board_id} on {answer.socket}, not this shell's"
            f" board {shell_board}"
        )
        return Finding(SECTION, check, False, detail, _pin(surface, shell[1]), data=data)
    return _unreached_finding(surface, answer, label, shell, split, data)


def _unreached_finding(  # noqa: PLR0917 (the caller's facts, passed on)
    surface: Surface,
    answer: Reached,
    label: str,
    shell: tuple[str | None, Path],
    split: bool,
    data: dict[str, Any],
) -> Finding:
    check = f"{surface.name} mcp server"
    shell_board, shell_socket = shell
    why = answer.unreached or "no daemon answered"
    if split and why.startswith(SEVERAL_BOARDS):
        detail = f"{label} refuses to choose between the live boards (see the split)"
        return Finding(SECTION, check, True, detail, note=True, data=data)
    if shell_board is not None:
        # A daemon answers this shell, and discovery would have found it: this surface
        # looks elsewhere (a pinned socket, another board than its tab's).
        detail = f"{label} reaches no board ({why}), while this shell reaches {shell_board}"
        return Finding(SECTION, check, False, detail, _pin(surface, shell_socket), data=data)
    if not would_autostart(surface):
        detail = f"{label} reaches no board ({why}) and would start none"
        return Finding(SECTION, check, True, detail, data=data)
    store, words = would_start(probe_env(surface), Path(answer.socket or ""))
    shell_store, _ = would_start(os.environ, shell_socket)
    data["would_start"] = store
    detail = (
        f"{label} finds no daemon running; this host's MCP server would start a daemon on"
        f" {answer.socket} serving {words}"
    )
    if store is not None and shell_store is not None and store != shell_store:
        detail += f", and this shell one on {shell_store}: two boards"
        return Finding(SECTION, check, False, detail, _record_the_board(surface), data=data)
    return Finding(SECTION, check, True, detail, data=data)


def _record_the_board(surface: Surface) -> str:
    """What makes a surface that would start another store start the shell's: the shell's
    daemon, started once, records the user's board, which every autostart then starts;
    a host that coord sets up also gets the variables it strips passed on."""
    start = "start your board from this shell once (`coordd serve`): it is recorded as yours"
    if surface.name in SET_UP_HOSTS:
        return f"{start}; and `coord setup {surface.name}`"
    return start


def _pin(surface: Surface, shell_socket: Path) -> str:
    """What makes this surface reach the shell's daemon: setup for a host; for a plain
    MCP client (no configuration of ours), the socket in its server's environment."""
    if surface.name not in SET_UP_HOSTS:
        return f"give the client's server COORDD_SOCKET={shell_socket} (Inspector: -e)"
    return f"coord setup {surface.name}"


#: The hosts `coord setup` configures (a plain MCP client is configured by its user).
SET_UP_HOSTS = frozenset({"claude", "codex", "cursor"})


def would_start(environ: Mapping[str, str], socket: Path) -> tuple[str | None, str]:
    """The store a `coord` with `environ` would start a daemon on at `socket`, and that
    in words (`autostart.start_daemon`'s choice, worked out without starting anything);
    the store is None when it would refuse to start one."""
    from coordd_client.autostart import recorded_board, the_users_board
    from coordd_wire.errors import CoordError
    from coordd_wire.paths import STORE_ENV, default_db_path
    from coordd_wire.rendezvous import users_board_path

    recorded = recorded_board(socket)
    if recorded is not None:
        return str(recorded), f"{recorded} (the board that socket served before)"
    try:
        users = the_users_board(environ)
    except CoordError as exc:
        return None, f"nothing: {exc.message}"
    if users is not None:
        return str(users), f"{users} (your board, as {users_board_path(environ)} records it)"
    if environ.get(STORE_ENV):
        return environ[STORE_ENV], f"{environ[STORE_ENV]} ($COORDD_STORE)"
    path = default_db_path(environ)
    return str(path), f"{path}" + ("" if path.exists() else " (a new, empty board)")


def _split_finding(
    live: list[LiveDaemon],
    *,
    keep: str | None,
    shell_board: str | None,
    shell_socket: Path,
    surfaces: list[Surface],
    reached: list[Reached],
) -> Finding:
    by_board: dict[str, list[str]] = {record.board_id: [] for record in live}
    if shell_board in by_board:
        by_board[shell_board].append(f"this shell ({shell_socket})")
    for surface, answer in zip(surfaces, reached, strict=False):
        if answer.board_id in by_board:
            by_board[answer.board_id].append(f"{surface.title}'s MCP server")
    parts = []
    for record in {r.board_id: r for r in live}.values():
        users = ", ".join(by_board[record.board_id]) or "no surface checked here"
        role = "keep" if record.board_id == keep else "stop"
        parts.append(f"[{role}] {describe(record)}: {users}")
    command = split_command(live, keep)
    detail = (
        f"{len(by_board)} of your boards are live: agents on one never see the other's"
        f" claims, reservations or messages. {'; '.join(parts)}. Stopping the other"
        " daemon ends the split; its store stays on disk, nothing on it is deleted"
    )
    data = {
        "boards": [
            {"board_id": r.board_id, "store": r.store, "socket": r.socket, "pid": r.pid}
            for r in live
        ],
        "keep": keep,
        "command": command,
    }
    return Finding(SECTION, "split", False, detail, command, data=data)
