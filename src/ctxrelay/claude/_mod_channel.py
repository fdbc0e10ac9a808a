"""The Stop hook's side of the auto-handoff mod: what it tells the mod, and when.

In auto mode the Stop hook asks Claude to write the handoff file and sees it written
(:mod:`ctxrelay.claude._events.stop`). Only something inside Claude Code can then run
``/clear`` and submit a prompt: the mod ``plugin/hooks/automod.js``, a hooks module
Claude Code 2.1.287 and later load. Every decision stays here, in the Stop hook's locked
update of the session's state; the mod only carries out what one Stop answer says, in
the last line of its ``additionalContext`` (:data:`MARK` and a JSON object), which the
mod takes out before the model could read it. One hook command gives the mod one entry,
so the write prompt, when there is one, comes first in the same entry and the mod keeps
it (the turn goes on with it); an entry that was only the mod's line is removed whole
(the turn ends):

- ``{"act": "hold"}`` while the write prompt goes out: the mod holds what the user types
  (and takes it back out of the prompt box) until the turn is over, and, if a clear
  follows, until the resume prompt is in. A prompt typed while the Stop hooks still run
  waits in the mod for this answer (5 s at most), so it is held too;
- ``{"act": "clear", "id": <file>, "prompt": <text>}`` once, when the handoff is ready:
  the mod runs ``/clear`` when the turn completes, ``SessionStart`` injects the file into
  the fresh session, and the mod submits ``prompt``. The job's ``automod`` field records
  that it was sent, so no later Stop, in this process or after a restart, sends it again.

The mod sets :data:`MOD_ENV` to Claude Code's own process id (``CLAUDE_PID``) in an
interactive session; the entries go out only while a hook sees the two equal, so a
nested ``claude`` (which inherits the variable and has another pid) and a headless run
(``ctxrelay claude run`` starts its fresh sessions itself) get none. Where the mod did
not load in an interactive session, behaviour stays as without it, and the user is told
once per session why auto mode cannot clear by itself (:func:`not_loaded_text`).

Imports only ``os``, the hook's JSON codec and the session's handoff job (which the Stop
hook has loaded already): this runs in the Stop hook's process.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.claude._events._payloads import HookAnswer

__all__ = [
    "ATTENDED_ENV",
    "MARK",
    "MIN_VERSION",
    "MOD_ENV",
    "cleared_text",
    "loaded",
    "not_loaded_text",
    "relay",
    "resume_text",
]

MOD_ENV = "CTXRELAY_AUTOMOD"
"""Set by the mod in Claude Code's process to ``CLAUDE_PID``; hooks inherit it."""

ATTENDED_ENV = "CLAUDE_CODE_SESSION_ATTENDED"
"""``1`` in a hook of Claude Code's interactive UI, ``0`` under ``claude -p`` and SDKs."""

MARK = "[ctxrelay-automod] "
"""How an ``additionalContext`` entry for the mod starts (``automod.js`` reads the same)."""

MIN_VERSION = "2.1.287"
"""The first Claude Code that loads hooks modules."""


def loaded() -> bool:
    """Whether the mod runs in the Claude Code process that started this hook."""
    pid = os.environ.get("CLAUDE_PID")
    return bool(pid) and os.environ.get(MOD_ENV) == pid


def _attended() -> bool:
    return os.environ.get(ATTENDED_ENV) == "1"


def cleared_text(path: str) -> str:
    """To the user, when the mod will clear: nothing for them to type."""
    return (
        f"ctxrelay: handoff written to {path}. Clearing the context: the fresh session "
        "resumes from this file by itself."
    )


def resume_text(path: str) -> str:
    """The prompt the mod submits in the fresh session, after ``SessionStart`` has
    injected the file (named here too, in case another session took it first)."""
    return (
        f"[ctxrelay] The context was cleared for a handoff. Continue the work from the "
        f"handoff file {path}, starting with its next step. The earlier sessions stay "
        "searchable with the mcp__ctxrelay__session_history tool."
    )


def not_loaded_text() -> str:
    """To the user, once per session: why auto mode stops at "run /clear" here."""
    return (
        "ctxrelay: auto mode cannot run /clear by itself in this session: ctxrelay's mod "
        f"did not load (it needs Claude Code {MIN_VERSION} or later, a trusted workspace, "
        "no --bare, and mods not turned off by settings or policy; "
        "'ctxrelay claude install' puts it in place)."
    )


def _signal(answer: HookAnswer | None, job: dict[str, Any]) -> HookAnswer:
    out: HookAnswer = answer.copy() if answer else {}
    extra = out.get("hookSpecificOutput")
    before = extra.get("additionalContext", "") if isinstance(extra, dict) else ""
    line = MARK + json.dumps(job)
    out["hookSpecificOutput"] = {
        "hookEventName": "Stop",
        "additionalContext": f"{before}\n\n{line}" if before else line,
    }
    return out


def _continues(answer: HookAnswer | None) -> bool:
    extra = answer.get("hookSpecificOutput") if answer else None
    return isinstance(extra, dict) and bool(extra.get("additionalContext"))


def _tell(answer: HookAnswer | None, text: str) -> HookAnswer:
    out: HookAnswer = answer.copy() if answer else {}
    shown = out.get("systemMessage")
    out["systemMessage"] = f"{shown}\n{text}" if shown else text
    return out


def relay(data: dict[str, Any], answer: HookAnswer | None, mode: str) -> HookAnswer | None:
    """The Stop answer with what the mod must do added; called inside the Stop hook's
    locked update of the session's state ``data``, right after the handover decided
    ``answer``. Changes nothing outside auto mode."""
    from ctxrelay.claude._state import handoff_job, set_handoff_job

    job = handoff_job(data)
    if mode != "auto" or job is None:
        return answer
    path = job.path
    if job.writing and _continues(answer):
        return _signal(answer, {"act": "hold"}) if loaded() else answer
    if not job.ready or job.automod is not None or path is None:
        return answer
    # The handoff just became ready: the one Stop that decides who clears.
    if not loaded():
        # A mod loaded later (a resumed session) does not clear.
        set_handoff_job(data, job.told("absent"))
        if _attended() and not data.get("automod_told"):
            data["automod_told"] = True
            return _tell(answer, not_loaded_text())
        return answer
    set_handoff_job(data, job.told("sent"))
    out: HookAnswer = answer.copy() if answer else {}
    out["systemMessage"] = cleared_text(path)
    return _signal(out, {"act": "clear", "id": path, "prompt": resume_text(path)})
