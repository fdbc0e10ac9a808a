"""The handoff ctxrelay writes itself when the model no longer can.

Claude Code refuses to send a request from :data:`ctxrelay.budget.bounds.
CLAUDE_CODE_BLOCK_RESERVE` below the window; a tool result that jumps the gap between the
usable limit and that point ends the session's turns, and neither the write prompt nor
``/ctxrelay-handoff`` can run. No hook fires then (2.1.332: no ``Stop``, no
``StopFailure``), so the next chance is the ``/clear`` Claude Code tells the person to
run: its ``SessionStart`` names the session cleared, and when that session was asked for
a handoff it never wrote, or ended at the usable limit without one, this writes the file
from its transcript (the goal, the files touched, the commands, the last steps, how to
search the old session) at the reserved path, records the session as its writer, and the
usual ``/clear`` injection continues the work from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxrelay.claude import _state
from ctxrelay.claude.handoff import session_history_note
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as files
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.job import HandoffJob, HandoffPhase, JobTransitionError
from ctxrelay.transcripts import Message, conversation, latest_context
from ctxrelay.transcripts._hot import refused_too_long

__all__ = ["fallback_text", "write_fallback"]

_EDIT_TOOLS = frozenset(("Write", "Edit", "MultiEdit", "NotebookEdit"))
_LAST_STEPS = 12
_STEP_CHARS = 300
_GOAL_CHARS = 1_500


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _input(message: Message) -> dict[str, Any]:
    try:
        value = json.loads(message.text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def fallback_text(messages: list[Message], session_id: str) -> str:
    """The handoff file for a session that could not write its own, in the layout every
    host asks for (:data:`ctxrelay.hooks.handoff.SECTIONS`), from its conversation."""
    prompts = [m.text for m in messages if m.kind == "user" and not m.text.startswith("<")]
    goal = _short(prompts[0], _GOAL_CHARS) if prompts else "Not found in the transcript."
    touched: dict[str, None] = {}
    commands: list[str] = []
    for m in messages:
        if m.kind != "tool_call":
            continue
        args = _input(m)
        if m.name in _EDIT_TOOLS:
            path = args.get("file_path") or args.get("notebook_path")
            if isinstance(path, str):
                touched[path] = None
        elif m.name == "Bash" and isinstance(args.get("command"), str):
            commands.append(_short(args["command"], _STEP_CHARS))
    steps = [m for m in messages if m.kind in ("assistant", "tool_call")][-_LAST_STEPS:]
    lines = [
        f"- {m.name}: {_short(m.text, _STEP_CHARS)}"
        if m.kind == "tool_call"
        else f"- said: {_short(m.text, _STEP_CHARS)}"
        for m in steps
    ]
    later = [_short(p, _STEP_CHARS) for p in prompts[1:]][-3:]
    return "\n".join(
        [
            "# Handoff",
            "",
            "Written by ctxrelay from the transcript: the session reached Claude Code's "
            "context limit before it could write its own handoff.",
            "",
            "## Goal",
            goal,
            *(["", "Later prompts:", *(f"- {p}" for p in later)] if later else []),
            "",
            "## State",
            "Unknown beyond the last steps: the session stopped at the context limit, "
            "possibly in the middle of a step. Its last steps, oldest first:",
            *(lines or ["- none found"]),
            "",
            "## Decisions",
            "Not recorded here; search the earlier session (see Next step).",
            "",
            "## Files touched",
            *([f"- {p}" for p in touched] or ["- none"]),
            "",
            "## Commands that matter",
            *([f"- `{c}`" for c in commands[-5:]] or ["- none"]),
            "",
            "## Next step",
            "Check the files touched and the last steps above against the goal, finish the "
            f"step that was under way, then go on. The session that stopped was {session_id}. "
            + session_history_note(),
            "",
        ]
    )


def _needs_one(project: Path, data: dict[str, Any], link: ChainLink) -> Path | None:
    """Where the cleared session's missing handoff goes, ``None`` when it needs none: it
    was asked and never wrote the file, or it ended refused by Claude Code or at the
    usable limit, with no job."""
    job = _state.handoff_job(data)
    if job is not None:
        if job.phase in (HandoffPhase.WRITING, HandoffPhase.FAILED):
            path = Path(str(job.path))
            return None if path.exists() else path
        return None  # written, used: the chain goes on from the file
    if refused_too_long(link.transcript_path):
        return files.new_handoff_path(project)
    limit = data.get("usable_limit")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    try:
        reading = latest_context(link.transcript_path)
    except Exception:  # an unreadable transcript: nothing to write from
        return None
    if reading is None or reading.context_tokens is None or reading.context_tokens < limit:
        return None
    return files.new_handoff_path(project)


def write_fallback(project: Path, cleared: ChainLink) -> Path | None:
    """At ``/clear``: the handoff the cleared session could not write, written from its
    transcript and recorded as its own (``None`` when it needs none)."""
    doc = _state.session_state(cleared.session_id)
    path = _needs_one(project, doc.read(), cleared)
    if path is None or not project.is_dir():
        return None
    messages = list(conversation(cleared.transcript_path))
    if not messages:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fallback_text(messages, cleared.session_id), encoding="utf-8")
    chain.record_written(project, path.name, cleared)

    def settle(data: dict[str, Any]) -> None:
        job = _state.handoff_job(data)
        try:
            done = HandoffJob.found(str(path)) if job is None else job.offered()
        except JobTransitionError:
            return
        _state.set_handoff_job(data, done)

    doc.update(settle)
    return path
