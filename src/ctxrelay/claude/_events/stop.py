"""``Stop`` (end of a main-session turn): the main session's handoff triggers.

Triggers (:func:`ctxrelay.budget.triggers.main_triggers`): the context reaches the
handoff target of the configured slider (:meth:`ctxrelay.claude.config.ClaudeConfig.budget`,
``CONTEXT_PERCENT`` of the window by default), and a task was marked completed during the
turn. A slider at 100 (Off) fires neither; the usable-limit deny still holds. What
happens depends on the mode (:mod:`ctxrelay.claude.config`):

- ``manual``: a ``systemMessage`` the user sees, asking to run the handoff skill (by the
  name that works here, :func:`ctxrelay.claude.handoff.skill_command`); once for each kind
  of trigger in an episode.
- ``auto``: the hook answers with the write prompt as ``hookSpecificOutput.
  additionalContext`` (exit 0), which Claude Code draws as ``Stop hook says: …`` (no
  problem label, no command line to the model) and sends as ``Stop hook additional
  context``: Claude keeps going and writes the handoff file. The hook then waits up to
  ``HANDOFF_WAIT_TURNS`` turns for the file, submits the write prompt again at most
  ``HANDOFF_RETRY_MAX`` times, and when the file exists marks the handoff ready:
  ``ctxrelay claude run`` starts the fresh session itself; interactively, the user is
  told to run ``/clear`` (or the auto-handoff mod runs it).
- ``off``: nothing.

The Stop answer also carries the queued notices of subagents that stopped short
(:func:`ctxrelay.claude._notices.main_thread_notice`), so they need not wait for the next
prompt: in the ``systemMessage`` (to the user), or after the write prompt when the
answer makes the turn go on (Claude reads it while it writes the handoff).

The Stop that sees a handoff file written records its writer in the chain
(:func:`ctxrelay.hooks.chain.record_written`), and a fresh session's Stop checks whether
its first request went out with the handoff injected at its start
(:func:`ctxrelay.claude.handoff.settle`), which consumes the file.

An episode ends at a handoff (a handoff file written in this session) or ``/clear`` (a new
session id, so a new state document). All state is in the session's state document,
changed under its lock, so two Stop hooks never both hint or both start a handoff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.budget.bounds import CONTEXT_PERCENT, HANDOFF_RETRY_MAX, HANDOFF_WAIT_TURNS
from ctxrelay.budget.triggers import completed_task_in, context_window_for, main_triggers
from ctxrelay.claude import _state
from ctxrelay.claude._events import _stamp
from ctxrelay.claude._limit import refresh
from ctxrelay.claude._state import HOST
from ctxrelay.hooks.state import ONCE, claim

# The config and the handoff files are imported by the functions that use them: most
# turns end with nothing to do (:func:`_quiet` answers those without them).
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ctxrelay.budget.triggers import MainTrigger
    from ctxrelay.claude._events._payloads import HookAnswer, StopPayload
    from ctxrelay.claude.config import ClaudeConfig
    from ctxrelay.hooks.chain import ChainLink
    from ctxrelay.hooks.job import HandoffJob
    from ctxrelay.hooks.state import StateFile

__all__ = [
    "failed_text",
    "handle",
    "hint_text",
    "ready_text",
    "reason_text",
    "still_ready_text",
    "with_notice",
    "write_answer",
]

_WRITE_TOOLS = frozenset(("Write", "Edit", "MultiEdit"))


def reason_text(
    trigger: MainTrigger, tokens: int | None, window: int, point: float = CONTEXT_PERCENT
) -> str:
    """Why a handoff is due, with the numbers; ``point`` is the slider as applied."""
    from ctxrelay.budget.triggers import MainTrigger

    if trigger is MainTrigger.CONTEXT and tokens is not None:
        share = tokens * 100 // window
        return (
            f"the context is {tokens:,} tokens, {share}% of the {window:,}-token window "
            f"(the handoff point is {point:g}%)"
        )
    return "a task was just marked completed, a natural point to continue in a fresh session"


def hint_text(
    triggers: list[MainTrigger],
    tokens: int | None,
    window: int,
    command: str | None = None,
    point: float = CONTEXT_PERCENT,
) -> str:
    """The manual mode's hint to the user; ``command`` defaults to the skill's name here."""
    from ctxrelay.claude import handoff

    why = "; ".join(reason_text(t, tokens, window, point) for t in triggers)
    command = command or handoff.skill_command()
    return (
        f"ctxrelay: {why[0].upper()}{why[1:]}. Run {command} to write a handoff "
        "file, then /clear: the fresh session resumes from it."
    )


def ready_text(path: Path) -> str:
    """Auto mode, to the user: the file is written."""
    return (
        f"ctxrelay: handoff written to {path}. Run /clear to continue in a fresh session; "
        "it resumes from this file."
    )


def still_ready_text(path: Path) -> str:
    """Auto mode, to the user: a trigger fired again while a written handoff waits."""
    return f"ctxrelay: a handoff is ready at {path}. Run /clear to continue in a fresh session."


def failed_text(times: int, command: str | None = None) -> str:
    """Auto mode, to the user: Claude never wrote the file."""
    from ctxrelay.claude import handoff

    command = command or handoff.skill_command()
    return (
        f"ctxrelay: no handoff file appeared after the write prompt was sent {times} times. "
        f"Run {command} to write one, then /clear."
    )


def _wrote_handoff(project: Path, calls: tuple[tuple[str, object], ...]) -> Path | None:
    """The handoff file a Write of this turn created, if any."""
    from pathlib import Path

    from ctxrelay.claude import handoff

    for name, payload in reversed(calls):
        if name in _WRITE_TOOLS and isinstance(payload, dict):
            target = payload.get("file_path")
            if isinstance(target, str) and handoff.is_handoff_path(project, target):
                path = Path(target) if Path(target).is_absolute() else project / target
                if path.is_file() and path.stat().st_size > 0:
                    return path
    return None


def _ready(path_text: object) -> Path | None:
    if not isinstance(path_text, str):
        return None
    from pathlib import Path

    path = Path(path_text)
    try:
        return path if path.is_file() and path.stat().st_size > 0 else None
    except OSError:
        return None


def handle(payload: StopPayload) -> HookAnswer | None:
    if payload.get("agent_id"):
        return None  # a subagent's stop is SubagentStop's business
    transcript, reply = payload.get("transcript_path"), payload.get("last_assistant_message")
    if isinstance(transcript, str) and isinstance(reply, str) and reply:
        # Under load Claude Code may not have written the turn's last response yet: wait
        # for it (bounded; at once when it is there), then read the transcript as it is.
        from ctxrelay.transcripts._hot import reply_written

        reply_written(transcript, reply)
    if _quiet(payload):
        return with_notice(None, _stopped_short_notice(payload))
    # The handover first: its state is saved before a notice is taken off the queue.
    return with_notice(_handover(payload), _stopped_short_notice(payload))


# -- the quiet turn: most turns end with nothing to do -----------------------------------
#
# The full path below loads the config, the window rules, the handoff files and the
# policy core, and leaves a stamp in the session's document (:mod:`._stamp`: what the
# window and the mode were computed from, the model, the window the statusline recorded,
# and the result). The next Stop whose stamp holds, with no running handoff, no Write in
# its turn and no trigger firing for the stamped window is answered from it (see
# ``bench/hooks.py``); any difference takes the full path.


def _quiet(payload: StopPayload) -> bool:
    """Whether this turn's end certainly changes nothing: the stamp of the last full
    Stop still holds, and neither a trigger nor a handoff write is in this turn."""
    from ctxrelay.claude._state import session_doc_path
    from ctxrelay.hooks.state import read_document

    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str):
        return False
    doc = read_document(session_doc_path(session_id))
    stamp = doc.get("stop_quiet")
    if not isinstance(stamp, dict) or not _stamp.holds(stamp, payload.get("cwd")):
        return False
    if doc.get("window") != stamp.get("recorded"):
        return False
    if doc.get("injected"):
        return False  # a fresh session: has its first request gone out with the handoff?
    job = _state.handoff_job(doc)
    if job is not None and job.writing:
        return False
    if job is not None and job.ready and job.automod is None:
        return False  # the auto-handoff mod has not been told who clears (_mod_channel.relay)
    if stamp.get("mode") == "off":
        return True
    target = stamp.get("target", False)  # the slider's handoff target; None when it is Off
    if not (target is None or (isinstance(target, int) and not isinstance(target, bool))):
        return False
    from ctxrelay.transcripts._hot import tail_context
    from ctxrelay.transcripts._turn import turn_tool_calls

    tokens, model, found = tail_context(transcript)
    if not found or tokens is None or model is None or model != stamp.get("model"):
        return False  # no reading to answer from (no response on disk yet): the full path
    calls = turn_tool_calls(transcript)
    if any(name in _WRITE_TOOLS for name, _ in calls):
        return False  # perhaps the handoff file: the full path looks
    return not main_triggers(tokens or 0, target, task_completed=completed_task_in(calls))


def _stopped_short_notice(payload: StopPayload) -> str | None:
    """Queued stopped-short subagent notices, each delivered once (whichever main-thread
    hook answers first). Loads the notices machinery only when one may be queued."""
    from ctxrelay.claude._state import notice_possible

    if not notice_possible(payload):
        return None
    from ctxrelay.claude._notices import main_thread_notice

    return main_thread_notice(payload)


def write_answer(prompt: str) -> HookAnswer:
    """The Stop answer that makes the turn go on with ``prompt``: ``additionalContext``,
    drawn as ordinary hook output (``decision: block`` and exit 2 are drawn as a problem
    and show the model the hook's command line; ``docs/claude-code-facts.md``)."""
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": prompt}}


def continues(answer: HookAnswer | None) -> bool:
    """Whether ``answer`` makes the turn go on (carries the write prompt)."""
    extra = answer.get("hookSpecificOutput") if answer else None
    return isinstance(extra, dict) and bool(extra.get("additionalContext"))


def with_notice(answer: HookAnswer | None, notice: str | None) -> HookAnswer | None:
    """The Stop answer carrying ``notice`` too. An answer that makes the turn go on (the
    auto write prompt) gets it beside the prompt: Claude is continuing and reads it;
    otherwise it goes to the user in the ``systemMessage``, after any hint (Claude Code
    shows one message)."""
    if notice is None:
        return answer
    out: HookAnswer = answer.copy() if answer else {}
    extra = out.get("hookSpecificOutput")
    if continues(out) and extra is not None:
        text = extra.get("additionalContext", "")
        out["hookSpecificOutput"] = {**extra, "additionalContext": f"{text}\n\n{notice}"}
        return out
    shown = out.get("systemMessage")
    out["systemMessage"] = f"{shown}\n{notice}" if shown else notice
    return out


# -- the full path: the turn's reading, then one locked decision ------------------------
#
# ``_handover`` reads the turn (:func:`_read_turn`), settles the handoff this session was
# started with (:func:`_settle_injected`), and decides under the session document's lock
# (:func:`_decide`): the running handoff job's next step (:func:`_wait_for_file`), a
# handoff written this turn (:func:`_found`), else the triggers (:func:`_on_triggers`:
# a hint, or a new job, :func:`_start_job`). The auto-handoff mod's part is added in the
# same update (:func:`ctxrelay.claude._mod_channel.relay`).


class _Turn:
    """What the full path read of the turn that ended: this session as the chain names
    it (``me``), the context of the turn's last response (``tokens``, ``None`` when no
    response was read) and its model, the window, the slider as applied (``point``), the
    triggers that fired, the handoff file a Write of this turn created (``written``),
    and the stamp of this full Stop for the next quiet one. (A plain class: a
    dataclass would cost every Stop its making at import.)"""

    __slots__ = (
        "fired",
        "me",
        "mode",
        "model",
        "point",
        "project",
        "stamp",
        "tokens",
        "window",
        "written",
    )

    def __init__(
        self,
        *,
        project: Path,
        me: ChainLink,
        mode: str,
        tokens: int | None,
        model: str | None,
        window: int,
        point: float,
        fired: frozenset[MainTrigger],
        written: Path | None,
        stamp: dict[str, object],
    ) -> None:
        self.project = project
        self.me = me
        self.mode = mode
        self.tokens = tokens
        self.model = model
        self.window = window
        self.point = point
        self.fired = fired
        self.written = written
        self.stamp = stamp


def _handover(payload: StopPayload) -> HookAnswer | None:
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str):
        return None
    from ctxrelay.claude.config import load, project_dir_of

    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    cfg = load(project)
    doc = _state.session_state(session_id)
    if cfg.main_handover == "off":
        _turn_off(doc, cwd, project)
        return None
    turn = _read_turn(cfg, cwd, project, session_id, transcript)
    _settle_injected(doc, project)

    # The auto-handoff mod, where it runs, carries out what this decided.
    from ctxrelay.claude import _mod_channel

    return doc.update(lambda data: _mod_channel.relay(data, _decide(data, turn), turn.mode))


