"""``PostToolUse``: tell a subagent to report now; tell the main thread which
subagents stopped short.

In a subagent (the payload has ``agent_id``) the numbers come from the subagent's own
transcript: its latest request's context against the bound of its model, and the
responses it has used against the ``maxTurns`` of its agent type (the plugin's agents;
other types have no turn bound). Over either bound, the tool result gets a note that
reaches the subagent's next request; below both, nothing. It tells; it never blocks (a
block would lose the work of the run).
"""

from __future__ import annotations

# Annotations only, and ``typing`` costs a hook's start-up time: not imported at run time
# (mypy reads any constant named TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["handle"]

EVENT = "PostToolUse"


def _context(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": text}}


def subagent_note(payload: dict[str, Any]) -> str | None:
    """The report-now note for the subagent of ``payload``, or None below the bounds."""
    from ctxrelay.budget.bounds import TRANSCRIPT_LAG_WAIT_S
    from ctxrelay.budget.triggers import report_now
    from ctxrelay.claude._agents import cursor_path, max_turns_for, read_agent
    from ctxrelay.transcripts import subagent_transcript

    transcript = payload.get("transcript_path")
    session_id, agent_id = payload.get("session_id"), payload.get("agent_id")
    if not (
        isinstance(transcript, str) and isinstance(session_id, str) and isinstance(agent_id, str)
    ):
        return None
    path = subagent_transcript(transcript, session_id, agent_id)
    if path is None:
        return None
    cursor = cursor_path(session_id, agent_id)
    reading = read_agent(path, cursor)
    if reading is None:
        return None
    turns_used = reading.turns_used
    call = payload.get("tool_use_id")
    if isinstance(call, str) and call and call not in reading.tool_ids:
        # The response that made this call is not in the transcript yet: Claude Code
        # 2.1.332 sometimes writes it after PostToolUse fires. Give it a moment, then
        # count it anyway (it exists: it made the call), with the context known so far.
        import time

        deadline = time.monotonic() + TRANSCRIPT_LAG_WAIT_S
        while call not in reading.tool_ids and time.monotonic() < deadline:
            time.sleep(0.02)
            reading = read_agent(path, cursor) or reading
        turns_used = reading.turns_used + (call not in reading.tool_ids)
    decision = report_now(
        reading.context_tokens or 0,
        model=reading.model,
        turns_used=turns_used,
        max_turns=max_turns_for(payload.get("agent_type")),
    )
    return None if decision is None else decision.note()


def handle(payload: dict[str, Any]) -> dict[str, Any] | None:
    agent_id = payload.get("agent_id")
    if isinstance(agent_id, str) and agent_id:
        note = subagent_note(payload)
    else:
        from ctxrelay.claude._statedir import notice_possible

        if not notice_possible(payload):
            return None  # an ordinary main-thread tool call: nothing to load
        from ctxrelay.claude._notices import main_thread_notice

        note = main_thread_notice(payload)
    return None if note is None else _context(note)
