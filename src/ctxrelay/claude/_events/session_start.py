"""``SessionStart``: a session starts; an unfinished handoff of the project is offered.

No settings hook can type ``/clear``; the user does (told by the Stop hook), or the
auto-handoff mod does, and Claude Code then starts a new session with ``source: "clear"``.
Every main-session start records which session its Claude Code process now runs
(:func:`ctxrelay.hooks.chain.record_process`, by ``CLAUDE_PID``), which after ``/clear``
names the session that was cleared. Then the newest handoff file no session has started
from (written within a day; :func:`ctxrelay.claude.handoff.latest_unconsumed`, after
:func:`~ctxrelay.claude.handoff.settle` has marked the ones whose session did start) is
offered, when this person's sessions reserved or wrote it (:func:`ctxrelay.hooks.state.
owner`; the records live in the project, so another HOME, machine or CI run is offered
nothing of it):

- at ``/clear``, when it belongs to the chain of the session cleared (written by it, or
  asked of it, or offered to it at its own start): injected as ``additionalContext`` (the
  resume prompt, which names the file and its next step, and the file's content, up to
  ``INJECT_MAX_BYTES``), with one line to the person naming the file. An unrelated
  session's ``/clear`` injects nothing.
- at ``startup`` or ``resume`` (a restart after a crash, ``--continue``): in auto mode
  injected the same way, with one line saying so; in manual mode one line on how to
  continue from it (``/clear``) or drop it. When the session resumed is the one that
  wrote the file, it is not injected into its own writer: the line says to ``/clear``.
  While the handoff is in flight in another session that still runs (its writer, asked
  to write it or done and not cleared; or a fresh session it was injected into, before
  its first request), nothing is offered: it is that chain's. Whether a session runs is
  whether the Claude Code process its last start recorded (``claude_pid`` in its
  document) is alive and runs it now (:func:`ctxrelay.hooks.chain.running`), so after a
  crash of that process any start takes the handoff again.

A fresh session ``ctxrelay claude run`` or ``ctxrelay handoff continue`` starts names the
file in :data:`ctxrelay.hooks.handoff.RESUME_ENV`; its ``startup`` injects that file
whatever the mode and whoever wrote it (:func:`ctxrelay.hooks.handoff.continued`), as the
writer's ``/clear`` would.

Injecting does not consume the file: the session that got it has started from it once its
first request went out with it (read off its transcript at its ``Stop`` or at the next
start), so a crash before that leaves the file for the next start. Mode ``off`` and
``compact`` offer nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.claude import handoff
from ctxrelay.claude._fallback import write_fallback
from ctxrelay.claude._limit import main_window, refresh
from ctxrelay.claude._state import (
    HOST,
    handoff_job,
    session_doc,
    session_doc_path,
    session_state,
    set_handoff_job,
)
from ctxrelay.claude.config import load, project_dir_of
from ctxrelay.claude.host import injection_mark
from ctxrelay.hooks import chain
from ctxrelay.hooks.chain import ChainLink, describe, running
from ctxrelay.hooks.handoff import INJECT_MAX_BYTES
from ctxrelay.hooks.host import Answer
from ctxrelay.hooks.job import HandoffPhase
from ctxrelay.hooks.state import owner, read_document

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import SessionStartPayload

__all__ = ["handle", "injection", "loaded_text", "offer_text", "project_of"]


def injection(found: handoff.Handoff, project: object, writer: ChainLink | None = None) -> str:
    """The context a fresh session gets from a handoff file (naming the session that
    wrote it, of whichever agent)."""

    prompt = handoff.resume_prompt(
        found.path,
        next_step=found.next_step,
        project_dir=Path(str(project)),
        inline=True,
        writer=writer,
    )
    cut = (
        f"\n[ctxrelay] The file is longer than {INJECT_MAX_BYTES:,} bytes; the rest is "
        f"in {found.path}: read it before you start.\n"
        if found.truncated
        else ""
    )
    mark = injection_mark(found.path)
    return f"{prompt}\n\n{mark}\n{found.text.rstrip()}\n</handoff>{cut}"


def _seed_into(data: dict[str, Any], seed: dict[str, Any]) -> None:
    """The usable limit's seed, and the Claude Code process that runs the session now (a
    later start asks whether it still does: :func:`_live`)."""
    data.update(seed)
    pid = _claude_pid()
    if pid is None:
        data.pop("claude_pid", None)
    else:
        session_doc(data)["claude_pid"] = pid


def _cache_limit(session_id: str, mode: str, configured: int | None) -> None:
    """Seed the session's cached usable limit for the PreToolUse check (refined by the
    statusline and each Stop once the model and its window are known)."""
    window = main_window(configured, session_id, None)
    seed: dict[str, Any] = {}
    refresh(seed, window, mode)
    session_state(session_id).update(lambda data: _seed_into(data, seed))


def loaded_text(path: object, writer: ChainLink | None = None) -> str:
    """The one line after ``/clear`` (or a start) that injected a handoff; it names the
    agent that wrote it when that was another agent."""
    by = f" ({describe(writer)})" if writer is not None and writer.host != HOST else ""
    return (
        f"ctxrelay: continuing from the handoff {path}{by}: it goes to Claude with the "
        "first prompt of this session."
    )


def offer_text(path: object, *, writer: bool = False, by: ChainLink | None = None) -> str:
    """The one line at a start that leaves a waiting handoff to the user (naming the
    agent that wrote it when that was another agent)."""
    whose = "this session wrote" if writer else "no session has continued from"
    if by is not None and by.host != HOST and not writer:
        whose = f"{describe(by)} wrote and no session has continued from"
    return (
        f"ctxrelay: a handoff {whose} is waiting: {path}. Run /clear to continue from it "
        "in a fresh session, or 'ctxrelay handoff drop' to set it aside."
    )


def _claude_pid() -> int | None:
    text = os.environ.get("CLAUDE_PID", "")
    return int(text) if text.isdigit() else None


def _belongs(project: object, name: str, previous: object, writer: object) -> bool:
    """Whether the handoff ``name`` belongs to the chain of ``previous``, the session a
    ``/clear`` just replaced: it wrote the file, was asked to, was offered it, or had it
    injected and was cleared before its first request."""

    if not isinstance(previous, ChainLink):
        return False
    if isinstance(writer, ChainLink) and writer.session_id == previous.session_id:
        return True
    data = read_document(session_doc_path(previous.session_id))
    doc, job = session_doc(data), handoff_job(data)
    asked = job.path if job is not None else None
    return name in (doc.get("offered"), doc.get("injected")) or (
        asked is not None and os.path.basename(asked) == name
    )


def _live(link: object) -> bool:
    """Whether the Claude Code session ``link`` still runs: the process its last start
    recorded (``claude_pid``) is alive and runs it now (not killed, not cleared since)."""

    if not isinstance(link, ChainLink) or link.host != HOST:
        return False
    pid = session_doc(read_document(session_doc_path(link.session_id))).get("claude_pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return False  # started before the pid was recorded, or with no CLAUDE_PID
    now = running(HOST, pid)
    return now is not None and now.session_id == link.session_id


def _in_flight(project: object, name: str, writer: object, session_id: str) -> bool:
    """Whether the handoff ``name`` belongs to another session that still runs: its
    writer (asked to write it, or wrote it, and not cleared since), or a fresh session it
    was injected into that has not started from it yet. A start elsewhere leaves it to
    them; once their process is gone (a crash) it is any start's again."""

    links = [writer, *handoff.injected_into(Path(str(project)), name)]
    return any(_live(x) for x in links if isinstance(x, ChainLink) and x.session_id != session_id)


