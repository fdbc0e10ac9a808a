"""The coding tools of ``ctxrelay run`` with a real model: ``edit_file``, ``list_files``,
``grep`` and ``bash``. All are confined to the session's workspace and bounded so one
call cannot flood the window; ``bash`` asks before each command (``ctx.confirm``; the
CLI's ``--yes`` approves all), runs with a timeout in its own process group (killed
whole on timeout or Ctrl-C), and returns the head and tail of long output.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import signal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

# The tools' bounds are owned by ``ctxrelay.budget.bounds``; re-exported here.
from ctxrelay.budget.bounds import (
    BASH_OUTPUT_MAX_CHARS,
    BASH_TIMEOUT_DEFAULT_S,
    BASH_TIMEOUT_MAX_S,
    GREP_FILE_MAX_BYTES,
    GREP_MAX_MATCHES,
    LIST_MAX_ENTRIES,
    RESULT_MAX_CHARS,
)
from ctxrelay.runtime.tools._base import Tool, ToolContext, ToolResult, object_schema, string
from ctxrelay.runtime.tools.files import atomic_write, display_path, target_of

__all__ = [
    "BASH_OUTPUT_MAX_CHARS",
    "BASH_TIMEOUT_DEFAULT_S",
    "BASH_TIMEOUT_MAX_S",
    "GREP_FILE_MAX_BYTES",
    "LIST_MAX_ENTRIES",
    "RESULT_MAX_CHARS",
    "Bash",
    "EditFile",
    "Grep",
    "ListFiles",
    "coding_tools",
]

# Directories no coding question needs walked: VCS data, environments, caches.
SKIP_DIRS: Final = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", "dist", "build", ".idea"}
)  # fmt: skip


def _walk(root: Path) -> Iterator[tuple[Path, bool]]:
    """(path, is_dir) under ``root`` in sorted order, skipping :data:`SKIP_DIRS` and not
    following directory symlinks (they could lead out of the workspace or loop)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in SKIP_DIRS:
            continue
        yield Path(entry.path), is_dir
        if is_dir:
            yield from _walk(Path(entry.path))


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[{what} cut at {limit:,} characters; narrow the request]"


@dataclass(frozen=True, slots=True)
class EditFile:
    """Replace an exact string in a file of the workspace, atomically."""

    name: str = "edit_file"
    description: str = (
        "Edit a text file of the workspace: replace `old_string` (exact text, including "
        "whitespace) with `new_string`. `old_string` must occur exactly once unless "
        "`replace_all` is true. Read the file first. An empty `old_string` creates a new "
        "file with `new_string` as its content."
    )
    replay_safe: bool = False  # re-running a replace_all that grows the text would repeat it

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {
                "path": string("file to edit"),
                "old_string": string("exact text to replace"),
                "new_string": string("replacement text"),
                "replace_all": {"type": "boolean", "description": "replace every occurrence"},
            },
            "path",
            "old_string",
            "new_string",
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return ToolResult("edit_file: old_string and new_string must be strings", True)
        if old == new:
            return ToolResult("edit_file: old_string and new_string are the same", True)
        target = target_of("edit_file", args, ctx)
        if isinstance(target, ToolResult):
            return target
        shown = display_path(ctx.workspace, target)
        if old == "":
            if target.exists():
                return ToolResult(
                    f"edit_file: {shown} exists; give the old_string to replace", True
                )
            atomic_write(target, new.encode("utf-8"))
            return ToolResult(
                f"created {shown} ({len(new.encode()):,} bytes)", metadata={"path": shown}
            )
        try:
            text = target.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return ToolResult(f"edit_file: {shown} does not exist", is_error=True)
        except IsADirectoryError:
            return ToolResult(f"edit_file: {shown} is a directory", is_error=True)
        except UnicodeDecodeError:
            return ToolResult(f"edit_file: {shown} is not UTF-8 text", is_error=True)
        except OSError as exc:
            return ToolResult(f"edit_file: cannot read {shown}: {exc.strerror}", is_error=True)
        count = text.count(old)
        if count == 0:
            return ToolResult(
                f"edit_file: old_string not found in {shown}; read the file and copy the "
                "text exactly",
                is_error=True,
            )
        if count > 1 and not args.get("replace_all"):
            return ToolResult(
                f"edit_file: old_string occurs {count} times in {shown}; add context to make "
                "it unique, or set replace_all",
                is_error=True,
            )
        updated = text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1)
        try:
            atomic_write(target, updated.encode("utf-8"))
        except OSError as exc:
            return ToolResult(f"edit_file: cannot write {shown}: {exc.strerror}", is_error=True)
        replaced = count if args.get("replace_all") else 1
        return ToolResult(
            f"edited {shown}: replaced {replaced} occurrence{'s' if replaced > 1 else ''}",
            metadata={"path": shown, "replaced": replaced},
        )


