"""The OpenCode main session's handoff, over the core's handoff files and chain (the one
module of this host that uses :mod:`ctxrelay.hooks.handoff` and :mod:`ctxrelay.hooks.chain`).

The numbers: the context now is the newest finished step's prompt tokens (``input +
cache.read + cache.write`` of the assistant message OpenCode records for the step), from
the payload's ``step`` (the plugin's ``message.updated``; no process reads the database
for it, so no hook loads ``sqlite3`` but to settle a handoff); the window is the
model's ``limit.context`` (the payload's ``model``, from ``chat.params``), else the one
model table's; the slider and the mode ``ctxrelay opencode config``'s; the decision the
policy core's (:func:`~ctxrelay.budget.triggers.main_budget`,
:func:`~ctxrelay.budget.triggers.main_triggers`).

At the slider, once per window (a window is one OpenCode session: OpenCode cannot clear
a session's context, a fresh session is its fresh context):

- **auto**: the model is asked once, inside the turn (added to the result of the tool
  call that crossed the slider; at the turn's end, as a new prompt, when no call did), to
  finish its small step and write the handoff file to a reserved path
  (:func:`~ctxrelay.hooks.handoff.new_handoff_path`). When its ``write`` of that path
  has run (``tool.execute.after``), the answer is ``prompt`` with ``fresh``: the plugin
  creates a new session with the resume prompt (the file's content inline) as its first
  prompt, moves the interactive UI to it, and in ``opencode run`` waits for it inside
  that tool call, so the run goes on in the fresh session until it ends; the person is
  told which session the work went to. A file written another way is found at the
  turn's end (``session.idle``) and handed off the same way there.
- **manual**: the person sees one line naming the command and the model one note at the
  next prompt; the person types ``handoff`` and the same steps follow.

The fresh session is announced by the plugin (``fresh.started``) before its first
prompt goes out: the injection is recorded there (:func:`ctxrelay.hooks.handoff.
record_injected`), not consumed; the handoff is used up once the database holds the
fresh session's first response (:func:`ctxrelay.transcripts.opencode_started`), checked
at every turn's end and before every offer (:func:`settle`). Killed before that
response, the fresh session holds nothing: the next start is offered the handoff again.
A plain new session is offered the project's newest unused handoff at its first prompt
(``chat.message``), as the other hosts' starts are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.budget.triggers import context_window_for
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as files
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.host import Answer
from ctxrelay.hooks.state import owner
from ctxrelay.opencode._state import HOST, forget_reads, session_state
from ctxrelay.opencode.config import load
from ctxrelay.opencode.host import OPENCODE
from ctxrelay.transcripts import default_opencode_db, session_locator

__all__ = [
    "HANDOFF_WORDS",
    "WRITE_TOOLS",
    "ask_text",
    "chat_message",
    "fresh_started",
    "session_idle",
    "settle",
    "tool_after",
]

HANDOFF_WORDS = ("handoff", "/handoff", "hand off")
"""What the person types to hand off now (manual mode, or any time)."""

WRITE_TOOLS = ("write", "edit")
"""OpenCode's tools that write a file (``filePath``)."""


def _project(payload: Mapping[str, object]) -> Path | None:
    for key in ("directory", "worktree"):
        value = payload.get(key)
        if isinstance(value, str) and os.path.isabs(value):
            return Path(value)
    return None


def _link(session_id: object) -> ChainLink | None:
    if not isinstance(session_id, str) or not session_id:
        return None
    return ChainLink(HOST, session_id, session_locator(default_opencode_db(), session_id))


def ask_text(path: Path, reading: str) -> str:
    """What the model is asked (``reading``: the context's numbers, or why now)."""
    return (
        f"[ctxrelay] Hand off now: {reading}. Finish the small step you are on (do not "
        "start new work), then write a handoff file so a fresh session can continue "
        f"without this conversation, with your write tool, to exactly this path:\n\n"
        f"    {path}\n\nUse this layout (every section; be concrete: paths, commands, "
        f"numbers):\n\n{files.LAYOUT}\n"
        "After writing it, reply with one line naming the file and stop: the work then "
        "continues in a fresh session from the file."
    )


