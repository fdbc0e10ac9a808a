from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrelay.runtime.tools import (
    NOTES_MAX_BYTES,
    READ_FILE_MAX_BYTES,
    ReadFile,
    ToolContext,
    ToolResult,
    WorkspaceError,
    WriteFile,
    atomic_write,
    resolve_in_workspace,
)
from ctxrelay.store import Store


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(
        workspace=workspace,
        store=_no_store(),
        session_id="s",
        window_id="w",
        window_index=1,
        call_id="c",
    )


def _no_store() -> Store:
    # File tools never touch the store; a None in its place proves it.
    return None  # type: ignore[return-value]


def _run(tool: Any, args: dict[str, Any], ws: Path) -> ToolResult:
    result: ToolResult = asyncio.run(tool.run(args, _ctx(ws)))
    return result


def test_write_then_read_inside_the_workspace(tmp_path: Path) -> None:
    out = _run(WriteFile(), {"path": "src/a.py", "content": "print(1)\n"}, tmp_path)
    assert not out.is_error
    assert out.content == "wrote 9 bytes to src/a.py"
    assert (tmp_path / "src/a.py").read_text() == "print(1)\n"
    back = _run(ReadFile(), {"path": "src/a.py"}, tmp_path)
    assert back.content == "print(1)\n"


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../x", "", "a\x00b"])
def test_paths_outside_the_workspace_are_refused(tmp_path: Path, path: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for tool, args in ((ReadFile(), {"path": path}), (WriteFile(), {"path": path, "content": ""})):
        out = _run(tool, args, ws)
        assert out.is_error
    assert not (tmp_path / "x").exists()


def test_a_symlink_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path / "secret", ws / "link")
    assert _run(ReadFile(), {"path": "link"}, ws).is_error
    assert _run(WriteFile(), {"path": "link", "content": "x"}, ws).is_error
    assert (tmp_path / "secret").read_text() == "s"


def test_notes_write_confirms_bytes_and_the_cap(tmp_path: Path) -> None:
    out = _run(WriteFile(), {"path": "context-notes.md", "content": "n" * 10}, tmp_path)
    assert "notes checkpoint confirmed" in out.content
    assert f"{NOTES_MAX_BYTES:,} bytes" in out.content
    assert out.metadata["notes"] is True
    big = _run(WriteFile(), {"path": "context-notes.md", "content": "n" * 9000}, tmp_path)
    assert "only the first 8,192 bytes" in big.content


def test_read_is_cut_at_its_cap(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"a" * (READ_FILE_MAX_BYTES + 10))
    out = _run(ReadFile(), {"path": "big"}, tmp_path)
    assert out.metadata["cut"] is True
    assert out.content.endswith(f"[read_file: cut at {READ_FILE_MAX_BYTES:,} bytes]")


def test_missing_and_directory_paths_are_errors(tmp_path: Path) -> None:
    assert "does not exist" in _run(ReadFile(), {"path": "nope"}, tmp_path).content
    (tmp_path / "d").mkdir()
    assert _run(ReadFile(), {"path": "d"}, tmp_path).is_error
    assert _run(WriteFile(), {"path": "d", "content": "x"}, tmp_path).is_error
    assert _run(WriteFile(), {"path": "f", "content": 3}, tmp_path).is_error


def test_atomic_write_leaves_no_temp_file_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, b"old")
    with pytest.raises(TypeError):
        atomic_write(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


@pytest.fixture(scope="module")
def resolve_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One workspace for every hypothesis example (a function-scoped ``tmp_path`` would
    be shared across examples anyway), under pytest's temp root and removed after."""
    ws = tmp_path_factory.mktemp("resolve-ws").resolve()
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def test_atomic_write_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o755)
    atomic_write(script, b"#!/bin/sh\necho hi\n")
    assert _mode(script) == 0o755
    shared = tmp_path / "shared.txt"
    shared.write_bytes(b"a")
    shared.chmod(0o640)
    atomic_write(shared, b"b")
    assert _mode(shared) == 0o640


def test_atomic_write_gives_a_new_file_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.txt", b"x")
    finally:
        os.umask(old)
    # As open(..., "w") would have made it, not mkstemp's private 0600.
    assert _mode(tmp_path / "new.txt") == 0o640


def test_write_and_edit_tools_keep_the_executable_bit(tmp_path: Path) -> None:
    from ctxrelay.runtime.tools.coding import EditFile

    script = tmp_path / "build.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o755)
    edit = {"path": "build.sh", "old_string": "one", "new_string": "two"}
    assert not _run(EditFile(), edit, tmp_path).is_error
    assert _mode(script) == 0o755
    assert not _run(WriteFile(), {"path": "build.sh", "content": "#!/bin/sh\n"}, tmp_path).is_error
    assert _mode(script) == 0o755
    assert script.read_text() == "#!/bin/sh\n"


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30))
def test_resolve_never_escapes(resolve_ws: Path, name: str) -> None:
    ws = resolve_ws
    try:
        target = resolve_in_workspace(ws, name)
    except WorkspaceError:
        return
    assert target == ws or ws in target.parents