@dataclass(frozen=True, slots=True)
class ListFiles:
    """List the files under a directory of the workspace."""

    name: str = "list_files"
    description: str = (
        "List files under a directory of the workspace (recursive; directories end in "
        f"'/'). `pattern` is a glob on the relative path (e.g. '*.py', 'src/**/test_*'). "
        f"At most {LIST_MAX_ENTRIES} entries; VCS, virtualenv and cache directories are "
        "skipped."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {"path": string("directory (default: workspace)"), "pattern": string("glob filter")}
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        root = target_of("list_files", args, ctx, default=".")
        if isinstance(root, ToolResult):
            return root
        if not root.is_dir():
            return ToolResult(
                f"list_files: {display_path(ctx.workspace, root)} is not a directory", True
            )
        pattern = args.get("pattern")
        if pattern is not None and not isinstance(pattern, str):
            return ToolResult("list_files: pattern must be a string", is_error=True)
        return await asyncio.to_thread(self._list, root, pattern, ctx)

    @staticmethod
    def _list(root: Path, pattern: str | None, ctx: ToolContext) -> ToolResult:
        lines: list[str] = []
        more = False
        for path, is_dir in _walk(root):
            rel = str(path.relative_to(root))
            if pattern and not (
                fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern)
            ):
                continue
            if len(lines) >= LIST_MAX_ENTRIES:
                more = True
                break
            lines.append(rel + ("/" if is_dir else ""))
        if not lines:
            return ToolResult(
                f"no files under {display_path(ctx.workspace, root)}"
                + (f" match {pattern!r}" if pattern else "")
            )
        text = "\n".join(lines)
        if more:
            text += f"\n[list cut at {LIST_MAX_ENTRIES} entries; give a path or a pattern]"
        return ToolResult(
            _cut(text, RESULT_MAX_CHARS, "list"), metadata={"entries": len(lines), "cut": more}
        )


