"""The Codex main session's handoff: at the slider the ``Stop`` hook asks once for a
handoff file; the next session's ``SessionStart`` (``startup``, or ``clear`` after
``/clear`` in the TUI) points it at the file.

The handoff files are the Claude Code host's (:mod:`ctxrelay.claude.handoff`), used
only through its public functions: :func:`~ctxrelay.claude.handoff.new_handoff_path`
(a reserved name), :data:`~ctxrelay.claude.handoff.LAYOUT`,
:func:`~ctxrelay.claude.handoff.latest_unconsumed`,
:func:`~ctxrelay.claude.handoff.mark_consumed`,
:func:`~ctxrelay.claude.handoff.read_handoff` and
:func:`~ctxrelay.claude.handoff.resume_prompt`. So one project's handoffs are one chain
whichever host wrote them, and the consumption rules are that module's.

The numbers: the context now from the rollout (:func:`ctxrelay.transcripts.codex_context`:
the newest response's input + output), the slider from ``ctxrelay codex config``, the
window from the one model table (:func:`ctxrelay.budget.triggers.context_window_for`),
unless the user's ``config.toml`` sets ``model_context_window``. The decision is the policy core's
(:func:`~ctxrelay.budget.triggers.main_budget`, :func:`~ctxrelay.budget.triggers.main_triggers`).

Once only: a ``Stop`` block makes Codex continue the same turn with ``stop_hook_active``
set, which is never blocked again, and the session's state document records the ask, so
a later turn of the same session is not asked twice. Stdlib only (the hooks import it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ask_text", "configured_window", "handoff_request", "resume_note"]


def _session_doc(session: str) -> Any:
    from ctxrelay.claude._state import StateFile, safe_name, state_dir

    return StateFile(Path(state_dir()) / "codex-sessions" / f"{safe_name(session)}.json")


def _project(payload: Mapping[str, object]) -> Path | None:
    cwd = payload.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and os.path.isabs(cwd) else None


def configured_window() -> int | None:
    """``model_context_window`` of the user's ``config.toml``, where it is set: the
    window Codex is told the model has (Codex itself works to 95% of it)."""
    import tomllib

    from ctxrelay.codex.config import codex_home

    try:
        with open(codex_home() / "config.toml", "rb") as handle:
            value = tomllib.load(handle).get("model_context_window")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def ask_text(path: Path, percent: float, tokens: int, window: int) -> str:
    """What the model is asked at the slider (Codex shows it as a hook prompt)."""
    from ctxrelay.claude.handoff import LAYOUT

    return (
        f"[ctxrelay] Hand off now: the context is {tokens:,} tokens, {percent:.0f}% of the "
        f"{window:,}-token window. Finish the small step you are on (do not start new "
        "work), then write a handoff file so a fresh session can continue without this "
        f"conversation, to exactly this path:\n\n    {path}\n\n"
        "Use this layout (every section; be concrete: paths, commands, numbers):\n\n"
        f"{LAYOUT}\n"
        "After writing it, reply with one line naming the file and stop. The user starts "
        "the fresh session (/clear, or a new codex); it is pointed at the file."
    )


def handoff_request(payload: Mapping[str, object]) -> str | None:
    """At the slider, once per session: the ``Stop`` block's reason; else ``None``."""
    if payload.get("stop_hook_active") is True or payload.get("agent_id"):
        return None
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    project = _project(payload)
    if not isinstance(session, str) or not isinstance(transcript, str) or project is None:
        return None
    from ctxrelay.transcripts import codex_context

    now = codex_context(transcript)
    if now is None or now.context_tokens is None:
        return None
    from ctxrelay.budget.triggers import context_window_for, main_budget, main_triggers
    from ctxrelay.codex.config import load

    model = now.model or payload.get("model")
    window = context_window_for(model if isinstance(model, str) else None, configured_window())
    target = main_budget(window, load(project).threshold).handoff_target
    if not main_triggers(now.context_tokens, target, task_completed=False):
        return None

    def claim(data: dict[str, Any]) -> bool:
        if data.get("asked"):
            return False
        data["asked"] = True
        return True

    if not _session_doc(session).update(claim):
        return None
    from ctxrelay.claude.handoff import new_handoff_path

    path = new_handoff_path(project)
    percent = 100 * now.context_tokens / window
    return ask_text(path, percent, now.context_tokens, window)


def resume_note(payload: Mapping[str, object]) -> str | None:
    """For a fresh session (``startup`` or ``clear``): a short note that names the
    newest handoff file no session resumed from yet, and its next step; ``None`` when
    there is none. The file is marked consumed."""
    if payload.get("source") not in ("startup", "clear"):
        return None
    project = _project(payload)
    if project is None:
        return None
    from ctxrelay.claude.handoff import (
        latest_unconsumed,
        mark_consumed,
        read_handoff,
        resume_prompt,
    )

    path = latest_unconsumed(project)
    if path is None or not mark_consumed(project, path):
        return None
    handoff = read_handoff(path)
    step = None if handoff is None else handoff.next_step
    return resume_prompt(path, next_step=step, project_dir=project)
