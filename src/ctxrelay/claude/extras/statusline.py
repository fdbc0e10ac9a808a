"""The statusline: the context share, a bar, and the tokens left to the handoff target of
the configured slider (:meth:`ctxrelay.claude.config.ClaudeConfig.budget`), counting
down (Claude Code runs ``ctxrelay claude statusline``, :mod:`ctxrelay.cli.claude.statusline`,
which prints :func:`status_line`).

Claude Code runs the ``statusLine`` command after each message (at most every 300 ms),
passing JSON on stdin (checked against Claude Code 2.1.332)::

    {"session_id": …, "model": {"id": "claude-opus-5-5", …},
     "workspace": {"project_dir": …}, "context_window": {"context_window_size": 1000000,
     "current_usage": {"input_tokens": 500, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 125000, "output_tokens": 3} | null, …}}

and shows the first line printed. The context of the latest request is input + cache
creation + cache read tokens (the same sum the hooks read from the transcript). The
window Claude Code reports here is the one place the hooks can learn it (the Stop payload
does not carry it; a model id alone does not say that ``claude-opus-5-5`` has 1M), so
this command records it in the session's state (:func:`ctxrelay.claude._state.record_window`).

It must be fast and never fail: stdlib only, no rich; bad input prints a short line and
exits 0 (a non-zero exit blanks the user's statusline).
"""

from __future__ import annotations

import os
from typing import Any

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.budget.triggers import main_budget
from ctxrelay.claude import _state
from ctxrelay.claude._limit import main_window, refresh, usable_limit
from ctxrelay.claude.config import load
from ctxrelay.claude.handoff import HANDOFF_DIR, consumed, skill_command
from ctxrelay.hooks.job import HandoffPhase
from ctxrelay.transcripts._hot import refused_too_long

__all__ = ["BAR_WIDTH", "render", "status_line"]

BAR_WIDTH = 10
_FULL, _EMPTY = "█", "░"
_PARTS = " ▏▎▍▌▋▊▉"


def _bar(share: float, width: int = BAR_WIDTH) -> str:
    share = min(max(share, 0.0), 1.0)
    eighths = round(share * width * 8)
    full, part = divmod(eighths, 8)
    text = _FULL * full
    if full < width:
        text += (_PARTS[part] if part else _EMPTY) + _EMPTY * (width - full - 1)
    return text


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _context_tokens(window_info: dict[str, Any]) -> int | None:
    usage = window_info.get("current_usage")
    if not isinstance(usage, dict):
        return None
    total = 0
    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        total += _int(usage.get(key)) or 0
    return total


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 1_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


def render(
    tokens: int | None,
    window: int,
    *,
    mode: str = "manual",
    handoff_phase: str | None = None,
    color: bool = False,
    command: str | None = None,
    threshold: float = CONTEXT_PERCENT,
    blocked: bool = False,
) -> str:
    """One statusline: ``ctx 13% ██▍░░░░░░░ 125.5k/1M · handoff in 474.5k (60%)``,
    counting down to the handoff target of the slider ``threshold`` (the policy core's:
    :func:`ctxrelay.budget.triggers.main_budget`). In manual mode, a due handoff names
    ``command``, the skill to run (when given). At Off it counts down to the usable
    limit, where tool calls are denied. ``blocked``: Claude Code refused to send the last
    request (its block point): the line says ``/clear``, never a stale phase."""
    used = tokens or 0
    share = used / window if window > 0 else 0.0
    budget = main_budget(max(window, 1), threshold)
    target = budget.handoff_target
    point = f"{budget.effective_threshold:g}%"
    # Floor, like the target's: the line never shows P% before the handoff is due.
    percent = used * 100 // window if window > 0 else 0
    head = f"ctx {percent}% {_bar(share)} {_short(used)}/{_short(window)}"
    if tokens is None:
        head = f"ctx –% {_bar(0)} 0/{_short(window)}"
    if mode == "off":
        tail, level = "handoff off", 0
    elif blocked:
        # Claude Code sends nothing more: no "writing" that cannot happen; ctxrelay writes
        # the handoff at /clear (:mod:`ctxrelay.claude._fallback`)
        tail, level = BLOCKED_TAIL, 2
    elif target is None:
        left = budget.usable_limit - used
        tail = f"slider off · limit in {_short(max(left, 0))}"
        level = 2 if left <= 0 else 1 if left <= window // 10 else 0
    elif handoff_phase is not None and (shown := _phase_tail(handoff_phase)) is not None:
        tail, level = shown, 2
    elif used >= target:
        tail = f"handoff due ({point} reached, +{_short(used - target)})"
        tail += f": {command}" if mode == "manual" and command else ""
        level = 2
    else:
        left = target - used
        tail = f"handoff in {_short(left)} ({point})"
        level = 1 if left <= window // 10 else 0
    line = f"{head} · {tail}"
    if not color:
        return line
    code = ("32", "33", "31")[level]
    return f"\x1b[{code}m{line}\x1b[0m"


