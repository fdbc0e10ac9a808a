"""The Gemini main session's handoff, over the core's handoff files and chain (the one
module of this host that uses :mod:`ctxrelay.hooks.handoff` and :mod:`ctxrelay.hooks.chain`).

The numbers: the context now is the newest response's ``tokens.input`` in the session
file (:func:`ctxrelay.transcripts.gemini_context`), the window the one model table's
(:func:`ctxrelay.budget.triggers.context_window_for`), the slider and the mode
``ctxrelay gemini config``'s; the decision is the policy core's
(:func:`~ctxrelay.budget.triggers.main_budget`, :func:`~ctxrelay.budget.triggers.main_triggers`).

At the slider, once per window (a window ends at a clear):

- **auto**: the ``AfterAgent`` hook continues the turn once with the request to finish
  the small step and write the handoff file to a reserved path
  (:func:`~ctxrelay.hooks.handoff.new_handoff_path`). At the end of that continuation
  the file is there: the hook answers ``deny`` with ``clearContext``, and the CLI drops
  the model's history and continues in a fresh context with the resume prompt (the
  file's content inline) as its next prompt: same session, same session file.
- **manual**: the person sees one line (``systemMessage``) naming the command, the
  model one note at the next prompt; the person types ``handoff`` and the same two
  steps follow.

The loop guard is ctxrelay's own (the session's state document: what was asked, in
which window), not ``stop_hook_active``: the CLI sets that only when the continuation
made no tool call.

A fresh session (a new ``gemini``, or ``/clear``, which makes a new session id and
ignores ``SessionStart``'s context) is offered the project's newest unused handoff at
its first prompt (``BeforeAgent``'s ``additionalContext``). Either way the injection is
recorded with the session file's length then, not consumed: the handoff is used up once
the session file shows, after that length and before another clear, a response after the
user message naming it (:meth:`ctxrelay.gemini.host.GeminiHost.started`; the window that
wrote the file names it too, in the same file),
checked at every ``AfterAgent`` and before every offer (:func:`settle`); a crash before
that response leaves it to be offered again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.budget.triggers import context_window_for
from ctxrelay.gemini._state import HOST, forget_reads, session_state
from ctxrelay.gemini.config import load
from ctxrelay.gemini.host import GEMINI
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as files
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.host import Answer
from ctxrelay.transcripts import gemini_context

__all__ = [
    "HANDOFF_WORDS",
    "after_agent",
    "ask_text",
    "before_agent",
    "settle",
]

HANDOFF_WORDS = ("handoff", "/handoff", "hand off")
"""What the person types to hand off now (manual mode, or any time)."""


def _project(payload: Mapping[str, object]) -> Path | None:
    cwd = payload.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and os.path.isabs(cwd) else None


def _link(payload: Mapping[str, object]) -> ChainLink | None:
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str):
        return None
    return ChainLink(HOST, session, transcript)


def _length(link: ChainLink) -> int:
    """The session file's length now: where the window given a handoff begins (the clear
    this hook asks for, or the prompt this hook adds to, is written after it)."""
    try:
        return os.stat(link.transcript_path).st_size
    except OSError:
        return 0  # not written yet: the window is the whole file


def _follow(project: Path, injected: object, me: ChainLink) -> None:
    """When the CLI moved this session to another file since it was given a handoff: the
    injection follows it, read from that file's start. A clear in another minute than
    the session file's name starts a new file (``session-<minute>-<id>.jsonl``), with the
    same session id, whose first window is the one given the handoff."""
    if not isinstance(injected, str) or not injected:
        return
    for link, _ in files.injections(project, injected):
        if link.session_id == me.session_id and link.transcript_path != me.transcript_path:
            files.record_injected(project, files.handoff_dir(project) / injected, me, since=0)
            return


def ask_text(path: Path, reading: str) -> str:
    """What the model is asked (``reading``: the context's numbers, or why now)."""
    return (
        f"[ctxrelay] Hand off now: {reading}. Finish the small step you are on (do not "
        "start new work), then write a handoff file so a fresh context can continue "
        f"without this conversation, to exactly this path:\n\n    {path}\n\n"
        "Use this layout (every section; be concrete: paths, commands, numbers):\n\n"
        f"{files.LAYOUT}\n"
        "After writing it, reply with one line naming the file and stop: the context is "
        "then cleared and the work continues from the file."
    )


def settle(project: Path) -> None:
    """Consume the handoffs a Gemini session has started from already, so none is
    offered twice (another host's sessions are that host's to settle)."""
    files.settle(project, HOST, GEMINI.started)


def _reading(payload: Mapping[str, object], project: Path) -> files.SliderReading | None:
    """The context's numbers as a phrase, and whether they are at the slider."""
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str):
        return None
    now = gemini_context(transcript)
    if now is None:
        return None
    window = context_window_for(now.model)
    return files.reading(now.context_tokens, window, load(project).threshold)