def _turn_off(doc: StateFile, cwd: object, project: Path) -> None:
    """Mode ``off``: only the mode and the stamp are kept."""
    stamp = _stamp.stamp(cwd, project, model=None, window=0, mode="off")

    def turn_off(data: dict[str, Any]) -> None:
        data["mode"] = "off"  # the usable-limit check reads it on every tool call
        data["stop_quiet"] = {**stamp, "recorded": data.get("window")}

    doc.update(turn_off)


def _read_turn(
    cfg: ClaudeConfig, cwd: object, project: Path, session_id: str, transcript: str
) -> _Turn:
    """The turn's numbers off its transcript, the window and the slider, the triggers
    that fired, and the handoff file it wrote."""
    from ctxrelay.hooks.chain import ChainLink
    from ctxrelay.transcripts import last_turn

    facts = last_turn(transcript)
    configured = cfg.context_window or _state.recorded_window(session_id, facts.model)
    window = context_window_for(facts.model, configured)
    budget = cfg.budget(window)  # the slider, read at every Stop: never a stale copy
    fired = (
        frozenset()  # Off: no hint and no handoff (the usable-limit deny stays)
        if budget.off
        else main_triggers(
            facts.context_tokens or 0,
            budget.handoff_target,
            task_completed=completed_task_in(facts.tool_calls),
        )
    )
    mode = cfg.main_handover
    target = None if budget.off else budget.handoff_target
    return _Turn(
        project=project,
        me=ChainLink(HOST, session_id, transcript),
        mode=mode,
        tokens=facts.context_tokens,
        model=facts.model,
        window=window,
        point=budget.effective_threshold,
        fired=fired,
        written=_wrote_handoff(project, facts.tool_calls),
        stamp=_stamp.stamp(
            cwd, project, model=facts.model, window=window, target=target, mode=mode
        ),
    )


