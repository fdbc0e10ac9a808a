"""``Stop`` (end of a main-session turn): the main session's handoff triggers.

Triggers (:func:`ctxrelay.budget.triggers.main_triggers`): the context reaches the
handoff target of the configured slider (:meth:`ctxrelay.claude.config.ClaudeConfig.budget`,
``CONTEXT_PERCENT`` of the window by default), and a task was marked completed during the
turn. A slider at 100 (Off) fires neither; the usable-limit deny still holds. What
happens depends on the mode (:mod:`ctxrelay.claude.config`):

- ``manual``: a line the user sees (the answer's ``notice``), asking to run the handoff
  skill (by the name that works here, :func:`ctxrelay.claude.handoff.skill_command`);
  once for each kind of trigger in an episode.
- ``auto``: the hook answers with the write prompt as the prompt that continues the turn
  (:meth:`ctxrelay.claude.host.ClaudeHost.encode`: ``additionalContext``, exit 0), which
  Claude Code draws as ``Stop hook says: …`` (no problem label, no command line to the
  model) and sends as ``Stop hook additional context``: Claude keeps going and writes the
  handoff file. The hook then waits up to ``HANDOFF_WAIT_TURNS`` turns for the file,
  submits the write prompt again at most ``HANDOFF_RETRY_MAX`` times, and when the file
  exists marks the handoff ready: ``ctxrelay claude run`` starts the fresh session
  itself; interactively, the user is told to run ``/clear`` (or the auto-handoff mod
  runs it).
- ``off``: nothing.

The Stop answer also carries the queued notices of subagents that stopped short
(:func:`ctxrelay.claude._notices.main_thread_notice`), so they need not wait for the next
prompt: in the notice (to the user), or after the write prompt when the answer makes the
turn go on (Claude reads it while it writes the handoff).

The Stop that sees a handoff file written records its writer in the chain
(:func:`ctxrelay.hooks.chain.record_written`), and a fresh session's Stop checks whether
its first request went out with the handoff injected at its start
(:func:`ctxrelay.claude.handoff.settle`), which consumes the file.

An episode ends at a handoff (a handoff file written in this session) or ``/clear`` (a new
session id, so a new state document). All state is in the session's state document,
changed under its lock, so two Stop hooks never both hint or both start a handoff.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ctxrelay.budget.bounds import (
    CONTEXT_PERCENT,
    HANDOFF_RETRY_MAX,
    HANDOFF_WAIT_TURNS,
    STOP_REPLY_WAIT_S,
)
from ctxrelay.budget.triggers import (
    MainTrigger,
    completed_task_in,
    main_triggers,
)
from ctxrelay.claude import _mod_channel, _state, handoff
from ctxrelay.claude._limit import main_window, refresh
from ctxrelay.claude._notices import main_thread_notice
from ctxrelay.claude._state import HOST, notice_possible
from ctxrelay.claude.config import ClaudeConfig, load, project_dir_of
from ctxrelay.hooks import chain
from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.handoff import settle_injected
from ctxrelay.hooks.host import Answer
from ctxrelay.hooks.job import HandoffJob
from ctxrelay.hooks.state import ONCE, claim
from ctxrelay.transcripts import last_turn
from ctxrelay.transcripts._hot import reply_written

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import StopPayload

__all__ = [
    "failed_text",
    "handle",
    "hint_text",
    "ready_text",
    "reason_text",
    "still_ready_text",
]

_WRITE_TOOLS = frozenset(("Write", "Edit", "MultiEdit"))


def reason_text(
    trigger: MainTrigger, tokens: int | None, window: int, point: float = CONTEXT_PERCENT
) -> str:
    """Why a handoff is due, with the numbers; ``point`` is the slider as applied."""

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

    command = command or handoff.skill_command()
    return (
        f"ctxrelay: no handoff file appeared after the write prompt was sent {times} times. "
        f"Run {command} to write one, then /clear."
    )


def _wrote_handoff(project: Path, calls: tuple[tuple[str, object], ...]) -> Path | None:
    """The handoff file a Write of this turn created, if any."""

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

    path = Path(path_text)
    try:
        return path if path.is_file() and path.stat().st_size > 0 else None
    except OSError:
        return None


def handle(payload: StopPayload) -> Answer | None:
    if payload.get("agent_id"):
        return None  # a subagent's stop is SubagentStop's business
    transcript, reply = payload.get("transcript_path"), payload.get("last_assistant_message")
    if isinstance(transcript, str) and isinstance(reply, str) and reply.strip():
        # Under load Claude Code may not have written the turn's last response yet: wait
        # for it (bounded; at once when it is there), then read the transcript as it is.
        prompt = payload.get("prompt_id")
        prompt_id = prompt if isinstance(prompt, str) else None
        reply_written(transcript, reply, prompt_id, wait_s=STOP_REPLY_WAIT_S)
    # The handover first: its state is saved before a notice is taken off the queue.
    return _with_notice(_handover(payload), _stopped_short_notice(payload))


def _stopped_short_notice(payload: StopPayload) -> str | None:
    """Queued stopped-short subagent notices, each delivered once (whichever main-thread
    hook answers first)."""
    return main_thread_notice(payload) if notice_possible(payload) else None


def _with_notice(answer: Answer | None, notice: str | None) -> Answer | None:
    """The Stop answer carrying ``notice`` too. An answer that makes the turn go on (the
    auto write prompt) gets it after the prompt: Claude is continuing and reads it;
    otherwise it goes to the user, after any hint (Claude Code shows one message)."""
    if notice is None:
        return answer
    if answer is not None and answer.prompt:
        return answer.with_prompt(notice)
    return (answer or Answer()).with_notice(notice)


# -- the turn's reading, then one locked decision -----------------------------------------
#
# ``_handover`` reads the turn (:func:`_read_turn`), settles the handoff this session was
# started with (`settle_injected`), and decides under the session document's lock
# (:func:`_decide`): the running handoff job's next step (:func:`_wait_for_file`), a
# handoff written this turn (:func:`_found`), else the triggers (:func:`_on_triggers`:
# a hint, or a new job, :func:`_start_job`). The auto-handoff mod's part is added in the
# same update (:func:`ctxrelay.claude._mod_channel.relay`).


class _Turn(NamedTuple):
    """What the Stop read of the turn that ended: this session as the chain names it
    (``me``), the context of the turn's last response (``tokens``, ``None`` when no
    response was read) and its model, the window, the slider as applied (``point``), the
    triggers that fired, and the handoff file a Write of this turn created (``written``)."""

    project: Path
    me: ChainLink
    mode: str
    tokens: int | None
    model: str | None
    window: int
    point: float
    fired: frozenset[MainTrigger]
    written: Path | None


def _handover(payload: StopPayload) -> Answer | None:
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str):
        return None
    cwd = payload.get("cwd")
    project = project_dir_of(cwd if isinstance(cwd, str) else None)
    cfg = load(project)
    doc = _state.session_state(session_id)
    if cfg.main_handover == "off":
        doc.set("mode", "off")  # the usable-limit check reads it on every tool call
        return None
    turn = _read_turn(cfg, project, session_id, transcript)
    settle_injected(project, doc, doc.get("injected"), handoff.settle)
    # The auto-handoff mod, where it runs, carries out what this decided.
    return doc.update(lambda data: _mod_channel.relay(data, _decide(data, turn), turn.mode))


def _read_turn(cfg: ClaudeConfig, project: Path, session_id: str, transcript: str) -> _Turn:
    """The turn's numbers off its transcript, the window and the slider, the triggers
    that fired, and the handoff file it wrote."""
    facts = last_turn(transcript)
    window = main_window(cfg.context_window, session_id, facts.model)
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
    return _Turn(
        project=project,
        me=ChainLink(HOST, session_id, transcript),
        mode=cfg.main_handover,
        tokens=facts.context_tokens,
        model=facts.model,
        window=window,
        point=budget.effective_threshold,
        fired=fired,
        written=_wrote_handoff(project, facts.tool_calls),
    )


def _decide(data: dict[str, Any], turn: _Turn) -> Answer | None:
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
    """Cache the usable limit and the mode."""
    refresh(data, turn.window, turn.mode)
    data.pop("stop_quiet", None)  # the previous version's stamp: nothing reads it now


def _wait_for_file(data: dict[str, Any], job: HandoffJob, turn: _Turn) -> Answer | None:
    """The running job: the file is written (ready, or used already), or one more turn
    is waited, or the write prompt goes out again, or the hook gives up."""
    project = turn.project
    done = _ready(job.path) or turn.written
    if done is not None and handoff.consumed(project, done.name):
        # Written, then a restart: another session started from it before this
        # Stop saw it. Nothing is left to clear for.
        chain.record_written(project, done.name, turn.me)
        _end_episode(data)
        _state.set_handoff_job(data, job.used(str(done)))
        return None
    if done is not None:
        chain.record_written(project, done.name, turn.me)
        _end_episode(data)
        _state.set_handoff_job(data, job.written(str(done)))
        return Answer(notice=ready_text(done))
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
        return Answer(prompt=prompt)
    _state.set_handoff_job(data, job.failed())
    return Answer(notice=failed_text(job.retries + 1))


def _found(data: dict[str, Any], written: Path, turn: _Turn) -> None:
    """A handoff written this turn with no job asking for it (the skill, or Claude on
    its own) ends the episode."""
    chain.record_written(turn.project, written.name, turn.me)
    _end_episode(data)
    _state.set_handoff_job(data, HandoffJob.found(str(written)))


def _on_triggers(data: dict[str, Any], job: HandoffJob | None, turn: _Turn) -> Answer | None:
    """The triggers that fired, each kind once per episode: the hint (manual), the ready
    handoff named again, or a new job (auto)."""
    if not turn.fired:
        return None
    triggers = sorted(turn.fired)
    new = [t for t in triggers if claim(data, f"{turn.mode}:{t.value}")]
    if not new:
        return None
    if turn.mode == "manual":
        return Answer(notice=hint_text(new, turn.tokens, turn.window, point=turn.point))
    if job is not None and job.ready and _ready(job.path):
        return Answer(notice=still_ready_text(Path(str(job.path))))
    return _start_job(data, new, turn)


def _start_job(data: dict[str, Any], new: list[MainTrigger], turn: _Turn) -> Answer:
    """Auto mode: reserve the file, record who is asked to write it, and ask."""
    reason = "; ".join(reason_text(t, turn.tokens, turn.window, turn.point) for t in new)
    path = handoff.new_handoff_path(turn.project)
    job = HandoffJob.asked(str(path), reason=reason, triggers=tuple(t.value for t in new))
    _state.set_handoff_job(data, job)
    handoff.record_reserved(turn.project, path, turn.me)
    return Answer(prompt=handoff.write_prompt(path, reason=reason))


def _end_episode(data: dict[str, Any]) -> None:
    data.pop(ONCE, None)  # every hint of the episode may come again in the next
    data["episode"] = int(data.get("episode", 0)) + 1
