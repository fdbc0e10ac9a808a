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

from typing import TYPE_CHECKING

from ctxrelay.budget.triggers import report_now
from ctxrelay.claude._agents import max_turns_for
from ctxrelay.claude._notices import main_thread_notice
from ctxrelay.claude._state import cursor_path, notice_possible
from ctxrelay.hooks.host import Answer
from ctxrelay.transcripts._agent import read_agent
from ctxrelay.transcripts._hot import call_response
from ctxrelay.transcripts._paths import subagent_transcript

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import PostToolUsePayload

__all__ = ["handle"]


def subagent_note(payload: PostToolUsePayload) -> str | None:
    """The report-now note for the subagent of ``payload``, or None below the bounds."""
    transcript = payload.get("transcript_path")
    session_id, agent_id = payload.get("session_id"), payload.get("agent_id")
    if not (
        isinstance(transcript, str) and isinstance(session_id, str) and isinstance(agent_id, str)
    ):
        return None
    path = subagent_transcript(transcript, session_id, agent_id)
    if path is None:
        return None
    call = payload.get("tool_use_id")
    written = True
    if isinstance(call, str) and call:
        # Claude Code may not have written the response that made this call yet: wait
        # for it (bounded by CALL_LINE_WAIT_S; at once when it is there).
        written = call_response(path, call, agent=True) is not None
    reading = read_agent(path, cursor_path(session_id, agent_id))
    if reading is None:
        return None
    # A response that never appeared within the bound still counts as a turn (it made
    # the call), with the context known so far: the note errs towards reporting early.
    turns_used = reading.turns_used + (not written and call not in reading.tool_ids)
    max_turns = max_turns_for(payload.get("agent_type"))
    if max_turns is not None:
        turns_used = min(turns_used, max_turns)  # never "-1 left"
    # A fork is bounded by the context it added after the fork, not by its parent's.
    decision = report_now(
        reading.context_added or 0,
        model=reading.model,
        turns_used=turns_used,
        max_turns=max_turns,
    )
    return None if decision is None else decision.note()


def handle(payload: PostToolUsePayload) -> Answer | None:
    agent_id = payload.get("agent_id")
    if isinstance(agent_id, str) and agent_id:
        note = subagent_note(payload)
    elif notice_possible(payload):
        note = main_thread_notice(payload)
    else:
        return None  # an ordinary main-thread tool call: nothing to say
    return None if note is None else Answer(context=note)
