"""At the usable limit the main session's tool calls are denied until it hands off.

The settings snippet disables Claude Code's auto-compaction (the handoff replaces it), so
without this check a long session would run into the window and die mid-task. From the
usable limit on, ``PreToolUse`` denies every main-session tool call except the ones that
write the handoff, with a reason that asks for the handoff now and names the file to
write. The reason reaches Claude as the tool result.

The usable limit is the policy core's ``limit − output_reserve`` of the main session's
budget (:func:`ctxrelay.budget.triggers.main_budget`), with the window the Stop hook uses
and :data:`ctxrelay.budget.bounds.MAIN_OUTPUT_RESERVE`. Subagents are left alone: their own
bounds tell them to report. Mode ``off`` turns this off too.

A call is denied when the context plus the most it can return reaches the usable limit
(the caller sizes that: a Read's lines, Claude Code's cap on a Bash output), so no single
tool result jumps the gap to Claude Code's own refusal to send
(:data:`~ctxrelay.budget.bounds.CLAUDE_CODE_BLOCK_RESERVE` below the window), where not
even the handoff could be written. The context is the one of the response that made
this call (by the payload's ``tool_use_id``), which Claude Code may not have written to
the transcript yet when the hook starts: :func:`ctxrelay.transcripts.call_response` waits
for it up to :data:`ctxrelay.budget.bounds.CALL_LINE_WAIT_S`. If it never appears, the
call is allowed (the hook fails open).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW
from ctxrelay.budget.triggers import context_window_for, main_budget
from ctxrelay.claude import _state, handoff
from ctxrelay.claude._state import session_doc_path
from ctxrelay.claude.config import (
    ENV_CONTEXT_WINDOW,
    ENV_MAIN_HANDOVER,
    ENV_THRESHOLD,
    load,
    project_dir_of,
)
from ctxrelay.claude.handoff import INSTALLED_SKILL, LAYOUT, is_handoff_path
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.state import read_document
from ctxrelay.transcripts import latest_context
from ctxrelay.transcripts._hot import call_response, tail_context

if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.claude._events._payloads import PreToolUsePayload

__all__ = [
    "ALLOWED_AT_LIMIT",
    "deny_reason",
    "limit_text",
    "main_window",
    "refresh",
    "usable_limit",
]

ALLOWED_AT_LIMIT = frozenset(("TaskUpdate", "TaskCreate", "TodoWrite"))
"""Tools still allowed at the limit besides writing the handoff: bookkeeping that costs
almost no context and lets Claude close its tasks before it hands off."""

_WRITE_TOOLS = frozenset(("Write", "Edit", "MultiEdit"))
LONG_CONTEXT_OFF = "CLAUDE_CODE_DISABLE_1M_CONTEXT"
"""Claude Code's switch that holds every model to 200,000 tokens (the natively 1M ones and
``[1m]`` ids alike, under ``-p`` as in the UI); the hooks inherit Claude Code's environment."""
# The config's overrides and Claude Code's switch, so no cache outlives a change of any.
_ENV_KEYS = (ENV_MAIN_HANDOVER, ENV_THRESHOLD, ENV_CONTEXT_WINDOW, LONG_CONTEXT_OFF)

# This check runs on every main-session tool call, so its fast path reads two small
# things: the session's state document, which caches the usable limit and the mode
# (written by SessionStart, Stop and the statusline through :func:`refresh`), and the
# usage of the response that made this call, from the transcript's tail
# (:func:`ctxrelay.transcripts.call_response`, which waits a moment when Claude Code has
# not written that response yet). Only a call
# at or over the cached limit (or with nothing cached) takes the full path, which
# recomputes everything from the config, the window and the policy core.


def usable_limit(window: int) -> int:
    """The main session's usable limit for ``window`` (the policy core's reserve rule
    keeps a small configured window's reserve to a quarter of it). The slider does not
    move it, so nothing cached here depends on the threshold: Off still denies here."""
    return main_budget(window).usable_limit


