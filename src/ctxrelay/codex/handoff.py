"""The Codex main session's handoff: at the slider the ``Stop`` hook asks once for a
handoff file; the next session's ``SessionStart`` (``startup``, or ``clear`` after
``/clear`` in the TUI) points it at the file.

The handoff files, their records and their once-only and crash rules are every host's
(:mod:`ctxrelay.hooks.handoff`): one project's handoffs are one chain whichever host
wrote them. The ask reserves a name (:func:`~ctxrelay.hooks.handoff.new_handoff_path`)
and records the session asked (:func:`~ctxrelay.hooks.handoff.record_reserved`); the
first ``Stop`` of that session that finds the file records it as the writer
(:func:`ctxrelay.hooks.chain.record_written`). ``SessionStart`` injects the newest
unconsumed file and records where (:func:`~ctxrelay.hooks.handoff.record_injected`)
without consuming it: the file is consumed once that session's first response is in
its rollout (:meth:`ctxrelay.codex.host.CodexHost.started`), checked at its ``Stop``
and at the next ``SessionStart`` in the project (:func:`settle`). A session killed
before its first response leaves the file to be offered again.

The numbers: the context now from the rollout (:func:`ctxrelay.transcripts.codex_context`:
the newest response's input + output), the slider from ``ctxrelay codex config``, the
window from :func:`main_window`. The decision is the policy core's
(:func:`~ctxrelay.budget.triggers.main_budget`, :func:`~ctxrelay.budget.triggers.main_triggers`).

Once only: a ``Stop`` block makes Codex continue the same turn with ``stop_hook_active``
set, which is never blocked again, and the session's state document records the ask, so
a later turn of the same session is not asked twice.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.budget.triggers import context_window_for, main_budget, main_triggers
from ctxrelay.codex._state import HOST, session_state
from ctxrelay.codex.config import codex_home, load, project_root
from ctxrelay.codex.host import CODEX
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as files
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.state import owner
from ctxrelay.transcripts import CodexContext, codex_context, codex_source

__all__ = [
    "after_turn",
    "ask_text",
    "configured_window",
    "handoff_request",
    "main_window",
    "record_start",
    "resume_note",
    "settle",
]


EXEC_SOURCE = "exec"
"""The rollout's ``session_meta.source`` of a ``codex exec`` run (0.171)."""


def _project(payload: Mapping[str, object]) -> Path | None:
    """The project of the session: its repository's root, from any folder in it."""
    cwd = payload.get("cwd")
    return project_root(cwd) if isinstance(cwd, str) and os.path.isabs(cwd) else None


def _link(payload: Mapping[str, object]) -> ChainLink | None:
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str):
        return None
    return ChainLink(HOST, session, transcript)


def configured_window() -> int | None:
    """``model_context_window`` of the user's ``config.toml``, where it is set: the
    window Codex is told the model has (Codex itself works to 95% of it)."""
    try:
        with open(codex_home() / "config.toml", "rb") as handle:
            value = tomllib.load(handle).get("model_context_window")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def main_window(now: CodexContext, model: object) -> int:
    """The window Codex works to, the one rule of this host: the ``model_context_window``
    Codex wrote into the rollout (its effective window, 95% of the configured one: 258,400
    for every model on 0.171), else ``model_context_window`` of ``config.toml``, else the
    model table (:func:`ctxrelay.budget.triggers.context_window_for`)."""
    if now.window:
        return now.window
    return context_window_for(model if isinstance(model, str) else None, configured_window())


_AT_STOP = (
    "After writing it, reply with one line naming the file and stop. The user starts "
    "the fresh session (/clear, or a new codex); it is pointed at the file."
)
_MID_TURN = (
    "After writing it, end this turn with your answer to the user: what is done and what "
    "is left (not a line about the file; the next session is pointed at it)."
)


def ask_text(
    path: Path, percent: float, tokens: int, window: int, *, mid_turn: bool = False
) -> str:
    """What the model is asked at the slider: at ``Stop`` as a hook prompt, or inside a
    turn (``mid_turn``) as ``PostToolUse`` context, where the turn's last reply is still
    the answer ``codex exec`` prints."""
    return (
        f"[ctxrelay] Hand off now: the context is {tokens:,} tokens, {percent:.0f}% of the "
        f"{window:,}-token window. Finish the small step you are on (do not start new "
        "work), then write a handoff file so a fresh session can continue without this "
        f"conversation, to exactly this path:\n\n    {path}\n\n"
        "Use this layout (every section; be concrete: paths, commands, numbers):\n\n"
        f"{files.LAYOUT}\n" + (_MID_TURN if mid_turn else _AT_STOP)
    )