def settle(project: Path) -> None:
    """Consume the handoffs an OpenCode session has started from already (and, by their
    own rules, another host's), so none is offered twice."""
    files.settle(project, HOST, OPENCODE.started)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _step_context(step: object) -> tuple[int, str | None] | None:
    """The prompt tokens and model of the payload's newest finished step."""
    if not isinstance(step, dict) or step.get("summary") is True:
        return None
    tokens = step.get("tokens")
    if not isinstance(tokens, dict):
        return None
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    prompt = _count(tokens.get("input")) + _count(cache.get("read")) + _count(cache.get("write"))
    model = step.get("model_id")
    return (prompt, model if isinstance(model, str) else None) if prompt else None


def _reading(payload: Mapping[str, object], project: Path) -> files.SliderReading | None:
    now = _step_context(payload.get("step"))
    if now is None:
        return None  # no finished step seen yet: nothing to measure
    tokens, model_id = now
    model = payload.get("model")
    limit = model.get("context_limit") if isinstance(model, dict) else None
    window = context_window_for(model_id, limit if isinstance(limit, int) else None)
    return files.reading(tokens, window, load(project).threshold)


def _reserve(project: Path, me: ChainLink, data: dict[str, Any]) -> Path:
    path = files.reserve(project, me)
    data["path"] = str(path)
    data["asked"] = True
    return path


def _hand_off(project: Path, me: ChainLink) -> Answer | None:
    """The reserved file is written: the answer that starts the fresh session from it
    (once: the session's document then says it handed off)."""
    doc = session_state(me.session_id)

    def claim(data: dict[str, Any]) -> Path | None:
        asked = data.get("path")
        if not isinstance(asked, str) or data.get("handed") or not files.is_written(Path(asked)):
            return None
        data["handed"] = Path(asked).name
        return Path(asked)

    path = doc.update(claim)
    if path is None:
        return None
    chain.record_written(project, path.name, me)
    prompt = files.resume_prompt(project, path, writer=me)
    if prompt is None:
        return None
    forget_reads(me.session_id)
    shown = files.display(project, path)
    return Answer(
        prompt=prompt,
        clear=True,
        notice=f"ctxrelay: handed off from {shown}; the work continues in a fresh session",
    )


def _at_slider(payload: Mapping[str, object], me: ChainLink, project: Path) -> Answer | None:
    """At the slider: ask for the file (auto), or tell the person (manual); once per
    session. ``None`` below it, or when it was done already."""
    reading = _reading(payload, project)
    if reading is None or not reading.due:
        return None
    doc = session_state(me.session_id)
    if load(project).mode == "auto":

        def claim(data: dict[str, Any]) -> Path | None:
            return None if data.get("asked") else _reserve(project, me, data)

        reserved = doc.update(claim)
        return None if reserved is None else Answer(context=ask_text(reserved, reading.phrase))

    def notice_once(data: dict[str, Any]) -> bool:
        if data.get("noticed"):
            return False
        data.update(noticed=True, note=True)
        return True

    if not doc.update(notice_once):
        return None
    return Answer(notice=files.manual_notice(reading.phrase, "session"))


def _is_asked_path(payload: Mapping[str, object], project: Path, asked: object) -> bool:
    args = payload.get("args")
    target = args.get("filePath") if isinstance(args, dict) else None
    if not isinstance(asked, str) or not isinstance(target, str):
        return False
    if not files.is_handoff_path(project, target):
        return False
    return os.path.realpath(project / target) == os.path.realpath(asked)