def _settle_injected(doc: StateFile, project: Path) -> None:
    """A fresh session: whether its first request went out with the handoff injected at
    its start (which consumes the file)."""
    from ctxrelay.claude import handoff

    if doc.get("injected"):
        handoff.settle(project)
        if handoff.consumed(project, str(doc.get("injected"))):
            doc.reset("injected")


def _decide(data: dict[str, Any], turn: _Turn) -> HookAnswer | None:
    """The Stop's decision, inside the locked update of the session's document."""
    _record_turn(data, turn)
    job = _state.handoff_job(data)
    if job is not None and job.writing:
        return _wait_for_file(data, job, turn)
    if turn.written is not None:
        _found(data, turn.written, turn)
        return None
    return _on_triggers(data, job, turn)


def _record_turn(data: dict[str, Any], turn: _Turn) -> None:
    """Cache the usable limit and the mode, and stamp this turn for the next quiet one."""
    refresh(data, turn.window, turn.mode)
    if turn.tokens is None or turn.model is None:
        # A read that found no response (not written yet) stamps nothing: the next
        # Stop reads again rather than answering from a stamp of nothing.
        data.pop("stop_quiet", None)
    else:
        data["stop_quiet"] = {**turn.stamp, "recorded": data.get("window")}


def _wait_for_file(data: dict[str, Any], job: HandoffJob, turn: _Turn) -> HookAnswer | None:
    """The running job: the file is written (ready, or used already), or one more turn
    is waited, or the write prompt goes out again, or the hook gives up."""
    from pathlib import Path

    from ctxrelay.claude import handoff
    from ctxrelay.hooks import chain as _chain

    project = turn.project
    done = _ready(job.path) or turn.written
    if done is not None and handoff.consumed(project, done.name):
        # Written, then a restart: another session started from it before this
        # Stop saw it. Nothing is left to clear for.
        _chain.record_written(project, done.name, turn.me)
        _end_episode(data)
        _state.set_handoff_job(data, job.used(str(done)))
        return None
    if done is not None:
        _chain.record_written(project, done.name, turn.me)
        _end_episode(data)
        _state.set_handoff_job(data, job.written(str(done)))
        return {"systemMessage": ready_text(done)}
    if job.waiting().waited < HANDOFF_WAIT_TURNS:
        _state.set_handoff_job(data, job.waiting())
        return None
    if job.retries < HANDOFF_RETRY_MAX:
        _state.set_handoff_job(data, job.retried())
        prompt = handoff.write_prompt(
            Path(str(job.path)),
            reason=job.reason or "the handoff is due",
            retry=True,
        )
        return write_answer(prompt)
    _state.set_handoff_job(data, job.failed())
    return {"systemMessage": failed_text(job.retries + 1)}


