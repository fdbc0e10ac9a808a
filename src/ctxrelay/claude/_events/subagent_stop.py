"""``SubagentStop``: a subagent that ended on a tool call (no report) leaves a notice for
the main thread's next hook answer. The subagent itself gets nothing: it has ended."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.claude._notices import record_from_subagent_stop

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import SubagentStopPayload

__all__ = ["handle"]


def handle(payload: SubagentStopPayload) -> None:
    record_from_subagent_stop(payload)
