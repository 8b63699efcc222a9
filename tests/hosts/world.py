"""A private machine for one host-tier test: HOME, runtime dir, a repository, a daemon.

Each test gets its own HOME (so the hosts' user settings, coord's user-scope
setup and the tab registry are its own), its own `XDG_RUNTIME_DIR` and
`TMPDIR`, a git repository, and a `coordd serve` on the defaults those give:
the database in HOME's state directory and the socket in the runtime
directory, where every surface of every host finds it by the ordinary rules
(Codex's MCP servers, which get no `XDG_RUNTIME_DIR`, through the daemon's
lock-file record). Nothing leaves the machine: the model APIs are local
fakes and each host's updates, telemetry and error reports are off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import COORD, DaemonProcess, short_tmpdir

HOSTS_DIR = Path(__file__).parent
BIN = HOSTS_DIR / "node_modules" / ".bin"
CLAUDE = BIN / "claude"
CODEX = BIN / "codex"
INSPECTOR = BIN / "mcp-inspector"
#: How the tier is installed when a binary is missing (the tests fail, never skip).
INSTALL_HINT = "the host tier's hosts are not installed: run `make test-hosts` (npm ci)"

#: Claude Code's switches for a machine with no network (HOSTS.md).
CLAUDE_OFFLINE = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ANTHROPIC_API_KEY": "sk-ant-api03-dummy",
}
#: The caller's variables that would lend a test its identity or its daemon.
CALLER_PREFIXES = ("COORD", "CLAUDE", "CODEX", "ANTHROPIC", "OPENAI", "XDG_", "MCP_")


class World:
    def __init__(self) -> None:
        self.root = short_tmpdir("ht")
        self.home = self.root / "home"
        self.run_dir = self.root / "run"
        for directory in (self.home, self.run_dir, self.root / "tmp"):
            directory.mkdir(mode=0o700)
        path = os.pathsep.join([str(Path(sys.executable).parent), str(BIN), os.environ["PATH"]])
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(CALLER_PREFIXES)}
        self.env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.run_dir),
            TMPDIR=str(self.root / "tmp"),
            PATH=path,
            NO_UPDATE_NOTIFIER="1",
            **CLAUDE_OFFLINE,
        )
        self.repo = self.root / "repo"
        self.repo.mkdir()
        self.git("init", "-q", "-b", "main")
        (self.repo / "src").mkdir()
        for name in ("owned.py", "mine.py", "free.py"):
            (self.repo / "src" / name).write_text(f"# {name}\n")
        self.git("add", "-A")
        self.git("commit", "-qm", "start")
        state = self.home / ".local" / "state" / "coordd"
        state.mkdir(parents=True)
        self.daemon = DaemonProcess(
            self.root,
            db_path=state / "coord.db",
            socket_path=self.run_dir / "coordd" / "coordd.sock",
            env=self.env,
        ).start()

    def git(self, *args: str, cwd: Path | None = None) -> str:
        env = {**self.env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        done = subprocess.run(
            ["git", *args],
            cwd=cwd or self.repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def worktree(self, name: str) -> Path:
        """A linked worktree of the repository, on a branch of its own."""
        path = self.root / name
        self.git("worktree", "add", "-q", "-b", name, str(path))
        return path

    def coord(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COORD, *args],
            cwd=cwd or self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def trust_claude_folder(self, *folders: Path) -> None:
        """What a user's first interactive start records: onboarding done, folders trusted."""
        config = self.home / ".claude.json"
        doc = json.loads(config.read_text()) if config.exists() else {}
        doc["hasCompletedOnboarding"] = True
        projects = doc.setdefault("projects", {})
        for folder in folders:
            projects.setdefault(str(folder), {})["hasTrustDialogAccepted"] = True
        config.write_text(json.dumps(doc, indent=2))

    def close(self) -> None:
        self.daemon.ensure_dead()
        shutil.rmtree(self.root, ignore_errors=True)


def require(binary: Path) -> str:
    assert binary.exists(), INSTALL_HINT
    return str(binary)