def handoff_request(payload: Mapping[str, object], *, mid_turn: bool = False) -> str | None:
    """At the slider, once per session: the ask (``mid_turn``: a ``PostToolUse``'s
    context; else the ``Stop`` block's reason); else ``None``. ``codex exec`` is never
    asked at ``Stop``: the turn it continues would end with the reply about the file, and
    that reply would replace the task's answer on stdout and in ``-o``."""
    if payload.get("stop_hook_active") is True or payload.get("agent_id"):
        return None
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    project = _project(payload)
    if not isinstance(session, str) or not isinstance(transcript, str) or project is None:
        return None
    if not mid_turn and codex_source(transcript) == EXEC_SOURCE:
        return None
    now = codex_context(transcript)
    if now is None or now.context_tokens is None:
        return None
    window = main_window(now, now.model or payload.get("model"))
    target = main_budget(window, load(project).threshold).handoff_target
    if not main_triggers(now.context_tokens, target, task_completed=False):
        return None

    def claim(data: dict[str, Any]) -> bool:
        if data.get("asked"):
            return False
        data["asked"] = True
        return True

    if not session_state(session).update(claim):
        return None
    path = files.reserve(project, ChainLink(HOST, session, transcript))
    session_state(session).set("path", str(path))
    percent = 100 * now.context_tokens / window
    return ask_text(path, percent, now.context_tokens, window, mid_turn=mid_turn)


def settle(project: Path) -> None:
    """Before a fresh session is offered a handoff: consume the ones a Codex thread has
    started from already (:meth:`~ctxrelay.codex.host.CodexHost.started`), so none is
    offered twice. A handoff injected into another host's session is that host's to
    settle."""
    files.settle(project, HOST, CODEX.started)


def after_turn(payload: Mapping[str, object]) -> None:
    """At every main-session ``Stop``: a handoff injected into this session is consumed
    once its first response is in the rollout, and the handoff file it was asked for is
    recorded as its own once it exists."""
    if payload.get("agent_id"):
        return
    me, project = _link(payload), _project(payload)
    if me is None or project is None:
        return
    doc = session_state(me.session_id)
    data = doc.read()
    asked = data.get("path")
    files.settle_injected(project, doc, data.get("injected"), settle)
    if isinstance(asked, str) and not data.get("written"):
        path = Path(asked)
        try:
            ready = path.is_file() and path.stat().st_size > 0
        except OSError:
            ready = False
        if ready:
            chain.record_written(project, path.name, me)
            doc.set("written", True)


def record_start(payload: Mapping[str, object]) -> None:
    """At every main-thread start: the thread the Codex process that runs this hook runs
    now (:func:`ctxrelay.hooks.chain.record_process`), which ``session_history``'s server,
    a child of that process, asks for."""
    me, project = _link(payload), _project(payload)
    if me is not None and project is not None and not payload.get("agent_id"):
        chain.record_process(chain.host_process(), project, me)


def resume_note(payload: Mapping[str, object]) -> str | None:
    """For a fresh session (``startup`` or ``clear``): a short note that names the
    newest handoff file no session has started from yet, and its next step, when this
    person's sessions reserved or wrote it (another person's handoff in a shared project
    is theirs, or taken on purpose: a thread ``ctxrelay handoff continue`` starts is given
    the file it names, :func:`ctxrelay.hooks.handoff.continued`); ``None`` otherwise. The
    injection is recorded, not consumed (:func:`after_turn`, :func:`settle`)."""
    if payload.get("source") not in ("startup", "clear"):
        return None
    me, project = _link(payload), _project(payload)
    if me is None or project is None:
        return None  # no thread to record the injection against
    settle(project)
    chosen = files.continued(project) if payload.get("source") == "startup" else None
    path = chosen or files.latest_unconsumed(project, owner=owner())
    if path is None:
        return None
    handoff = files.read_handoff(path)
    if handoff is None:
        return None
    if not files.record_injected(project, path, me, pid=chain.host_process()):
        return None  # another session's start took it a moment ago
    session_state(me.session_id).set("injected", path.name)
    writer = files.writer_of(project, path.name)
    return files.resume_text(path, next_step=handoff.next_step, project_dir=project, writer=writer)
