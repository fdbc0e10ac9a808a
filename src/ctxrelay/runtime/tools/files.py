"""``read_file`` and ``write_file``: confined to the session's workspace, writes atomic.

The notes checkpoint (``context-notes.md``) is written with the ordinary ``write_file``;
its result confirms the bytes written and how much of it the next window's lead-in
carries, so the agent can confirm the checkpoint before it calls ``new_context``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import NOTES_MAX_BYTES, READ_FILE_MAX_BYTES
from ctxrelay.runtime.tools._base import ToolContext, ToolResult, object_schema, string

__all__ = [
    "NOTES_MAX_BYTES",
    "READ_FILE_MAX_BYTES",
    "ReadFile",
    "WorkspaceError",
    "WriteFile",
    "atomic_write",
    "display_path",
    "resolve_in_workspace",
    "target_of",
]


class WorkspaceError(ValueError):
    """A path names something outside the workspace, or is not usable there."""


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real path of ``path`` (relative to ``workspace`` or absolute inside it).

    Symlinks are resolved first, so a link that points out of the workspace is refused
    like ``../`` would be."""
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("path must be a non-empty string")
    if "\x00" in path:
        raise WorkspaceError("path must not contain NUL bytes")
    root = workspace.resolve()
    candidate = Path(path)
    target = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if target != root and root not in target.parents:
        raise WorkspaceError(f"{path!r} is outside the workspace")
    return target


def _umask() -> int:
    """The process umask, read without changing it where the platform allows (setting it
    to read it back is a race with other threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _target_mode(target: Path) -> int:
    """The permission bits the written file should have: an existing file keeps its own
    (an edited script stays executable), a new one gets what ``open(..., "w")`` gives."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` so that a reader (or a crash) sees the old file or
    the new one, never a torn mix: temp file in the same directory, fsync, rename.
    The file keeps its mode (``mkstemp`` alone would leave it 0600)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _target_mode(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def display_path(workspace: Path, target: Path) -> str:
    """``target`` as a tool's result names it: relative to the workspace (``.`` for the
    workspace itself)."""
    try:
        return str(target.relative_to(workspace.resolve()))
    except ValueError:  # pragma: no cover - resolve_in_workspace rules this out
        return str(target)


def target_of(
    tool: str, args: Mapping[str, Any], ctx: ToolContext, *, default: str | None = None
) -> Path | ToolResult:
    """The workspace path a call's ``path`` names (``default`` when it names none), or
    the error result ``tool`` returns for a path outside the workspace or unusable."""
    path = args.get("path", "") if default is None else args.get("path") or default
    try:
        return resolve_in_workspace(ctx.workspace, path)
    except WorkspaceError as exc:
        return ToolResult(f"{tool}: {exc}", is_error=True)


@dataclass(frozen=True, slots=True)
class ReadFile:
    """Read a UTF-8 text file of the workspace."""

    name: str = "read_file"
    description: str = (
        "Read a text file of the workspace. `path` is relative to the workspace. Results "
        f"longer than {READ_FILE_MAX_BYTES // 1024} KiB are cut, with a note."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema({"path": string("file to read")}, "path")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        target = target_of("read_file", args, ctx)
        if isinstance(target, ToolResult):
            return target
        shown = display_path(ctx.workspace, target)
        try:
            with target.open("rb") as handle:
                data = handle.read(READ_FILE_MAX_BYTES + 1)
        except FileNotFoundError:
            return ToolResult(f"read_file: {shown} does not exist", is_error=True)
        except IsADirectoryError:
            return ToolResult(f"read_file: {shown} is a directory", is_error=True)
        except OSError as exc:
            return ToolResult(f"read_file: cannot read {shown}: {exc.strerror}", is_error=True)
        cut = len(data) > READ_FILE_MAX_BYTES
        text = data[:READ_FILE_MAX_BYTES].decode("utf-8", errors="replace")
        if cut:
            text += f"\n[read_file: cut at {READ_FILE_MAX_BYTES:,} bytes]"
        return ToolResult(text, metadata={"path": shown, "bytes": len(data), "cut": cut})


@dataclass(frozen=True, slots=True)
class WriteFile:
    """Create or replace a file of the workspace, atomically."""

    name: str = "write_file"
    description: str = (
        "Create or replace a text file of the workspace with `content` (atomic: readers "
        "see the old file or the new one). Use it for the notes checkpoint too."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {"path": string("file to write"), "content": string("the whole new content")},
            "path",
            "content",
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        content = args.get("content")
        if not isinstance(content, str):
            return ToolResult("write_file: content must be a string", is_error=True)
        target = target_of("write_file", args, ctx)
        if isinstance(target, ToolResult):
            return target
        shown = display_path(ctx.workspace, target)
        if target.is_dir():
            return ToolResult(f"write_file: {shown} is a directory", is_error=True)
        data = content.encode("utf-8")
        try:
            atomic_write(target, data)
        except OSError as exc:
            return ToolResult(f"write_file: cannot write {shown}: {exc.strerror}", is_error=True)
        notes = target == resolve_in_workspace(ctx.workspace, ctx.notes_file)
        message = f"wrote {len(data):,} bytes to {shown}"
        if notes:
            if len(data) <= NOTES_MAX_BYTES:
                message += (
                    f" (notes checkpoint confirmed; the next window's lead-in carries all "
                    f"of it, cap {NOTES_MAX_BYTES:,} bytes)"
                )
            else:
                message += (
                    f" (notes checkpoint written, but only the first {NOTES_MAX_BYTES:,} "
                    "bytes reach the next window's lead-in: shorten it)"
                )
        return ToolResult(message, metadata={"path": shown, "bytes": len(data), "notes": notes})
