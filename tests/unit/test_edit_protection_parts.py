"""The pure parts of issue 33's edit protection: a path as its own literal pattern, the
repository's `.coord/config.json` as the hooks read it, and (issue 43) what a guard does
when it cannot ask the board."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from coordd.store.edits import literal_pattern
from coordd_apps.hooks.files import (
    CONFIG_FILE,
    Config,
    content_hash,
    read_config,
    repository_config,
)
from coordd_apps.hooks.guard import STRICT_ENV, unreachable_policy
from coordd_apps.wording.advice import left
from coordd_wire.patterns import parse


@pytest.mark.parametrize("path", ["src/x.py", "src/[ab].py", "a/*/b?.txt", "!bang.md", "we\\ird"])
def test_a_paths_pattern_covers_that_path_and_no_sibling(path: str) -> None:
    text = literal_pattern(path)
    assert text is not None
    pattern = parse(text)
    assert pattern.is_literal
    assert pattern.covers(path) and pattern.covers(path + "/under")
    assert not pattern.covers(path + "x")


def test_a_path_too_long_for_a_pattern_gets_none() -> None:
    assert literal_pattern("a/" * 600 + "b") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, Config()),
        ('{"auto_reserve": false}', Config(auto_reserve=False)),
        ('{"auto_reserve": true, "auto_reserve_ttl_s": 60}', Config(ttl_s=60.0)),
        ('{"auto_reserve": "no"}', Config()),  # only false switches it off
        ('{"auto_reserve_ttl_s": true}', Config()),
        ('{"unreachable": "deny"}', Config(unreachable="deny")),
        ('{"unreachable": true}', Config()),  # only "deny" refuses
        ("[false]", Config()),
        ("not json", Config()),
    ],
)
def test_the_repository_config(tmp_path: Path, text: str | None, expected: Config) -> None:
    if text is not None:
        (tmp_path / CONFIG_FILE).parent.mkdir()
        (tmp_path / CONFIG_FILE).write_text(text)
    assert repository_config(str(tmp_path)) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, None),
        ('{"auto_reserve": false, "auto_reserve_ttl_s": 60, "other": 1}', None),
        ('{"auto_reserve": "no"}', "auto_reserve must be true or false"),
        ('{"auto_reserve_ttl_s": "1h"}', "auto_reserve_ttl_s must be a number of seconds"),
        ('{"unreachable": "refuse"}', 'unreachable must be "allow" or "deny"'),
        ('{"unreachable": ["deny"]}', 'unreachable must be "allow" or "deny"'),
        ("[false]", "is not a JSON object"),
        ("{not json", "is not JSON"),
        ('{"pad": "' + "x" * 5000 + '"}', "is over 4096 bytes"),
        ("[" * 3000, "is nested too deep"),
    ],
)
def test_why_a_config_is_passed_over(tmp_path: Path, text: str | None, problem: str | None) -> None:
    """What `coord doctor` says of the file the hooks read silently."""
    if text is not None:
        (tmp_path / CONFIG_FILE).parent.mkdir()
        (tmp_path / CONFIG_FILE).write_text(text)
    config, said = read_config(str(tmp_path))
    assert config == repository_config(str(tmp_path))
    if problem is None:
        assert said is None
    else:
        assert said is not None and problem in said


@pytest.mark.parametrize(
    ("files", "strict", "deny", "source"),
    [
        ([None], None, False, ""),  # the default: a hook never bricks an agent
        (["allow"], None, False, ""),
        (["deny"], None, True, "says"),
        ([None, "deny"], None, True, "b/.coord/config.json"),  # any board that asks
        (["deny"], "0", False, "COORD_GUARD_STRICT=0"),  # the environment wins
        (["allow"], "1", True, "COORD_GUARD_STRICT=1"),
        (["deny"], "yes", True, "says"),  # neither 0 nor 1: the file decides
    ],
)
def test_what_decides_when_the_board_cannot_be_asked(
    tmp_path: Path, files: list[str | None], strict: str | None, deny: bool, source: str
) -> None:
    projects = []
    for name, value in zip("ab", files, strict=False):
        project = tmp_path / name
        projects.append(str(project))
        if value is not None:
            (project / CONFIG_FILE).parent.mkdir(parents=True)
            (project / CONFIG_FILE).write_text(json.dumps({"unreachable": value}))
    environ = {} if strict is None else {STRICT_ENV: strict}
    policy = unreachable_policy(projects, environ)
    assert policy.deny is deny and source in policy.source


def test_a_config_that_is_not_a_regular_file_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).parent.mkdir()
    os.mkfifo(tmp_path / CONFIG_FILE)  # reading it would block the hook
    assert repository_config(str(tmp_path)) == Config()


def test_content_hashes(tmp_path: Path) -> None:
    file = tmp_path / "a"
    assert content_hash(str(file)) == ""  # no such file
    file.write_text("a")
    first = content_hash(str(file))
    assert len(first) == 64 and content_hash(str(file)) == first
    file.write_text("b")
    assert content_hash(str(file)) != first
    os.mkfifo(tmp_path / "fifo")
    assert content_hash(str(tmp_path / "fifo")) == ""


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(-30, "just now"), (0, "in under a minute"), (29, "in under a minute"), (31, "in 1 min"),
     (1800, "in 30 min"), (7100, "in 118 min"), (7260, "in 2 h"), (179 * 60, "in 3 h"),
     (-1800, "30 min ago"), (3 * 86400, "in 3 d")],
)  # fmt: skip
def test_a_deny_says_how_long_the_reservation_lasts(seconds: float, said: str) -> None:
    now = 1_790_000_000.0  # 2026-09-21T13:33:20Z
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(now + seconds))
    assert left(at, now) == said
