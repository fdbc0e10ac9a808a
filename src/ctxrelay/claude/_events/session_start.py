"""``SessionStart``: after ``/clear``, the fresh session resumes from the latest handoff.

No hook can type ``/clear``; the user does (told by the Stop hook), and Claude Code then
starts a new session with ``source: "clear"``. This hook answers it with the newest
handoff file no session has resumed from yet (written within a day), as
``additionalContext``: the resume prompt, which names the file and its next step, and the
file's content (up to ``INJECT_MAX_BYTES``). The file is marked consumed under the
project's lock, so two fresh sessions never both resume from it. Other sources (startup,
resume, compact) and mode ``off`` add nothing.
"""

from __future__ import annotations

from ctxrelay.claude import handoff
from ctxrelay.claude.config import load, project_dir_of

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import HookAnswer, SessionStartPayload

__all__ = ["handle", "injection"]


def injection(found: handoff.Handoff, project: object) -> str:
    """The context a fresh session gets from a handoff file."""
    from pathlib import Path

    prompt = handoff.resume_prompt(
        found.path, next_step=found.next_step, project_dir=Path(str(project)), inline=True
    )
    cut = (
        f"\n[ctxrelay] The file is longer than {handoff.INJECT_MAX_BYTES:,} bytes; the rest is "
        f"in {found.path}: read it before you start.\n"
        if found.truncated
        else ""
    )
    return f'{prompt}\n\n<handoff path="{found.path}">\n{found.text.rstrip()}\n</handoff>{cut}'


def _cache_limit(session_id: object, mode: str, configured: int | None) -> None:
    """Seed the session's cached usable limit for the PreToolUse check (refined by the
    statusline and each Stop once the model and its window are known)."""
    if not isinstance(session_id, str) or not session_id:
        return
    from ctxrelay.budget.triggers import context_window_for
    from ctxrelay.claude import _state
    from ctxrelay.claude._limit import refresh

    window = context_window_for(None, configured or _state.recorded_window(session_id, None))
    _state.session_state(session_id).update(lambda data: refresh(data, window, mode))


def handle(payload: SessionStartPayload) -> HookAnswer | None:
    if payload.get("agent_id"):
        return None
    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    cfg = load(project)
    _cache_limit(payload.get("session_id"), cfg.main_handover, cfg.context_window)
    if payload.get("source") != "clear" or cfg.main_handover == "off":
        return None
    path = handoff.latest_unconsumed(project)
    if path is None:
        return None
    found = handoff.read_handoff(path)
    if found is None or not handoff.mark_consumed(project, path):
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": injection(found, project),
        }
    }