def tool_after(payload: Mapping[str, object]) -> Answer | None:
    """After a tool ran in a main session: the handoff when it wrote the file asked for,
    else the ask (auto) or the notice (manual) at the slider, inside the turn."""
    me, project = _link(payload.get("session_id")), _project(payload)
    if me is None or project is None:
        return None
    data = session_state(me.session_id).read()
    if data.get("handed") or data.get("sub"):
        return None  # its work went to a fresh session; a subagent's never hands off
    if payload.get("tool") in WRITE_TOOLS and _is_asked_path(payload, project, data.get("path")):
        return _hand_off(project, me)
    return _at_slider(payload, me, project)


def session_idle(payload: Mapping[str, object]) -> Answer | None:
    """At the end of a turn: settle; hand off from a file written without the write tool;
    at the slider, ask by a new prompt (auto: no tool call crossed it) or tell the
    person (manual)."""
    me, project = _link(payload.get("session_id")), _project(payload)
    if me is None or project is None:
        return None
    doc = session_state(me.session_id)
    data = doc.read()
    files.settle_injected(project, doc, data.get("injected"), settle)
    if data.get("handed") or data.get("sub"):
        return None
    if data.get("asked"):
        return _hand_off(project, me)
    answer = _at_slider(payload, me, project)
    if answer is not None and answer.context:
        return Answer(prompt=answer.context)  # the turn ended: the ask is a new prompt
    return answer


def fresh_started(payload: Mapping[str, object]) -> Answer | None:
    """The plugin created the fresh session for a handoff, before its first prompt went
    out: record what it was given and which process runs it."""
    me, project = _link(payload.get("session_id")), _project(payload)
    before = _link(payload.get("from_session_id"))
    if me is None or project is None or before is None:
        return None
    handed = session_state(before.session_id).read().get("handed")
    if not isinstance(handed, str):
        return None
    path = files.handoff_dir(project) / handed
    chain.record_process(chain.host_process(), project, me)
    files.record_injected(project, path, me, pid=chain.host_process())
    session_state(me.session_id).update(lambda d: d.update(seen=True, injected=handed))
    return None


def chat_message(payload: Mapping[str, object]) -> Answer | None:
    """At a prompt: the person's ``handoff`` (ask for the file now), the first prompt of
    a new session (offer the newest unused handoff), or the manual note."""
    me, project = _link(payload.get("session_id")), _project(payload)
    if me is None or project is None:
        return None
    doc = session_state(me.session_id)
    data = doc.read()
    if data.get("sub"):
        return None
    prompt = payload.get("prompt")
    words = prompt.strip().lower() if isinstance(prompt, str) else ""
    if words in HANDOFF_WORDS and not data.get("handed"):
        reserved = doc.update(lambda d: _reserve(project, me, d))
        reading = _reading(payload, project)
        return Answer(context=ask_text(reserved, reading.phrase if reading else "the person asked"))
    if not data.get("seen"):
        doc.update(lambda d: d.update(seen=True))
        # the session this OpenCode process runs now, which session_history's server (a
        # child of the same process) asks for
        process = chain.host_process()
        chain.record_process(process, project, me)
        settle(project)
        # the handoff `ctxrelay handoff continue --in opencode` names, else the newest unused
        offered = files.continued(project) or files.latest_unconsumed(project, owner=owner())
        writer = None if offered is None else files.writer_of(project, offered.name)
        text = None if offered is None else files.resume_prompt(project, offered, writer)
        if (
            offered is not None
            and text is not None
            and files.record_injected(project, offered, me, pid=process)
        ):
            doc.set("injected", offered.name)
            return Answer(context=text)
    if data.get("note"):
        doc.update(lambda d: d.update(note=False))
        return Answer(context=files.MANUAL_NOTE)
    return None


def session_created(payload: Mapping[str, object]) -> Answer | None:
    """A subagent's session (``parent_id``) is not a main session: no handoff, no offer."""
    me = _link(payload.get("session_id"))
    if me is not None and payload.get("parent_id"):
        session_state(me.session_id).update(lambda d: d.update(sub=True, seen=True))
    return None