def _reserve(project: Path, me: ChainLink, data: dict[str, Any]) -> Path:
    path = files.reserve(project, me)
    data["path"] = str(path)
    data["asked"] = int(data.get("window") or 0)
    return path


def after_agent(payload: Mapping[str, object]) -> Answer | None:
    """At the end of a main-session turn: settle, then hand off (clear and continue from
    the file asked for), ask for the file (auto), or tell the person (manual)."""
    me, project = _link(payload), _project(payload)
    if me is None or project is None:
        return None
    doc = session_state(me.session_id)
    data = doc.read()
    _follow(project, data.get("injected"), me)
    files.settle_injected(project, doc, data.get("injected"), settle)
    window = int(data.get("window") or 0)
    asked = data.get("path")
    if isinstance(asked, str) and data.get("asked") == window:
        path = Path(asked)
        if not files.is_written(path):
            doc.set("path", None)  # no file: not asked again in this window
            return None
        chain.record_written(project, path.name, me)
        prompt = files.resume_prompt(project, path, files.writer_of(project, path.name))
        if prompt is None:
            return None

        def cleared(d: dict[str, Any]) -> None:
            d.update(window=window + 1, injected=path.name, path=None, asked=None)

        doc.update(cleared)
        files.record_injected(project, path, me, since=_length(me))
        forget_reads(me.session_id)
        note = f"ctxrelay: handed off to a fresh context from {files.display(project, path)}"
        return Answer(prompt=prompt, clear=True, notice=note)
    reading = _reading(payload, project)
    if reading is None or not reading.due:
        return None
    if load(project).mode == "auto":

        def claim(d: dict[str, Any]) -> Path | None:
            before = d.get("asked")
            if isinstance(before, int) and before >= window:
                return None
            return _reserve(project, me, d)

        reserved = doc.update(claim)
        return None if reserved is None else Answer(prompt=ask_text(reserved, reading.phrase))

    def notice_once(d: dict[str, Any]) -> bool:
        if d.get("noticed") == window:
            return False
        d.update(noticed=window, note=True)
        return True

    if not doc.update(notice_once):
        return None
    return Answer(notice=files.manual_notice(reading.phrase, "context"))


def before_agent(payload: Mapping[str, object]) -> Answer | None:
    """At a prompt: the person's ``handoff`` (ask for the file now), the first prompt of
    a fresh session (offer the newest unused handoff), or the manual note."""
    me, project = _link(payload), _project(payload)
    if me is None or project is None:
        return None
    doc = session_state(me.session_id)
    prompt = payload.get("prompt")
    words = prompt.strip().lower() if isinstance(prompt, str) else ""
    if words in HANDOFF_WORDS:
        reserved = doc.update(lambda d: _reserve(project, me, d))
        reading = _reading(payload, project)
        return Answer(context=ask_text(reserved, reading.phrase if reading else "the person asked"))
    data = doc.read()
    if not data.get("seen"):
        doc.update(lambda d: d.update(seen=True))
        # the session this CLI process runs now, which session_history's server (a child
        # of the same process) asks for
        chain.record_process(chain.host_process(), project, me)
        settle(project)
        # the handoff `ctxrelay handoff continue --in gemini` names, else the newest unused
        offered = files.continued(project) or files.latest_unconsumed(project)
        text = (
            None
            if offered is None
            else files.resume_prompt(project, offered, files.writer_of(project, offered.name))
        )
        if offered is not None and text is not None:
            files.record_injected(project, offered, me, since=_length(me))
            doc.set("injected", offered.name)
            return Answer(context=text)
    if data.get("note"):
        doc.update(lambda d: d.update(note=False))
        return Answer(context=files.MANUAL_NOTE)
    return None
