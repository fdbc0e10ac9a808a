"""Notices for the main thread about subagents that stopped short.

A subagent that reaches its ``maxTurns`` while still calling tools ends without a
report; the parent gets its partial output. The parent must learn, from the next hook
answer on the main thread, which subagent stopped short and where its transcript is.

Where a stop is seen, by Claude Code version (2.1.197 and 2.1.332 checked):

- ``SubagentStop`` fires when a subagent ends by itself; where it also fires at the
  turn limit, :func:`record_from_subagent_stop` queues a notice in the session's state.
- a foreground subagent's end reaches the main thread as the ``PostToolUse`` of its
  ``Agent`` tool call (``tool_response.agentId``, ``status: completed``);
- a background subagent's end reaches it as a ``<task-notification>`` prompt
  (``UserPromptSubmit``), naming the agent by ``<task-id>``.

Every main-thread hook answer calls :func:`main_thread_notice` (the ``PostToolUse``,
``UserPromptSubmit`` and ``Stop`` hooks): it takes the queued notices, checks the agents
the payload says just ended, and renders each stop once (claimed per agent and turn
count, so a notice is never repeated by two hooks).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ctxrelay.claude._agents import max_turns_for
from ctxrelay.claude._state import cursor_path, pending_marker, session_state
from ctxrelay.hooks.state import is_plain
from ctxrelay.transcripts import read_agent, subagent_transcript
from ctxrelay.transcripts._hot import refused_too_long

__all__ = [
    "StoppedShort",
    "check_agent",
    "ended_agents",
    "main_thread_notice",
    "record_from_subagent_stop",
    "render",
    "take_notices",
]

_QUEUE = "subagent_notices"
_CLAIMS = "subagent_notified"
# Compiled on first use (``re`` caches it): a hook that imports this module need not.
_TASK_ID = r"<task-id>\s*([A-Za-z0-9][A-Za-z0-9_-]{0,127})\s*</task-id>"
_AGENT_TOOLS = (
    "Agent",
    "Task",
)  # "Task" before Claude Code 2.1; a tuple: payload values may be unhashable


class StoppedShort(NamedTuple):
    """A subagent that ended on a tool call, without a final report."""

    agent_id: str
    agent_type: str | None
    turns_used: int
    max_turns: int | None
    transcript_path: str
    overflowed: bool = False
    """Claude Code refused its next request as too long (it ran out of context)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            "turns_used": self.turns_used,
            "max_turns": self.max_turns,
            "transcript_path": self.transcript_path,
            "overflowed": self.overflowed,
        }

    @classmethod
    def from_json(cls, raw: object) -> StoppedShort | None:
        if not isinstance(raw, Mapping):
            return None
        agent_id, path = raw.get("agent_id"), raw.get("transcript_path")
        turns = raw.get("turns_used")
        if not isinstance(agent_id, str) or not isinstance(path, str) or not isinstance(turns, int):
            return None
        kind, bound = raw.get("agent_type"), raw.get("max_turns")
        return cls(
            agent_id,
            kind if isinstance(kind, str) else None,
            turns,
            bound if isinstance(bound, int) else None,
            path,
            raw.get("overflowed") is True,
        )

    @property
    def claim(self) -> str:
        return f"{self.agent_id}:{self.turns_used}"

    def sentence(self) -> str:
        """In Claude Code's own terms: a context overflow (its next request was refused as
        too long: nothing more can be asked of it, its transcript holds its work), a
        turn limit (Claude Code continues a subagent with SendMessage), or a stop."""
        who = f"Subagent {self.agent_id}"
        if self.agent_type:
            who += f" ({self.agent_type})"
        read = (
            f"Its transcript is {self.transcript_path} (read it in pieces, with Grep or "
            "Read with offset and limit, not whole)."
        )
        if self.overflowed:
            return (
                f"{who} ran out of context after {self.turns_used} turns: Claude Code "
                "refused its next request as too long, so it ended without a final report "
                f"and cannot be continued. {read}"
            )
        if self.max_turns is not None and self.turns_used >= self.max_turns:
            return (
                f"{who} reached its turn limit ({self.turns_used} of {self.max_turns} turns) "
                "while still calling tools, without a final report. Continue it with "
                f"SendMessage (to: '{self.agent_id}') and ask for its report. {read}"
            )
        return (
            f"{who} stopped after {self.turns_used} turns while still calling tools, "
            f"without a final report: its result is incomplete. {read}"
        )


def render(notices: Iterable[StoppedShort]) -> str | None:
    """The text the main thread gets, or None when there is nothing to say."""
    lines = [n.sentence() for n in notices]
    if not lines:
        return None
    return "[ctxrelay] " + " ".join(lines)