@dataclass(frozen=True, slots=True)
class Grep:
    """Search the workspace's text files for a regular expression."""

    name: str = "grep"
    description: str = (
        "Search text files of the workspace for a regular expression (Python syntax). "
        "Returns 'path:line: text' for each match. `path` limits the search to a file or "
        "directory, `glob` to file names (e.g. '*.py'). At most "
        f"{GREP_MAX_MATCHES} matches."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {
                "pattern": string("regular expression"),
                "path": string("file or directory to search"),
                "glob": string("file name filter, e.g. '*.py'"),
                "ignore_case": {"type": "boolean"},
            },
            "pattern",
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            return ToolResult("grep: pattern must be a non-empty string", is_error=True)
        try:
            regex = re.compile(pattern, re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            return ToolResult(f"grep: invalid regular expression: {exc}", is_error=True)
        root = target_of("grep", args, ctx, default=".")
        if isinstance(root, ToolResult):
            return root
        glob = args.get("glob")
        if glob is not None and not isinstance(glob, str):
            return ToolResult("grep: glob must be a string", is_error=True)
        return await asyncio.to_thread(self._search, regex, root, glob, ctx)

    @staticmethod
    def _search(
        regex: re.Pattern[str], root: Path, glob: str | None, ctx: ToolContext
    ) -> ToolResult:
        files = [root] if root.is_file() else [p for p, d in _walk(root) if not d]
        workspace = ctx.workspace.resolve()
        hits: list[str] = []
        skipped = 0
        more = False
        for path in files:
            if glob and not fnmatch.fnmatch(path.name, glob):
                continue
            try:
                if path.is_symlink() and workspace not in path.resolve().parents:
                    continue
                if path.stat().st_size > GREP_FILE_MAX_BYTES:
                    skipped += 1
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue  # binary
            rel = display_path(ctx.workspace, path)
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if regex.search(line):
                    if len(hits) >= GREP_MAX_MATCHES:
                        more = True
                        break
                    hits.append(f"{rel}:{number}: {line[:300]}")
            if more:
                break
        if not hits:
            text = "no matches"
        else:
            text = "\n".join(hits)
            if more:
                text += f"\n[grep stopped at {GREP_MAX_MATCHES} matches; narrow the search]"
        if skipped:
            text += f"\n[{skipped} file(s) over {GREP_FILE_MAX_BYTES // (1024 * 1024)} MiB skipped]"
        return ToolResult(
            _cut(text, RESULT_MAX_CHARS, "grep output"),
            metadata={"matches": len(hits), "cut": more, "skipped_large": skipped},
        )


class _Bounded:
    """Keeps the first and last halves of a stream of bytes, counting the rest."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        if self.total <= len(self.head) + len(self.tail):
            return head + self.tail.decode("utf-8", "replace")
        dropped = self.total - len(self.head) - len(self.tail)
        return (
            head
            + f"\n[… {dropped:,} bytes of output cut …]\n"
            + self.tail.decode("utf-8", "replace")
        )


@dataclass(frozen=True, slots=True)
class Bash:
    """Run a shell command in the workspace, with a timeout and bounded output."""

    name: str = "bash"
    description: str = (
        "Run a shell command (bash -c) in the workspace directory and return its exit code "
        "and combined stdout/stderr. `timeout_s` defaults to "
        f"{BASH_TIMEOUT_DEFAULT_S:g} s (at most {BASH_TIMEOUT_MAX_S:g}); output longer than "
        f"{BASH_OUTPUT_MAX_CHARS:,} characters keeps its start and end. The user may decline "
        "a command. No input is available (stdin is empty): do not run interactive programs."
    )
    replay_safe: bool = False  # a command may have had effects before a crash

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {
                "command": string("the command line"),
                "timeout_s": {"type": "number", "description": "seconds before it is killed"},
            },
            "command",
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult("bash: command must be a non-empty string", is_error=True)
        timeout = args.get("timeout_s", BASH_TIMEOUT_DEFAULT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            return ToolResult("bash: timeout_s must be a positive number of seconds", True)
        timeout = min(float(timeout), BASH_TIMEOUT_MAX_S)
        if not await ctx.confirm(f"bash in {ctx.workspace}: {command}"):
            return ToolResult(
                "bash: the user declined to run this command; ask them or try another way",
                is_error=True,
                metadata={"declined": True},
            )
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=ctx.workspace,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills children too
        )
        out = _Bounded(BASH_OUTPUT_MAX_CHARS)

        async def pump() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                out.add(chunk)
            await proc.wait()

        timed_out = False
        try:
            await asyncio.wait_for(pump(), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(_drain(proc), 5)
        except BaseException:  # Ctrl-C / cancellation: leave nothing running
            _kill_group(proc)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(_drain(proc), 5)
            raise
        code = proc.returncode
        text = out.text()
        if timed_out:
            status = f"timed out after {timeout:g} s; the command and its children were killed"
        else:
            status = f"exit code {code}"
        body = f"{status}\n{text}" if text else f"{status} (no output)"
        return ToolResult(
            body,
            is_error=timed_out or code != 0,
            metadata={"exit_code": code, "timed_out": timed_out, "output_bytes": out.total},
        )


async def _drain(proc: asyncio.subprocess.Process) -> None:
    """Reap a killed command and read its pipe to the end, so its transport closes."""
    if proc.stdout is not None:
        while await proc.stdout.read(65536):
            pass
    await proc.wait()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def coding_tools() -> list[Tool]:
    """``edit_file``, ``list_files``, ``grep``, ``bash`` (what ``ctxrelay run`` adds to
    the built-ins for a real model)."""
    return [EditFile(), ListFiles(), Grep(), Bash()]
