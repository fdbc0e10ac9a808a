"""At the usable limit the main session's tool calls are denied until it hands off.

The settings snippet disables Claude Code's auto-compaction (the handoff replaces it), so
without this check a long session would run into the window and die mid-task. From the
usable limit on, ``PreToolUse`` denies every main-session tool call except the ones that
write the handoff, with a reason that asks for the handoff now and names the file to
write. The reason reaches Claude as the tool result.

The usable limit is the policy core's ``limit − output_reserve``
(:class:`ctxrelay.budget.Budget`), with the window the Stop hook uses and
:data:`OUTPUT_RESERVE`. Subagents are left alone: their own bounds tell them to report.
Mode ``off`` turns this off too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["ALLOWED_AT_LIMIT", "OUTPUT_RESERVE", "deny_reason", "usable_limit"]

OUTPUT_RESERVE = 33_000
"""Tokens kept free at the top of the main session's window: what Claude Code itself
keeps below the window (20,000 for a response or summary, 13,000 of buffer; its
auto-compaction would have started here). From this point on there is still room to
write the handoff file."""

ALLOWED_AT_LIMIT = frozenset(("TaskUpdate", "TaskCreate", "TodoWrite"))
"""Tools still allowed at the limit besides writing the handoff: bookkeeping that costs
almost no context and lets Claude close its tasks before it hands off."""

_WRITE_TOOLS = frozenset(("Write", "Edit", "MultiEdit"))


def usable_limit(window: int) -> int:
    """The main session's usable limit for ``window`` (a small configured window keeps a
    tenth of itself in reserve instead)."""
    from ctxrelay.budget import Budget

    reserve = OUTPUT_RESERVE if window > 2 * OUTPUT_RESERVE else window // 10
    return Budget(limit=window, output_reserve=reserve).usable_limit


def _writes_handoff(project: Path, tool: str, tool_input: dict[str, Any]) -> bool:
    from ctxrelay.claude.handoff import is_handoff_path

    if tool in _WRITE_TOOLS:
        target = tool_input.get("file_path")
        return isinstance(target, str) and is_handoff_path(project, target)
    if tool == "Skill":
        skill = tool_input.get("skill") or tool_input.get("command") or tool_input.get("name")
        return isinstance(skill, str) and skill.rsplit(":", 1)[-1].strip("/ ") == "handoff"
    return False


def deny_reason(payload: dict[str, Any]) -> str | None:
    """The reason to deny this ``PreToolUse`` call at the usable limit, else ``None``."""
    if payload.get("agent_id"):
        return None
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not (
        isinstance(session_id, str)
        and session_id
        and isinstance(transcript, str)
        and isinstance(tool, str)
        and isinstance(tool_input, dict)
    ):
        return None
    if tool in ALLOWED_AT_LIMIT:
        return None

    from ctxrelay.claude.config import load, project_dir_of

    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    if _writes_handoff(project, tool, tool_input):
        return None
    cfg = load(project)
    if cfg.main_handover == "off":
        return None

    from ctxrelay.transcripts import latest_context

    try:
        reading = latest_context(transcript)
    except Exception:  # an unreadable transcript never blocks work
        return None
    if reading is None or reading.context_tokens is None:
        return None
    from ctxrelay.budget.triggers import context_window_for
    from ctxrelay.claude import _state

    configured = cfg.context_window or _state.recorded_window(session_id, reading.model)
    window = context_window_for(reading.model, configured)
    limit = usable_limit(window)
    tokens = reading.context_tokens
    if tokens < limit:
        return None
    path = _handoff_path(session_id, project)
    from ctxrelay.claude.handoff import LAYOUT

    return (
        f"[ctxrelay] Denied: the context is {tokens:,} tokens, at the usable limit of "
        f"{limit:,} (the {window:,}-token window less {window - limit:,} kept free). Further "
        "tool calls are denied so the session does not run out mid-task. Hand off now: "
        f"write the handoff file with the Write tool to exactly this path:\n\n    {path}\n\n"
        f"in this layout:\n\n{LAYOUT}\n"
        "Then stop: the work continues in a fresh session that resumes from the file."
    )


def _handoff_path(session_id: str, project: Path) -> Path:
    """The file this session is asked to write: the running auto handoff's, else one
    reserved once for this episode (so repeated denials name the same file)."""
    from ctxrelay.claude import _state, handoff

    doc = _state.session_state(session_id)

    def choose(data: dict[str, Any]) -> str:
        job = data.get("handoff")
        if isinstance(job, dict) and job.get("phase") == "writing" and job.get("path"):
            return str(job["path"])
        current = data.get("limit_path")
        if isinstance(current, str) and not Path(current).exists():
            return current
        fresh = str(handoff.new_handoff_path(project))
        data["limit_path"] = fresh
        return fresh

    return Path(doc.update(choose))