def _offered(data: dict[str, Any], name: str, own: bool) -> None:
    """The session was offered the handoff ``name``: its ``/clear`` takes it. The writer
    resumed (after a crash) is not cleared by the mod after the user's next prompt: that
    prompt would be lost to the fresh session. The user runs ``/clear``."""

    session_doc(data)["offered"] = name
    job = handoff_job(data)
    if (
        own
        and job is not None
        and job.phase is not HandoffPhase.USED  # used: another session started from it
        and os.path.basename(str(job.path)) == name
    ):
        set_handoff_job(data, job.offered())


def project_of(payload: SessionStartPayload) -> Path:
    """The project directory of the session (:func:`ctxrelay.claude.config.project_dir_of`)."""
    cwd = payload.get("cwd")
    return project_dir_of(cwd if isinstance(cwd, str) and cwd else None)


def handle(payload: SessionStartPayload) -> Answer | None:
    if payload.get("agent_id"):
        return None
    source = payload.get("source")
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str):
        return None
    project = project_of(payload)
    me = ChainLink(HOST, session_id, transcript)
    pid = _claude_pid()
    previous = None if pid is None else chain.record_process(pid, project, me)
    cfg = load(project)
    _cache_limit(session_id, cfg.main_handover, cfg.context_window)
    if source == "clear" and previous is not None and cfg.main_handover != "off":
        write_fallback(project, previous)  # it hit Claude Code's block before writing one
    if not handoff.handoff_dir(project).is_dir():
        return None  # no handoff was ever written here
    if cfg.main_handover == "off" or source not in ("startup", "resume", "clear"):
        return None
    handoff.settle(project)
    chosen = handoff.continued(project) if source == "startup" else None
    path = chosen or handoff.latest_unconsumed(project, owner=owner())
    if path is None:
        return None
    name = path.name
    writer = handoff.writer_of(project, name)
    if writer is not None and chain.written_by(project, name) is None:
        chain.record_written(project, name, writer)  # the Stop that saw it never ran
    if chosen is not None:
        pass  # ctxrelay claude run's fresh session: the chain's next, as at /clear
    elif source == "clear":
        if not _belongs(project, name, previous, writer):
            return None  # another chain's handoff: an unrelated /clear never takes it
    elif _in_flight(project, name, writer, session_id):
        return None  # another session's handoff in flight: its chain takes it
    elif (writer is not None and writer.session_id == session_id) or cfg.main_handover != "auto":
        own = writer is not None and writer.session_id == session_id
        session_state(session_id).update(lambda data: _offered(data, name, own))
        return Answer(notice=offer_text(path, writer=own, by=writer))
    found = handoff.read_handoff(path)
    if found is None:
        return None
    if not handoff.record_injected(project, path, me, pid=pid):
        return None  # another session's start took it a moment ago
    session_state(session_id).set("injected", name)  # its Stop looks whether it started
    return Answer(notice=loaded_text(path, writer), context=injection(found, project, writer))