def _long_context_off() -> bool:
    value = os.environ.get(LONG_CONTEXT_OFF, "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


def main_window(configured: int | None, session_id: str | None, model: str | None) -> int:
    """The window Claude Code gives the main session, the one rule every hook uses: the
    config's ``--window``, else what Claude Code reported to the statusline, else the
    model table for ``model`` (the transcript's ``requestedModel``, which keeps a
    ``[1m]``), held to 200,000 when :data:`LONG_CONTEXT_OFF` is set."""
    recorded = configured or _state.recorded_window(session_id, model)
    if recorded:
        return context_window_for(model, recorded)
    window = context_window_for(model)
    return min(window, DEFAULT_CONTEXT_WINDOW) if _long_context_off() else window


def _env_key() -> str:
    """The settings' environment overrides: a cache made under others is not used."""
    return "|".join(os.environ.get(k, "") for k in _ENV_KEYS)


def refresh(data: dict[str, Any], window: int, mode: str) -> None:
    """Cache the usable limit and the mode in a session document (inside its update)."""
    data["usable_limit"] = usable_limit(window)
    data["mode"] = mode
    data["limit_env"] = _env_key()


def _writes_handoff(project: Path, tool: str, tool_input: dict[str, Any]) -> bool:
    if tool in _WRITE_TOOLS:
        target = tool_input.get("file_path")
        return isinstance(target, str) and is_handoff_path(project, target)
    if tool == "Skill":
        skill = tool_input.get("skill") or tool_input.get("command") or tool_input.get("name")
        # The plugin's skill is ``ctxrelay:handoff``; an installed copy is ``ctxrelay-handoff``.
        name = skill.rsplit(":", 1)[-1].strip("/ ") if isinstance(skill, str) else None
        return name in ("handoff", INSTALLED_SKILL)
    return False


def deny_reason(payload: PreToolUsePayload, returns: int = 0) -> str | None:
    """The reason to deny this ``PreToolUse`` call, whose result adds at most ``returns``
    tokens, at the usable limit, else ``None``."""
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

    cached = read_document(session_doc_path(session_id))
    if cached.get("limit_env", "") != _env_key():
        cached = {}
    if cached.get("mode") == "off":
        return None
    call = payload.get("tool_use_id")
    tokens: int | None
    if isinstance(call, str) and call:
        response = call_response(transcript, call)
        if response is None:
            # The response that made the call never reached the transcript within the
            # bound (CALL_LINE_WAIT_S): fail open, never deny on a guess.
            return None
        tokens, model, found = response[0], response[1], True
    else:  # an older Claude Code without tool_use_id: the newest response
        tokens, model, found = tail_context(transcript)
    limit = cached.get("usable_limit")
    if found and (tokens is None or (isinstance(limit, int) and tokens + returns < limit)):
        return None
    return _full_check(
        payload,
        session_id,
        transcript,
        tool,
        tool_input,
        tokens=tokens,
        model=model,
        found=found,
        returns=returns,
    )


def _full_check(
    payload: PreToolUsePayload,
    session_id: str,
    transcript: str,
    tool: str,
    tool_input: dict[str, Any],
    *,
    tokens: int | None,
    model: str | None,
    found: bool,
    returns: int,
) -> str | None:
    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    if _writes_handoff(project, tool, tool_input):
        return None
    cfg = load(project)
    if cfg.main_handover == "off":
        return None
    if not found:  # the newest response is further back than the fast tail read
        try:
            reading = latest_context(transcript)
        except Exception:  # an unreadable transcript never blocks work
            return None
        if reading is None or reading.context_tokens is None:
            return None
        tokens, model = reading.context_tokens, reading.model
    if tokens is None:
        return None
    window = main_window(cfg.context_window, session_id, model)
    limit = usable_limit(window)
    _state.session_state(session_id).update(lambda data: refresh(data, window, cfg.main_handover))
    if tokens + returns < limit:
        return None
    path = _handoff_path(session_id, transcript, project)
    return limit_text(tokens, limit, window, path, returns if tokens < limit else 0)


def limit_text(tokens: int, limit: int, window: int, path: Path, returns: int = 0) -> str:
    """The deny reason at the usable limit, or (``returns``) of a call whose result could
    pass it (reaches Claude as the tool result)."""
    where = (
        f"and this call could add up to {returns:,} more, past the usable limit of {limit:,}"
        if returns
        else f"at the usable limit of {limit:,}"
    )
    calls = "Calls that could pass it are" if returns else "Further tool calls are"
    return (
        f"[ctxrelay] Denied: the context is {tokens:,} tokens, {where} (the {window:,}-token "
        f"window less {window - limit:,} kept free). {calls} denied so the session does not "
        "run out mid-task. Hand off now: "
        f"write the handoff file with the Write tool to exactly this path:\n\n    {path}\n\n"
        f"in this layout:\n\n{LAYOUT}\n"
        "Then stop: the work continues in a fresh session that resumes from the file."
    )


def _handoff_path(session_id: str, transcript: str, project: Path) -> Path:
    """The file this session is asked to write: the running auto handoff's, else one
    reserved once for this episode (so repeated denials name the same file), recorded as
    this session's to write (another session's start leaves it to this one)."""
    doc = _state.session_state(session_id)

    def choose(data: dict[str, Any]) -> str:
        job = _state.handoff_job(data)
        if job is not None and job.writing and job.path:
            return job.path
        current = data.get("limit_path")
        if isinstance(current, str) and not Path(current).exists():
            return current
        fresh = handoff.new_handoff_path(project)
        handoff.record_reserved(project, fresh, ChainLink(_state.HOST, session_id, transcript))
        data["limit_path"] = str(fresh)
        return str(fresh)

    return Path(doc.update(choose))
