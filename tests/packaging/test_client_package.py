"""The client ships on its own: msgspec only, trio optional, no daemon code. Its wheel
holds the three packages under clients/python/src (issue 45 item 2): the wire
(`coordd_wire`), the library (`coordd_client`) and the apps (`coordd_apps`)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
#: The client's three top-level packages, bottom up.
PACKAGES = ("coordd_wire", "coordd_client", "coordd_apps")


def top_level_imports(path: Path) -> set[str]:
    """The top-level packages a module imports (absolute imports only)."""
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    return imported


def test_client_modules_import_neither_the_daemon_nor_trio_outside_aio() -> None:
    """trio only in aio.py, the MCP bridge and `coord web`, the SDK (and pydantic) only in
    the bridge, Starlette, hypercorn and h11 (the webhooks' POST) only in `coord web`: each
    comes with the extra that needs it (`trio`, `mcp`, `web`)."""
    for path in (p for name in PACKAGES for p in (CLIENT / "src" / name).rglob("*.py")):
        in_bridge = path.parent.name == "mcp_bridge"
        in_web = path.parent.name == "web"
        imported = top_level_imports(path)
        assert "coordd" not in imported, f"{path.name} imports the daemon"
        if path.name != "aio.py" and not in_bridge and not in_web:
            assert "trio" not in imported, f"{path.name} needs trio; only aio.py may"
        if not in_bridge:
            assert not imported & {"mcp", "pydantic"}, f"{path.name} imports the MCP SDK"
        if not in_web:
            web_only = {"starlette", "hypercorn", "h11"}
            assert not imported & web_only, f"{path.name} imports the web extra"


def test_the_cli_and_the_daemon_never_load_the_mcp_sdk_or_psycopg() -> None:
    """The embedded daemon and the plain CLI stay trio + msgspec: the MCP SDK comes with
    `coord mcp`, psycopg with a `postgresql://` store only."""
    probe = (
        "import sys, coordd.daemon, coordd.cli, coordd_apps.cli, coordd_client.aio\n"
        "from coordd_apps.cli.registry import build_parser\n"
        "build_parser('coord')\n"
        "print(*(name in sys.modules for name in ('mcp', 'pydantic', 'psycopg', 'psycopg_pool')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["False", "False", "False", "False"]


def test_psycopg_is_imported_only_by_the_team_store() -> None:
    daemon = ROOT / "src" / "coordd"
    for path in daemon.rglob("*.py"):
        imported = top_level_imports(path)
        if imported & {"psycopg", "psycopg_pool"}:
            assert path.parent == daemon / "store" / "postgres", f"{path} imports psycopg"


def test_client_wheel_declares_msgspec_only_and_holds_only_the_client(tmp_path: Path) -> None:
    """The wheel of clients/python: the three packages and nothing else, msgspec its one
    hard dependency, and, installed alone, a `coord` that runs."""
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(CLIENT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if built.returncode != 0 and "hatchling" in built.stderr:
        pytest.skip("hatchling is not installed in this environment")
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("coordd_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names if n.endswith("METADATA"))
        scripts = {
            n.rpartition("/")[2]: archive.read(n).decode() for n in names if ".data/scripts/" in n
        }
    assert all(n.startswith((*(f"{p}/" for p in PACKAGES), "coordd_client-")) for n in names)
    assert {f"{p}/__init__.py" for p in PACKAGES} <= set(names), names
    # PEP 561: a user's type checker reads the packages' annotations (without the
    # marker mypy skips them as untyped, and a wrong argument to `claim` passes).
    assert {f"{p}/py.typed" for p in PACKAGES} <= set(names), names
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    hard = [r for r in requires if "extra ==" not in r]
    assert len(hard) == 1 and "msgspec" in hard[0], requires
    assert any("trio" in r and "extra == 'trio'" in r.replace('"', "'") for r in requires), requires
    assert any(r.startswith("Requires-Dist: mcp") and "extra == 'mcp'" in r.replace('"', "'")
               for r in requires), requires  # fmt: skip
    # `coord` is a script of the wheel's, not an installer's wrapper (which may import `re`
    # first): the installer points its first line at the environment's interpreter.
    assert list(scripts) == ["coord"], scripts
    assert scripts["coord"].startswith("#!python\n"), scripts["coord"]
    assert "from coordd_apps.entry import main" in scripts["coord"]  # `coord mcp`: the relay first
    assert "import re" not in scripts["coord"]
    target = tmp_path / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    probe = (
        "import coordd_wire, coordd_client, coordd_apps.entry\n"
        "print(*(m.__file__ for m in (coordd_wire, coordd_client, coordd_apps.entry)))\n"
        "raise SystemExit(coordd_apps.entry.main(['--help']))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    files = ran.stdout.splitlines()[0].split()
    assert all(f.startswith(str(target)) for f in files), files  # the wheel's, not the tree's
    assert "usage: coord" in ran.stdout
    # The installed script, its first line rewritten by pip, runs the wheel's `coord`.
    script = target / "bin" / "coord"
    assert script.read_text().startswith(f"#!{sys.executable}"), script.read_text()[:200]
    by_script = subprocess.run(
        [str(script), "--help"], env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert by_script.returncode == 0 and "usage: coord" in by_script.stdout, by_script.stderr


def test_importing_the_daemon_loads_the_wire_package_but_no_client() -> None:
    """The daemon imports `coordd_wire` only, never the library or an app."""
    probe = (
        "import sys, coordd.daemon, coordd.cli\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('coordd_'))\n"
        "print(' '.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert "coordd_wire.framing" in out  # the probe sees what it claims to
    outside = [m for m in out if m.split(".")[0] != "coordd_wire"]
    assert outside == [], outside


def test_the_package_exports_every_public_name_it_lists() -> None:
    import coordd_client

    for name in coordd_client.__all__:
        assert getattr(coordd_client, name).__name__ == name
    with pytest.raises(AttributeError):
        _ = coordd_client.NoSuchThing


def test_the_face_is_eager_but_for_the_trio_client() -> None:
    """`import coordd_client` loads its names at once, no app, and not trio: the trio
    client (`AsyncClient`, the `trio` extra) is loaded on first use."""
    probe = (
        "import sys, coordd_client\n"
        "print('trio' in sys.modules, 'coordd_client.client' in sys.modules,"
        " any(m.startswith('coordd_apps') for m in sys.modules))\n"
        "coordd_client.AsyncClient\n"
        "print('trio' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["False", "True", "False", "True"]
