"""The legacy "final flush": how histories written before agent-led handoff still resume.

Before the handoff request existed, a window near its limit got a ``flush`` row: the
model had one memory-only step in which it could only write the notes file, and then the
window was sealed ``legacy_flush``. New windows never get a flush row; a history that
holds one resumes through :func:`legacy_flush`, exactly as the old path ran it:

1. no model response after the flush row yet: dispatch one step offering only
   ``write_file`` (when it fits the usable limit; otherwise seal at once, as before);
2. tool calls of that step without results: run them, refusing every call but a write
   of the notes file;
3. then seal the window ``legacy_flush`` and open the next with the notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ctxrelay.errors import ContextOverflowError
from ctxrelay.runtime._config import SessionConfig
from ctxrelay.runtime._tools import Refusal
from ctxrelay.runtime.events import DispatchEvent, Event
from ctxrelay.runtime.model import ModelRequest, ModelResponse
from ctxrelay.runtime.tools.files import resolve_in_workspace
from ctxrelay.store import Row, SealReason, WindowInfo

__all__ = ["FLUSH_TOOLS", "Outcome", "legacy_flush", "notes_only"]

Outcome = tuple[str, str | None]
"""How a run ends: ``(status, reason)``."""

FLUSH_TOOLS = ("write_file",)
"""The only tool the flush step offers."""


class _Session(Protocol):
    """What the flush step needs of the session running it (its private side: these are
    the loop's own steps, not a public API)."""

    @property
    def config(self) -> SessionConfig: ...

    @property
    def window(self) -> WindowInfo: ...

    @property
    def _rows(self) -> Sequence[Row]: ...

    def _controls(self) -> Outcome | None: ...

    def _request(
        self, *, offer: bool, only: Sequence[str] | None = None
    ) -> tuple[ModelRequest, int]: ...

    def _estimate(self, request_bytes: int) -> int: ...

    def _emit(self, event: Event) -> None: ...

    async def _complete(self, request: ModelRequest, sent: int, tokens: int) -> ModelResponse: ...

    def _record(self, sent: int, response: ModelResponse, tokens: int) -> None: ...

    def _rollover_or_pause(self, reason: SealReason) -> Outcome | None: ...

    async def _run_tools(self, pending: Sequence[Row], *, refuse: Refusal | None) -> None: ...


def notes_only(workspace: Path, notes_file: str) -> Refusal:
    """Refuse every call of the flush step but a ``write_file`` of the notes file."""
    notes = resolve_in_workspace(workspace, notes_file)

    def refuse(name: str, args: Mapping[str, Any]) -> str | None:
        if (
            name == "write_file"
            and resolve_in_workspace(workspace, str(args.get("path", "."))) == notes
        ):
            return None
        return f"only the notes file `{notes_file}` may be written in the final flush step"

    return refuse


async def legacy_flush(session: _Session, at: int) -> Outcome | None:
    """Advance the flush that the row at ``at`` of the open window started: one step per
    call, ``None`` to continue the loop, or how the run ends."""
    rows = session._rows
    after = rows[at + 1 :]
    if not any(r.kind == "assistant" for r in after):
        capped = session._controls()
        if capped is not None:
            return capped
        request, sent = session._request(offer=False, only=FLUSH_TOOLS)
        tokens = session._estimate(sent)
        if tokens > session.config.budget.usable_limit:
            # No room for the flush step: seal without it, as the old path did.
            return session._rollover_or_pause("legacy_flush")
        session._emit(DispatchEvent(session.window.index, tokens, "continue", None))
        try:
            response = await session._complete(request, sent, tokens)
        except ContextOverflowError:
            return session._rollover_or_pause("legacy_flush")
        session._record(sent, response, tokens)
        return None
    reply_at = max(i for i, r in enumerate(rows) if r.kind == "assistant")
    tail = rows[reply_at + 1 :]
    done = {str(r.metadata.get("tool_call_id")) for r in tail if r.kind == "tool_result"}
    pending = [r for r in tail if r.kind == "tool_call" and str(r.metadata.get("id")) not in done]
    if pending:
        cfg = session.config
        await session._run_tools(pending, refuse=notes_only(cfg.workspace, cfg.notes_file))
        return None
    return session._rollover_or_pause("legacy_flush")
