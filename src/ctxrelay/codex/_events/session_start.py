"""SessionStart on Codex (fired right before the first prompt of a thread): a fresh
session (``startup``, or ``clear`` after ``/clear``) is pointed at the newest handoff
file no session has started from (:func:`ctxrelay.codex.handoff.resume_note`). The
injection is recorded, not consumed: the file is consumed once this session's first
response is in its rollout, so a session killed before it leaves the file for the next
start. Every start records which thread its Codex process runs now, for
``session_history``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.codex.handoff import record_start, resume_note
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import SessionStartPayload

__all__ = ["handle"]


def handle(payload: SessionStartPayload) -> Answer | None:
    record_start(payload)  # the thread session_history's server serves
    note = resume_note(payload)
    if note is None:
        return None
    return Answer(context=note)
