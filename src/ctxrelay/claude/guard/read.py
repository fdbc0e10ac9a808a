"""The Read guard: deny an unbounded Read of a file over ``READ_MAX_BYTES``, and a full
Read of a file the same agent already read in full, unchanged since
(:mod:`ctxrelay.claude.guard._reread`).

A Read with a ``limit`` (or ``pages`` of a PDF) is bounded and always passes, so the
reasons' own advice, a Read with offset/limit, is never denied in turn.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

from ctxrelay.budget.bounds import READ_MAX_BYTES
from ctxrelay.claude.guard._reads import mib
from ctxrelay.claude.guard._reread import check

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["deny_reason"]


def deny_reason(
    tool_input: Mapping[str, object],
    cwd: str | None,
    payload: Mapping[str, object] | None = None,
) -> str | None:
    """The reason to deny this Read, or ``None`` to allow it.

    ``tool_input`` is the Read tool's input; a relative ``file_path`` is resolved against
    ``cwd``. A file that does not exist or is not a regular file is left to Read itself.
    With the hook's ``payload`` (its session, agent and transcript), a full Read is also
    checked against the agent's earlier full reads.
    """
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    if tool_input.get("limit") is not None or tool_input.get("pages") is not None:
        return None
    if cwd is not None and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size <= READ_MAX_BYTES:
        if payload is None or tool_input.get("offset") is not None:
            return None
        return check(payload, os.path.abspath(path), st.st_size, st.st_mtime_ns)
    example = json.dumps({"file_path": path, "offset": 1, "limit": 200}, ensure_ascii=False)
    return (
        f"ctxrelay guard: {path} is {mib(st.st_size)} ({st.st_size:,} bytes), over the "
        f"Read limit of {mib(READ_MAX_BYTES)}, so reading it whole would flood the context. "
        f"Read a part of it with offset and limit (Read {example}), or search it with Grep."
    )
