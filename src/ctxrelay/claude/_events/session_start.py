"""``SessionStart``: after ``/clear``, the fresh session resumes from the latest handoff.

No hook can type ``/clear``; the user does (told by the Stop hook), and Claude Code then
starts a new session with ``source: "clear"``. This hook answers it with the newest
handoff file no session has resumed from yet (written within a day), as
``additionalContext``: the resume prompt, which names the file and its next step, and the
file's content (up to ``INJECT_MAX_BYTES``). The file is marked consumed under the
project's lock, so two fresh sessions never both resume from it. Other sources (startup,
resume, compact) and mode ``off`` add nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# The config, the handoff files and the policy core are imported by the functions that
# use them: a startup whose seed stamp holds needs none of them.
if TYPE_CHECKING:
    from ctxrelay.claude import handoff
    from ctxrelay.claude._events._payloads import HookAnswer, SessionStartPayload

__all__ = ["handle", "injection"]


def injection(found: handoff.Handoff, project: object) -> str:
    """The context a fresh session gets from a handoff file."""
    from pathlib import Path

    from ctxrelay.claude import handoff

    prompt = handoff.resume_prompt(
        found.path, next_step=found.next_step, project_dir=Path(str(project)), inline=True
    )
    cut = (
        f"\n[ctxrelay] The file is longer than {handoff.INJECT_MAX_BYTES:,} bytes; the rest is "
        f"in {found.path}: read it before you start.\n"
        if found.truncated
        else ""
    )
    return f'{prompt}\n\n<handoff path="{found.path}">\n{found.text.rstrip()}\n</handoff>{cut}'


def _seed_path(cwd: str) -> str:
    """The document of the seed stamp of sessions started in ``cwd`` (a short checksum
    names it; the stamp itself holds the cwd, so a collision only costs the full path)."""
    import zlib

    from ctxrelay.claude._state import state_dir

    key = zlib.crc32(cwd.encode("utf-8", "surrogatepass"))
    return os.path.join(state_dir(), "starts", f"{key:08x}-{len(cwd)}.json")


def _seeded(payload: SessionStartPayload) -> bool:
    """Seed the session's cached usable limit from the stamp the last full start in this
    directory left, if it still holds (:mod:`._stamp`); False when it does not."""
    from ctxrelay.claude._events import _stamp
    from ctxrelay.claude._state import read_document, session_doc_path, update_document

    session_id, cwd = payload.get("session_id"), payload.get("cwd")
    if not isinstance(session_id, str) or not session_id or not isinstance(cwd, str):
        return False
    found = read_document(_seed_path(cwd))
    seed = found.get("seed")
    if not isinstance(seed, dict) or not _stamp.holds(found, cwd):
        return False
    path = session_doc_path(session_id)
    if read_document(path).get("window") != found.get("recorded"):
        return False  # the statusline recorded this session's window: the full path
    update_document(path, lambda data: data.update(seed))
    return True


def _cache_limit(
    payload: SessionStartPayload, project: object, mode: str, configured: int | None
) -> None:
    """Seed the session's cached usable limit for the PreToolUse check (refined by the
    statusline and each Stop once the model and its window are known), and leave the
    seed's stamp for the next session started here."""
    from pathlib import Path

    from ctxrelay.budget.triggers import context_window_for
    from ctxrelay.claude import _state
    from ctxrelay.claude._events import _stamp
    from ctxrelay.claude._limit import refresh

    session_id, cwd = payload.get("session_id"), payload.get("cwd")
    if not isinstance(session_id, str) or not session_id:
        return
    doc = _state.session_state(session_id)
    recorded = doc.get("window")
    window = context_window_for(None, configured or _state.recorded_window(session_id, None))
    seed: dict[str, object] = {}
    refresh(seed, window, mode)
    doc.update(lambda data: data.update(seed))
    if isinstance(cwd, str) and not recorded:
        found = _stamp.stamp(cwd, Path(str(project)), seed=seed, recorded=recorded)
        _state.update_document(_seed_path(cwd), lambda data: data.update(found))


def handle(payload: SessionStartPayload) -> HookAnswer | None:
    if payload.get("agent_id"):
        return None
    if payload.get("source") != "clear" and _seeded(payload):
        return None  # nothing to resume, and the seed stamp still holds
    from ctxrelay.claude import handoff
    from ctxrelay.claude.config import load, project_dir_of

    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    cfg = load(project)
    _cache_limit(payload, project, cfg.main_handover, cfg.context_window)
    if payload.get("source") != "clear" or cfg.main_handover == "off":
        return None
    path = handoff.latest_unconsumed(project)
    if path is None:
        return None
    found = handoff.read_handoff(path)
    if found is None or not handoff.mark_consumed(project, path):
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": injection(found, project),
        }
    }