def _meta_type(path: str) -> str | None:
    """The agent type Claude Code wrote next to a subagent's transcript
    (``agent-<id>.meta.json``), for stops that name only the agent id."""
    meta = path.removesuffix(".jsonl") + ".meta.json"
    try:
        with open(meta, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    kind = data.get("agentType") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def check_agent(
    transcript_path: object,
    session_id: object,
    agent_id: object,
    agent_type: object = None,
    *,
    agent_transcript_path: object = None,
) -> StoppedShort | None:
    """Whether a subagent that has ended stopped short (its latest response asked for a
    tool, so it never wrote its report). Call it only for agents known to have ended."""
    if not (
        isinstance(transcript_path, str)
        and isinstance(session_id, str)
        and isinstance(agent_id, str)
    ):
        return None
    path = subagent_transcript(transcript_path, session_id, agent_id)
    if path is None and isinstance(agent_transcript_path, str):
        # SubagentStop names the file; trust it only where the ids would have put it.
        expected = subagent_transcript(transcript_path, session_id, agent_id, must_exist=False)
        if expected is not None and os.path.abspath(agent_transcript_path) == expected:
            path = expected if os.path.isfile(expected) else None
    if path is None:
        return None
    cursor = cursor_path(session_id, agent_id)
    reading = read_agent(path, cursor)
    # The agent has ended: its cursor is no longer needed (one file per subagent would
    # otherwise pile up). A resumed agent costs one fresh pass.
    with contextlib.suppress(OSError):
        os.unlink(cursor)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(cursor))  # only when it was the session's last
    if reading is None or not reading.ended_on_tool_call:
        return None
    kind = agent_type if isinstance(agent_type, str) else _meta_type(path)
    overflowed = refused_too_long(path, agent=True)
    return StoppedShort(agent_id, kind, reading.turns_used, max_turns_for(kind), path, overflowed)


def _session(payload: Mapping[str, Any]) -> Any:
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return None
    return session_state(session_id)


def record_from_subagent_stop(payload: Mapping[str, Any]) -> StoppedShort | None:
    """``SubagentStop``: queue a notice for the main thread when the agent stopped short."""
    found = check_agent(
        payload.get("transcript_path"),
        payload.get("session_id"),
        payload.get("agent_id"),
        payload.get("agent_type"),
        agent_transcript_path=payload.get("agent_transcript_path"),
    )
    doc = _session(payload)
    if found is not None and doc is not None:
        doc.append(_QUEUE, found.as_json())
        # After the append: a reader that removed the marker before taking will still
        # find this one, or find the marker again next time.
        marker = pending_marker(str(payload.get("session_id")))
        if is_plain(payload.get("session_id")):
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "a"):
                pass
    return found


def take_notices(payload: Mapping[str, Any]) -> list[StoppedShort]:
    """Remove and return the notices queued for this session (cheap when none are)."""
    doc = _session(payload)
    if doc is None:
        return []
    if is_plain(payload.get("session_id")):
        with contextlib.suppress(OSError):
            os.unlink(pending_marker(str(payload.get("session_id"))))
    if _QUEUE not in doc.read():
        return []
    taken = (StoppedShort.from_json(raw) for raw in doc.take(_QUEUE))
    return [n for n in taken if n is not None]


def ended_agents(payload: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """``(agent_id, agent_type)`` of the subagents this main-thread payload reports as
    ended: a foreground ``Agent`` call's result, or ``<task-notification>`` prompts."""
    found: list[tuple[str, str | None]] = []
    response = payload.get("tool_response")
    if payload.get("tool_name") in _AGENT_TOOLS and isinstance(response, Mapping):
        agent_id, kind = response.get("agentId"), response.get("agentType")
        # A background launch ("async_launched") has not ended; its notification will say.
        if isinstance(agent_id, str) and response.get("status") == "completed":
            found.append((agent_id, kind if isinstance(kind, str) else None))
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and "<task-notification>" in prompt:
        found.extend((agent_id, None) for agent_id in re.findall(_TASK_ID, prompt))
    return found


def main_thread_notice(payload: Mapping[str, Any]) -> str | None:
    """The notice for a main-thread hook answer: queued stops plus the stops this
    payload reports, each said once per session. None when there is nothing to say."""
    notices = take_notices(payload)
    for agent_id, kind in ended_agents(payload):
        found = check_agent(
            payload.get("transcript_path"), payload.get("session_id"), agent_id, kind
        )
        if found is not None:
            notices.append(found)
    if not notices:
        return None
    doc = _session(payload)
    fresh: list[StoppedShort] = []
    for notice in notices:
        if doc is None or doc.claim_once(notice.claim, group=_CLAIMS):
            fresh.append(notice)
    return render(fresh)
