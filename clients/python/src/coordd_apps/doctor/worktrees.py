"""The worktree checks: every worktree of the repository (`git worktree list`), and
for each one whether each host's setup covers it and whether git's pre-commit hook
there is coord's guard.

Each worktree is asked on its own because a setup can be per worktree (a
project's settings file, git's per-worktree hooks directory): one covered
worktree says nothing about its siblings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coordd_apps.doctor.claude import claude_coverage
from coordd_apps.doctor.codex import TRUST_FIX, CodexAnswers, codex_coverage
from coordd_apps.doctor.findings import Finding, HostFailed, run_host


def git_worktrees(cwd: Path) -> list[Path] | None:
    """The worktrees of the repository holding `cwd` (None: not in a repository)."""
    try:
        done = run_host(["git", "worktree", "list", "--porcelain"], cwd, 15)
    except HostFailed:
        return None
    if done.returncode != 0:
        return None
    return [Path(line[9:]) for line in done.stdout.splitlines() if line.startswith("worktree ")]


def worktree_top(cwd: Path) -> Path:
    try:
        done = run_host(["git", "rev-parse", "--show-toplevel"], cwd, 15)
    except HostFailed:
        return cwd
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else cwd


def git_guard_coverage(tree: Path) -> tuple[bool, str]:
    """Whether the pre-commit hook git runs in worktree `tree` is coord's guard (or calls
    it): git resolves the hooks directory per worktree, so each one is asked."""
    try:
        done = run_host(
            ["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"], tree, 15
        )
    except HostFailed:
        return False, "git did not answer"
    hook = Path(done.stdout.strip()) / "pre-commit"
    try:
        text = hook.read_text(errors="replace")
    except OSError:
        return False, f"no pre-commit hook in {hook.parent}"
    if "hook pre-commit" in text and "coord" in text:
        return True, f"in {hook}"
    return False, f"{hook} does not run `coord hook pre-commit`"


def check_worktrees(
    cwd: Path,
    home: Path,
    worktrees: list[Path] | None,
    claude: bool,
    codex: tuple[CodexAnswers, bool] | None,
) -> list[Finding]:
    if worktrees is None:
        return [
            Finding(
                "worktrees", "worktrees", True, f"{cwd} is not in a git repository", skipped=True
            )
        ]
    findings = []
    for tree in worktrees:
        if not tree.is_dir():
            findings.append(
                Finding(
                    "worktrees",
                    str(tree),
                    True,
                    f"{tree}: missing on disk (git worktree prune)",
                    skipped=True,
                )
            )
            continue
        parts: list[str] = []
        fixes: list[str] = []
        ok = True
        data: dict[str, Any] = {"worktree": str(tree)}
        if claude:
            covered, how = claude_coverage(home, tree)
            parts.append(f"claude {'covered' if covered else 'NOT covered'} ({how})")
            ok &= covered
            data["claude"] = {"covered": covered, "how": how}
            if not covered:
                fixes.append("coord setup claude")
        if codex is not None:
            covered, how = codex_coverage(home, tree, *codex)
            parts.append(f"codex {'covered' if covered else 'NOT covered'} ({how})")
            ok &= covered
            data["codex"] = {"covered": covered, "how": how}
            if not covered:
                fixes.append(TRUST_FIX if "trusted" in how else "coord setup codex")
        guarded, where = git_guard_coverage(tree)
        parts.append(f"git guard {'on' if guarded else 'NOT on'} ({where})")
        data["git_guard"] = {"on": guarded, "how": where}
        if not guarded:
            ok = False
            fixes.append("coord setup git")
        findings.append(
            Finding(
                "worktrees",
                str(tree),
                ok,
                f"{tree}: {'; '.join(parts)}",
                "; ".join(fixes) or None,
                data=data,
            )
        )
    return findings