def _found(data: dict[str, Any], written: Path, turn: _Turn) -> None:
    """A handoff written this turn with no job asking for it (the skill, or Claude on
    its own) ends the episode."""
    from ctxrelay.hooks import chain as _chain
    from ctxrelay.hooks.job import HandoffJob

    _chain.record_written(turn.project, written.name, turn.me)
    _end_episode(data)
    _state.set_handoff_job(data, HandoffJob.found(str(written)))


def _on_triggers(data: dict[str, Any], job: HandoffJob | None, turn: _Turn) -> HookAnswer | None:
    """The triggers that fired, each kind once per episode: the hint (manual), the ready
    handoff named again, or a new job (auto)."""
    if not turn.fired:
        return None
    triggers = sorted(turn.fired)
    new = [t for t in triggers if claim(data, f"{turn.mode}:{t.value}")]
    if not new:
        return None
    if turn.mode == "manual":
        return {"systemMessage": hint_text(new, turn.tokens, turn.window, point=turn.point)}
    if job is not None and job.ready and _ready(job.path):
        from pathlib import Path

        return {"systemMessage": still_ready_text(Path(str(job.path)))}
    return _start_job(data, new, turn)


def _start_job(data: dict[str, Any], new: list[MainTrigger], turn: _Turn) -> HookAnswer:
    """Auto mode: reserve the file, record who is asked to write it, and ask."""
    from ctxrelay.claude import handoff
    from ctxrelay.hooks.job import HandoffJob

    reason = "; ".join(reason_text(t, turn.tokens, turn.window, turn.point) for t in new)
    path = handoff.new_handoff_path(turn.project)
    job = HandoffJob.asked(str(path), reason=reason, triggers=tuple(t.value for t in new))
    _state.set_handoff_job(data, job)
    handoff.record_reserved(turn.project, path, turn.me)
    return write_answer(handoff.write_prompt(path, reason=reason))


def _end_episode(data: dict[str, Any]) -> None:
    data.pop(ONCE, None)  # every hint of the episode may come again in the next
    data["episode"] = int(data.get("episode", 0)) + 1
