"""`coordd service install | uninstall | status`: run coordd as a user service.

systemd (Linux): writes coordd.socket and coordd.service to
~/.config/systemd/user/, then `systemctl --user daemon-reload` and
`enable --now coordd.socket`: coordd starts on the first connection.
launchd (macOS): writes ~/Library/LaunchAgents/org.coordd.coordd.plist,
creates the socket's directory (launchd does not), then
`launchctl bootstrap gui/UID PLIST`.

Every action is planned first; `--dry-run` prints the plan (each file's path
and full content, then each command) and changes nothing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from coordd_wire.paths import default_socket_path, state_dir

LAUNCHD_LABEL = "org.coordd.coordd"
SYSTEMD_UNITS = ("coordd.socket", "coordd.service")
SHIPPED_EXEC_START = "ExecStart=%h/.local/bin/coordd serve"


@dataclass
class Plan:
    directories: list[tuple[Path, int]] = field(default_factory=list)
    files: list[tuple[Path, str]] = field(default_factory=list)
    removals: list[Path] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def template_dir(name: str) -> Path:
    """Where the shipped unit files are: inside the wheel, or the source checkout."""
    packaged = Path(__file__).parent / "data" / name
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / name


def coordd_command() -> list[str]:
    """The absolute command that runs this coordd."""
    script = Path(sys.argv[0])
    if script.name == "coordd" and script.exists():
        return [str(script.resolve())]
    found = shutil.which("coordd")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "coordd"]


def _systemd_exec(command: list[str]) -> str:
    # systemd unit syntax quotes like a shell for our purposes (systemd.syntax(7)).
    return "ExecStart=" + " ".join(shlex.quote(part) for part in [*command, "serve"])


def systemd_units(command: list[str]) -> dict[str, str]:
    texts = {name: (template_dir("systemd") / name).read_text() for name in SYSTEMD_UNITS}
    service = texts["coordd.service"]
    if SHIPPED_EXEC_START not in service:
        raise RuntimeError("the shipped coordd.service has no ExecStart line to fill in")
    texts["coordd.service"] = service.replace(SHIPPED_EXEC_START, _systemd_exec(command))
    return texts


def launchd_plist(command: list[str], socket_path: Path, log_path: Path) -> str:
    text = (template_dir("launchd") / "coordd.plist").read_text()
    program = "\n".join(f"        <string>{escape(part)}</string>" for part in command)
    text = text.replace("        <string>@COORDD@</string>", program)
    return text.replace("@SOCKET@", escape(str(socket_path))).replace(
        "@LOG@", escape(str(log_path))
    )


def _user_config_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def plan_install(platform: str) -> Plan:
    plan = Plan()
    command = coordd_command()
    if platform == "systemd":
        unit_dir = _user_config_dir() / "systemd" / "user"
        plan.directories.append((unit_dir, 0o755))
        for name, text in systemd_units(command).items():
            plan.files.append((unit_dir / name, text))
        plan.commands += [
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", "coordd.socket"],
        ]
        plan.notes.append(
            "coordd now starts on the first connection to $XDG_RUNTIME_DIR/coordd/coordd.sock."
            " For it to outlive your login session: loginctl enable-linger $USER"
        )
    else:
        # launchd has no XDG_RUNTIME_DIR: clients fall back to $TMPDIR/coordd-<uid>/.
        socket_path = default_socket_path(
            None, {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        )
        log_path = Path.home() / "Library" / "Logs" / "coordd.log"
        plist = Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        plan.directories += [
            (socket_path.parent, 0o700),
            (log_path.parent, 0o755),
            (plist.parent, 0o755),
        ]
        plan.files.append((plist, launchd_plist(command, socket_path, log_path)))
        plan.commands.append(["launchctl", "bootstrap", f"gui/{os.getuid()}", str(plist)])
        plan.notes.append(
            f"coordd now starts on the first connection to {socket_path};"
            " `coordd service install` created its directory (mode 0700) because launchd does not."
        )
    return plan


def plan_uninstall(platform: str) -> Plan:
    plan = Plan()
    if platform == "systemd":
        unit_dir = _user_config_dir() / "systemd" / "user"
        plan.commands.append(["systemctl", "--user", "disable", "--now", *SYSTEMD_UNITS])
        plan.removals += [unit_dir / name for name in SYSTEMD_UNITS]
        plan.commands.append(["systemctl", "--user", "daemon-reload"])
    else:
        plan.commands.append(["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"])
        plan.removals.append(Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist")
    plan.notes.append(f"the database in {state_dir()} is kept")
    return plan


def plan_status(platform: str) -> Plan:
    plan = Plan()
    if platform == "systemd":
        plan.commands.append(["systemctl", "--user", "--no-pager", "status", *SYSTEMD_UNITS])
    else:
        plan.commands.append(["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"])
    return plan


def print_plan(plan: Plan) -> None:
    for directory, mode in plan.directories:
        print(f"# directory {directory} (mode {mode:04o})")
    for path, text in plan.files:
        print(f"# file {path}")
        print(text.rstrip("\n"))
        print(f"# end of {path}")
    for path in plan.removals:
        print(f"# remove {path}")
    for command in plan.commands:
        print("# run " + shlex.join(command))


def carry_out(plan: Plan, *, check: bool = True) -> int:
    for directory, mode in plan.directories:
        if not directory.exists():
            directory.mkdir(mode=mode, parents=True)
            os.chmod(directory, mode)
            print(f"created {directory} (mode {mode:04o})")
    for path, text in plan.files:
        path.write_text(text)
        print(f"wrote {path}")
    for command in plan.commands:
        print("running " + shlex.join(command), flush=True)
        try:
            completed = subprocess.run(command, check=False)
        except FileNotFoundError:
            print(f"coordd service: {command[0]} is not installed here", file=sys.stderr)
            return 1
        if check and completed.returncode != 0:
            print(
                f"coordd service: {shlex.join(command)} exited {completed.returncode}",
                file=sys.stderr,
            )
            return 1
    for path in plan.removals:
        if path.exists():
            path.unlink()
            print(f"removed {path}")
    for note in plan.notes:
        print(note)
    return 0


def add_service_parser(commands: Any) -> None:
    service = commands.add_parser(
        "service", help="install coordd as a user service (systemd/launchd)"
    )
    service.add_argument("action", choices=["install", "uninstall", "status"])
    service.add_argument(
        "--dry-run", action="store_true", help="print files and commands; change nothing"
    )
    service.add_argument(
        "--platform", choices=["systemd", "launchd"], help="default: this system's"
    )


def run_service_command(args: argparse.Namespace) -> int:
    platform = args.platform or ("launchd" if sys.platform == "darwin" else "systemd")
    planner = {"install": plan_install, "uninstall": plan_uninstall, "status": plan_status}[
        args.action
    ]
    plan = planner(platform)
    if args.dry_run:
        print_plan(plan)
        return 0
    # Uninstall goes on past a failing step so that it removes what it can.
    return carry_out(plan, check=args.action == "install")
