"""The coding tools on a real temporary workspace and real processes."""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.runtime.tools import Tool, ToolContext, ToolResult
from ctxrelay.runtime.tools.coding import (
    BASH_OUTPUT_MAX_CHARS,
    GREP_FILE_MAX_BYTES,
    LIST_MAX_ENTRIES,
    Bash,
    EditFile,
    Grep,
    ListFiles,
    coding_tools,
)


def _ctx(ws: Path, confirm: Callable[[str], Awaitable[bool]] | None = None) -> ToolContext:
    extra: dict[str, Any] = {} if confirm is None else {"confirm": confirm}
    return ToolContext(
        workspace=ws,
        store=None,  # type: ignore[arg-type] # the coding tools never touch the store
        session_id="s",
        window_id="w",
        window_index=1,
        call_id="c",
        **extra,
    )


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` has died within ``within`` seconds: waits on a pidfd, which becomes
    readable the moment the process exits (reaped or still a zombie), so nothing polls."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within)[0])
    finally:
        os.close(fd)


def run(tool: Any, args: dict[str, Any], ws: Path, **kwargs: Any) -> ToolResult:
    result: ToolResult = asyncio.run(tool.run(args, _ctx(ws, **kwargs)))
    return result


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "main.py").write_text("def main():\n    return 1\n\nmain()\n")
    (root / "src" / "pkg" / "util.py").write_text("VALUE = 1\nOTHER = 1\n")
    (root / "README.md").write_text("# Demo\nrun main\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: main\n")
    return root


def test_factory_satisfies_the_tool_protocol() -> None:
    tools = coding_tools()
    assert [t.name for t in tools] == ["edit_file", "list_files", "grep", "bash"]
    for tool in tools:
        assert isinstance(tool, Tool)
        assert tool.input_schema["type"] == "object"
    assert {t.name: t.replay_safe for t in tools} == {
        "edit_file": False,
        "list_files": True,
        "grep": True,
        "bash": False,
    }


# -- edit_file ---------------------------------------------------------------------------


def test_edit_replaces_a_unique_string(ws: Path) -> None:
    result = run(
        EditFile(),
        {"path": "src/pkg/main.py", "old_string": "return 1", "new_string": "return 2"},
        ws,
    )
    assert not result.is_error, result.content
    assert result.content == "edited src/pkg/main.py: replaced 1 occurrence"
    assert (ws / "src/pkg/main.py").read_text() == "def main():\n    return 2\n\nmain()\n"


def test_edit_refuses_an_ambiguous_string_unless_replace_all(ws: Path) -> None:
    args = {"path": "src/pkg/util.py", "old_string": "= 1", "new_string": "= 2"}
    result = run(EditFile(), args, ws)
    assert result.is_error
    assert "occurs 2 times" in result.content
    assert (ws / "src/pkg/util.py").read_text() == "VALUE = 1\nOTHER = 1\n"
    result = run(EditFile(), {**args, "replace_all": True}, ws)
    assert result.content.endswith("replaced 2 occurrences")
    assert (ws / "src/pkg/util.py").read_text() == "VALUE = 2\nOTHER = 2\n"


def test_edit_errors(ws: Path) -> None:
    missing = run(
        EditFile(), {"path": "src/pkg/main.py", "old_string": "nope", "new_string": "x"}, ws
    )
    assert missing.is_error
    assert "not found" in missing.content
    outside = run(EditFile(), {"path": "../escape.py", "old_string": "a", "new_string": "b"}, ws)
    assert outside.is_error
    assert "outside the workspace" in outside.content
    absent = run(EditFile(), {"path": "nofile.py", "old_string": "a", "new_string": "b"}, ws)
    assert absent.is_error
    assert "does not exist" in absent.content
    same = run(EditFile(), {"path": "README.md", "old_string": "a", "new_string": "a"}, ws)
    assert same.is_error


def test_edit_with_empty_old_string_creates_a_file(ws: Path) -> None:
    result = run(EditFile(), {"path": "new/mod.py", "old_string": "", "new_string": "X = 1\n"}, ws)
    assert not result.is_error
    assert (ws / "new/mod.py").read_text() == "X = 1\n"
    again = run(EditFile(), {"path": "new/mod.py", "old_string": "", "new_string": "Y"}, ws)
    assert again.is_error
    assert (ws / "new/mod.py").read_text() == "X = 1\n"


# -- list_files --------------------------------------------------------------------------


def test_list_files_skips_vcs_and_filters(ws: Path) -> None:
    listing = run(ListFiles(), {}, ws).content.splitlines()
    assert listing == ["README.md", "src/", "src/pkg/", "src/pkg/main.py", "src/pkg/util.py"]
    assert run(ListFiles(), {"pattern": "*.py"}, ws).content.splitlines() == [
        "src/pkg/main.py",
        "src/pkg/util.py",
    ]
    assert run(ListFiles(), {"path": "src/pkg"}, ws).content.splitlines() == ["main.py", "util.py"]
    assert run(ListFiles(), {"path": ".."}, ws).is_error
    assert run(ListFiles(), {"path": "README.md"}, ws).is_error


def test_list_files_is_bounded(tmp_path: Path) -> None:
    for i in range(LIST_MAX_ENTRIES + 20):
        (tmp_path / f"f{i:04d}.txt").write_text("")
    result = run(ListFiles(), {}, tmp_path)
    lines = result.content.splitlines()
    assert len(lines) == LIST_MAX_ENTRIES + 1
    assert "cut at" in lines[-1]
    assert result.metadata["cut"] is True


# -- grep --------------------------------------------------------------------------------


def test_grep_finds_lines_with_numbers(ws: Path) -> None:
    result = run(Grep(), {"pattern": r"main\(\)"}, ws)
    assert result.content.splitlines() == [
        "src/pkg/main.py:1: def main():",
        "src/pkg/main.py:4: main()",
    ]
    assert (
        run(Grep(), {"pattern": "demo", "ignore_case": True}, ws).content == "README.md:1: # Demo"
    )
    assert run(Grep(), {"pattern": "main", "glob": "*.md"}, ws).content == "README.md:2: run main"
    assert run(Grep(), {"pattern": "ref:"}, ws).content == "no matches"  # .git skipped
    assert (
        run(Grep(), {"pattern": "VALUE", "path": "src/pkg/util.py"}, ws).content
        == "src/pkg/util.py:1: VALUE = 1"
    )


def test_grep_errors_and_skips(ws: Path) -> None:
    assert "invalid regular expression" in run(Grep(), {"pattern": "("}, ws).content
    assert run(Grep(), {"pattern": "x", "path": "../.."}, ws).is_error
    (ws / "blob.bin").write_bytes(b"main\x00\x01")
    (ws / "big.log").write_bytes(b"main\n" * (GREP_FILE_MAX_BYTES // 5 + 1))
    result = run(Grep(), {"pattern": "^main$"}, ws)
    assert "blob.bin" not in result.content
    assert "big.log" not in result.content
    assert "1 file(s) over 2 MiB skipped" in result.content


def test_grep_outside_symlink_is_not_followed(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password=main\n")
    (ws / "link.txt").symlink_to(secret)
    assert "password" not in run(Grep(), {"pattern": "password"}, ws).content


# -- bash --------------------------------------------------------------------------------


def test_bash_runs_in_the_workspace(ws: Path) -> None:
    result = run(Bash(), {"command": "pwd; ls src/pkg; echo oops >&2"}, ws)
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[0] == "exit code 0"
    assert lines[1] == str(ws)
    assert "oops" in lines  # stderr is merged
    assert result.metadata["exit_code"] == 0


def test_bash_nonzero_exit_is_an_error(ws: Path) -> None:
    result = run(Bash(), {"command": "exit 3"}, ws)
    assert result.is_error
    assert result.content == "exit code 3 (no output)"


def test_bash_output_is_bounded_head_and_tail(ws: Path) -> None:
    result = run(
        Bash(), {"command": "echo START; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END"}, ws
    )
    assert len(result.content) < BASH_OUTPUT_MAX_CHARS + 200
    assert "START" in result.content
    assert result.content.rstrip().endswith("END")
    assert "bytes of output cut" in result.content
    assert result.metadata["output_bytes"] > 200_000


def test_bash_timeout_kills_the_process_group(ws: Path) -> None:
    started = time.monotonic()
    result = run(Bash(), {"command": "sleep 30 & echo child $!; wait", "timeout_s": 0.5}, ws)
    assert time.monotonic() - started < 10
    assert result.is_error
    assert result.metadata["timed_out"] is True
    assert result.content.startswith("timed out after 0.5 s")
    child = int(result.content.split("child ")[1].split()[0])
    assert gone(child)  # the background child died with its group


def test_bash_timeout_kills_grandchildren_that_let_go_of_the_output(ws: Path) -> None:
    # A grandchild in a nested subshell with its output sent elsewhere does not hold the
    # pipe open, so only the process-group kill (not the pipe closing) can stop it.
    command = "(sleep 30 >/dev/null 2>&1 & echo grandchild $! > gc); sleep 30"
    result = run(Bash(), {"command": command, "timeout_s": 0.5}, ws)
    assert result.metadata["timed_out"] is True
    grandchild = int((ws / "gc").read_text().split()[1])
    assert gone(grandchild)


def test_bash_asks_first_and_respects_a_no(ws: Path) -> None:
    asked: list[str] = []

    async def no(description: str) -> bool:
        asked.append(description)
        return False

    result = run(Bash(), {"command": "touch made-it"}, ws, confirm=no)
    assert result.is_error
    assert "declined" in result.content
    assert asked == [f"bash in {ws}: touch made-it"]
    assert not (ws / "made-it").exists()


def test_bash_cancellation_kills_the_command(ws: Path) -> None:
    async def scenario() -> None:
        task = asyncio.create_task(
            Bash().run({"command": "echo $$ > pid; exec sleep 30"}, _ctx(ws))
        )
        for _ in range(100):
            await asyncio.sleep(0.05)
            if (ws / "pid").exists() and (ws / "pid").read_text().strip():
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert gone(int((ws / "pid").read_text()))


def test_bash_bad_input(ws: Path) -> None:
    assert run(Bash(), {"command": ""}, ws).is_error
    assert run(Bash(), {"command": "true", "timeout_s": -1}, ws).is_error