BLOCKED_TAIL = "context limit reached: /clear continues from ctxrelay's handoff"
"""What the line says once Claude Code sends nothing more (:func:`render`)."""

_REFUSAL_TAIL_BYTES = 64 * 1024  # the refusal is the transcript's newest response


def _phase_tail(phase: str) -> str | None:
    """What the line says of a running handoff job in ``phase``."""
    if phase == HandoffPhase.WRITING:
        return "handoff: writing the file…"
    if phase == HandoffPhase.READY:
        return "handoff ready: /clear to continue"
    return None


def _clear_loads(path: str | None) -> bool:
    """Whether a ``/clear`` now would load the ready handoff at ``path``: the file is
    there and no session has started from it (nor was it dropped)."""
    if path is None or not os.path.isfile(path):
        return False
    project = path
    for _ in range(len(HANDOFF_DIR.parts) + 1):  # <project>/.ctxrelay/handoff/<file>
        project = os.path.dirname(project)
    return not consumed(project, os.path.basename(path))


def status_line(payload: Any) -> str:
    """The line Claude Code shows for one statusline payload (recording the window it
    reports on the way); never raises for a payload of the wrong shape."""
    if not isinstance(payload, dict):
        return "ctxrelay: no statusline data"
    info = payload.get("context_window")
    info = info if isinstance(info, dict) else {}
    reported = _int(info.get("context_window_size"))
    model_info = payload.get("model")
    model = model_info.get("id") if isinstance(model_info, dict) else None
    model = model if isinstance(model, str) else None
    session_id = payload.get("session_id")
    session_id = session_id if isinstance(session_id, str) and session_id else None
    workspace = payload.get("workspace")
    project = workspace.get("project_dir") if isinstance(workspace, dict) else None
    if not isinstance(project, str):
        cwd = payload.get("cwd")
        project = cwd if isinstance(cwd, str) else None

    cfg = load(project)
    window = main_window(cfg.context_window or reported, session_id, model)
    phase: str | None = None
    try:
        if reported:
            _state.record_window(session_id, model, reported)
        if session_id:
            doc = _state.session_state(session_id)
            current = doc.read()
            job = _state.handoff_job(current)
            phase = job.phase if job is not None else None
            written = job is not None and job.writing and os.path.isfile(job.path or "")
            if job is not None and (job.ready or written):
                # Ready (or written before the Stop hook saw it) while /clear would load
                # it; once a session started from it, or it is gone, no stage at all.
                phase = HandoffPhase.READY if _clear_loads(job.path) else None
            if (current.get("usable_limit"), current.get("mode")) != (
                usable_limit(window),
                cfg.main_handover,
            ):
                doc.update(lambda data: refresh(data, window, cfg.main_handover))
    except Exception:  # a broken state dir must not blank the statusline
        pass
    command = None
    if cfg.main_handover == "manual":
        command = skill_command(project)
    tokens = _context_tokens(info)
    transcript = payload.get("transcript_path")
    # Only once a handoff is due or asked for: then Claude Code may have stopped sending.
    due = phase == HandoffPhase.WRITING or (tokens or 0) >= usable_limit(window) - window // 10
    blocked = (
        due
        and isinstance(transcript, str)
        and refused_too_long(transcript, tail_bytes=_REFUSAL_TAIL_BYTES)
    )
    return render(
        tokens,
        window,
        mode=cfg.main_handover,
        handoff_phase=phase,
        color=True,
        command=command,
        threshold=cfg.threshold,
        blocked=blocked,
    )
