"""Tools the runtime offers the model: the seam (:class:`Tool`, :class:`ToolContext`,
:class:`ToolResult`, :class:`ToolSet`) and the built-ins ``read_file``, ``write_file``,
``new_context`` and ``session_history``. Coding tools (``edit_file``, ``list_files``,
``grep``, ``bash``) live in ``ctxrelay.runtime.tools.coding`` against the same base."""

from __future__ import annotations

from ctxrelay.runtime.tools._base import (
    Tool,
    ToolContext,
    ToolResult,
    ToolSet,
    approve_all,
)
from ctxrelay.runtime.tools.context import NewContext, SessionHistory
from ctxrelay.runtime.tools.files import (
    NOTES_MAX_BYTES,
    READ_FILE_MAX_BYTES,
    ReadFile,
    WorkspaceError,
    WriteFile,
    atomic_write,
    resolve_in_workspace,
)

__all__ = [
    "NOTES_MAX_BYTES",
    "READ_FILE_MAX_BYTES",
    "NewContext",
    "ReadFile",
    "SessionHistory",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSet",
    "WorkspaceError",
    "WriteFile",
    "approve_all",
    "atomic_write",
    "builtin_tools",
    "resolve_in_workspace",
]


def builtin_tools() -> ToolSet:
    """``read_file``, ``write_file``, ``new_context``, ``session_history``."""
    return ToolSet([ReadFile(), WriteFile(), NewContext(), SessionHistory()])
