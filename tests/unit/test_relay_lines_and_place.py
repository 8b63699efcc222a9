"""The relay's sans-IO parts: the bounded line splitter and the shared server's name."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from coordd_apps.mcp_relay.lines import OVERLONG, OVERLONG_ANSWER, LineSplitter, error_line
from coordd_apps.mcp_relay.place import PACKAGE_DIRS, code_stamp, place_for


def test_lines_are_split_across_chunks_and_blank_ones_skipped() -> None:
    splitter = LineSplitter(max_line_bytes=16)
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b"1}\n\n  \n{}\n{") == [b'{"a":1}', b"{}"]
    assert splitter.end() == [b"{"]
    assert splitter.end() == []


def test_an_overlong_line_is_reported_once_and_never_held() -> None:
    splitter = LineSplitter(max_line_bytes=8)
    assert splitter.feed(b"12345") == []
    assert splitter.feed(b"6789") == [OVERLONG]  # reported as soon as it passes the bound
    assert splitter.feed(b"x" * 1000) == []  # the rest is dropped as it arrives
    assert len(splitter._partial) == 0
    assert splitter.feed(b"tail\nok\n") == [b"ok"]
    assert splitter.feed(b"123456789\n") == [OVERLONG]
    assert splitter.feed(b"12345678\n") == [b"12345678"]  # exactly the bound is kept


def test_an_overlong_last_line_is_not_returned_at_the_end() -> None:
    splitter = LineSplitter(max_line_bytes=4)
    assert splitter.feed(b"123456") == [OVERLONG]
    assert splitter.end() == []


@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8), st.data())
def test_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    splitter = LineSplitter(max_line_bytes=16)
    out: list[bytes | None] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        out += splitter.feed(stream[start:end])
    expected = [line if len(line) <= 16 else OVERLONG for line in lines if line.strip()]
    assert out == expected


def test_the_error_answers_are_json_rpc_with_id_null() -> None:
    for line in (OVERLONG_ANSWER, error_line(-32700, "Parse error")):
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        answer = json.loads(line)
        assert answer["jsonrpc"] == "2.0" and answer["id"] is None
        assert isinstance(answer["error"]["code"], int)


def test_the_stamp_changes_with_the_code_and_the_home(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    module = package / "sub" / "m.py"
    module.write_text("x = 1\n")
    other = tmp_path / "other"  # a sibling package the server runs too
    other.mkdir()
    (other / "o.py").write_text("o = 1\n")
    both = (str(package), str(other))
    first = code_stamp("/home/a", both)
    assert first == code_stamp("/home/a", both)
    assert first != code_stamp("/home/b", both)
    module.write_text("x = 22\n")  # an upgrade: another size
    second = code_stamp("/home/a", both)
    assert second != first
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # same size
    third = code_stamp("/home/a", both)
    assert third != second
    (other / "o.py").write_text("o = 22\n")  # the sibling's upgrade alone
    assert code_stamp("/home/a", both) != third
    assert len(first) == 16 and int(first, 16) >= 0


def test_an_installed_packages_stamp_changes_as_an_installer_changes_it(tmp_path: Path) -> None:
    """Under `site-packages` the stamp is taken from the directories: an installer takes
    a file away and writes it anew (pip unlinks, then writes), which each changes the
    directory it is in, deep or not; a file's own bytes are not looked at."""
    package = tmp_path / "lib" / "site-packages" / "pkg"
    (package / "sub").mkdir(parents=True)
    module = package / "sub" / "m.py"
    module.write_text("x = 1\n")
    for directory in (package, package / "sub"):  # installed long ago (the clock is coarse)
        os.utime(directory, ns=(0, 0))
    dirs = (str(package),)
    first = code_stamp("/home/a", dirs)
    assert first == code_stamp("/home/a", dirs) and first != code_stamp("/home/b", dirs)
    os.unlink(module)  # an upgrade of one module, as pip writes it
    module.write_text("x = 22\n")
    second = code_stamp("/home/a", dirs)
    assert second != first
    os.utime(package, ns=(0, 0))
    (package / "new.py").write_text("n = 1\n")  # a module the new version adds
    assert code_stamp("/home/a", dirs) != second


def test_the_stamp_covers_the_wire_the_library_and_the_apps() -> None:
    """A server runs all three packages: an upgrade of any one is another stamp."""
    import coordd_apps
    import coordd_client
    import coordd_wire

    covered = {Path(d) for d in PACKAGE_DIRS}
    packages = (coordd_wire, coordd_client, coordd_apps)
    assert covered == {Path(str(p.__file__)).parent for p in packages}


def test_the_shared_socket_sits_beside_the_daemons() -> None:
    place = place_for("/run/user/1000/coordd/coordd.sock", "/home/a")
    assert place.directory == "/run/user/1000/coordd"
    assert place.socket == f"/run/user/1000/coordd/mcp-{place.stamp}.sock"
    assert place.lock.endswith(".lock") and place.log.endswith(".log")
