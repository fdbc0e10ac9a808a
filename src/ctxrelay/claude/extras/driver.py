"""Run a task headless in Claude Code, handing off to fresh sessions by itself (the
command is ``ctxrelay claude run "task"``, :mod:`ctxrelay.cli.claude.run`).

It drives the Claude Code CLI through ``claude-agent-sdk`` (the CLI bundled with the
package, or ``--claude PATH``), with the user's installed settings, so the ctxrelay hooks
run as they do interactively. After each turn it reads the session's state document
(written by the Stop hook, :mod:`ctxrelay.claude._events.stop`):

- handoff ``ready`` (the file exists): a **fresh session** starts from it. The driver
  names the file to that session's hooks (:data:`ctxrelay.claude.handoff.RESUME_ENV`),
  so its ``SessionStart`` injects it as the ``/clear`` of the writer would (the resume
  prompt, the next step, the file), and its first prompt says to continue from it. The
  file is consumed once that session's first request went out with it, as in the UI
  (its ``Stop`` reads it off the transcript: :func:`ctxrelay.claude.handoff.settle`);
  the driver settles again once the first turn is back. A crash before that request
  leaves the handoff offered to the next start;
- handoff ``writing`` (Claude was asked and has not written it yet): the same session
  gets "Continue." so the Stop hook can count its waiting turns and retry the prompt;
- otherwise the task is finished and the run ends.

It records the window Claude Code reports for the model (``get_context_usage``), as the
statusline does interactively, and enables Claude Code's task tools
(``CLAUDE_CODE_ENABLE_TODO_TOOLS=1``; headless Claude Code leaves them off), so both
triggers work. ``--mode`` sets ``CTXRELAY_MAIN_HANDOVER`` for the run's hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.budget.bounds import HANDOFF_RETRY_MAX, HANDOFF_WAIT_TURNS
from ctxrelay.claude import _state, handoff
from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME
from ctxrelay.errors import CtxrelayError, MissingExtraError

if TYPE_CHECKING:
    from ctxrelay.hooks.job import HandoffJob

__all__ = ["CONTINUE_PROMPT", "MAX_SESSIONS", "DriverOptions", "Emit", "RunOutcome", "run_task"]

MAX_SESSIONS = 5
"""Fresh sessions one run starts at most (``--max-sessions``): a task that hands off more
often than this stops with status ``max_sessions`` rather than running on unattended."""

CONTINUE_PROMPT = "Continue."
"""What a session waiting for its handoff file gets as its next turn (headless, there is
no user to type one)."""

_MAX_NUDGES = HANDOFF_WAIT_TURNS * (HANDOFF_RETRY_MAX + 1) + 1
"""Enough waiting turns for the Stop hook to retry the write prompt and give up."""

Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class DriverOptions:
    """How to run: where, which model and CLI, how many fresh sessions at most."""

    project_dir: Path
    model: str | None = None
    mode: str | None = None
    permission_mode: str = "acceptEdits"
    max_sessions: int = MAX_SESSIONS
    max_turns: int | None = None
    cli_path: Path | None = None
    plugin_dirs: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended: ``completed``, ``max_sessions`` or ``error``."""

    status: str
    sessions: list[str]
    handoffs: list[str]
    result: str | None


def _sdk() -> Any:
    try:
        import claude_agent_sdk  # noqa: PLC0415 — the claude extra's SDK, only for a run
    except ImportError as exc:
        raise MissingExtraError("ctxrelay claude run", "claude") from exc
    return claude_agent_sdk


async def _turn(client: Any, prompt: str, sdk: Any, emit: Emit, index: int) -> Any:
    """Send one prompt and return its ResultMessage."""
    await client.query(prompt)
    result = None
    async for message in client.receive_response():
        if isinstance(message, sdk.AssistantMessage):
            for block in message.content:
                if isinstance(block, sdk.TextBlock) and block.text.strip():
                    emit({"event": "text", "session": index, "text": block.text})
                elif isinstance(block, sdk.ToolUseBlock):
                    emit({"event": "tool", "session": index, "name": block.name})
        elif isinstance(message, sdk.ResultMessage):
            result = message
    if result is None:
        raise CtxrelayError("Claude Code ended the turn without a result message")
    return result


def _record_window(result: Any) -> None:
    usage = getattr(result, "model_usage", None) or {}
    for model, info in usage.items():
        window = info.get("contextWindow") if isinstance(info, dict) else None
        if isinstance(window, int):
            _state.record_window(result.session_id, model, window)


def _handoff_job(session_id: str) -> HandoffJob | None:
    return _state.handoff_job(_state.session_state(session_id).read())


def _started(project: Path, path: Path, result: Any) -> None:
    """The fresh session's first turn is back, so its first request went out with the
    handoff ``path``. Its ``Stop`` consumed the file already (the injection, then an
    ``api-request`` line in its transcript); settle again should that hook not have run,
    and consume the file if the session's start did not inject it (hooks of a ctxrelay
    that does not read :data:`~ctxrelay.claude.handoff.RESUME_ENV`: the prompt named the
    file)."""
    handoff.settle(project)
    if not result.is_error and not handoff.consumed(project, path.name):
        handoff.mark_consumed(project, path)


async def run_task(task: str, options: DriverOptions, emit: Emit) -> RunOutcome:
    """Run ``task`` to completion across as many fresh sessions as its handoffs need."""
    sdk = _sdk()
    env = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1", **options.env}
    if options.mode is not None:
        env["CTXRELAY_MAIN_HANDOVER"] = options.mode

    def sdk_options(resume: Path | None) -> Any:
        return sdk.ClaudeAgentOptions(
            cwd=str(options.project_dir),
            model=options.model,
            permission_mode=options.permission_mode,
            # Headless, a workspace never trusted in the UI ignores the settings'
            # permissions.allow: the resume prompt's session_history is allowed here.
            allowed_tools=[MODEL_TOOL_NAME],
            max_turns=options.max_turns,
            cli_path=str(options.cli_path) if options.cli_path else None,
            env=env if resume is None else {**env, handoff.RESUME_ENV: str(resume)},
            plugins=[{"type": "local", "path": str(p)} for p in options.plugin_dirs],
        )

    sessions: list[str] = []
    handoffs: list[str] = []
    prompt = task
    resume: Path | None = None  # the handoff the next session starts from
    last_text: str | None = None
    for index in range(1, options.max_sessions + 1):
        emit({"event": "session", "session": index, "prompt": prompt})
        async with sdk.ClaudeSDKClient(options=sdk_options(resume)) as client:
            try:
                usage = await client.get_context_usage()
                _state.record_window(None, usage.get("model"), int(usage.get("rawMaxTokens", 0)))
            except Exception:  # older CLIs: the Stop hook falls back to the model id
                pass
            result = await _turn(client, prompt, sdk, emit, index)
            if resume is not None:
                _started(options.project_dir, resume, result)
            session_id = result.session_id
            sessions.append(session_id)
            _record_window(result)
            last_text = result.result
            emit(
                {
                    "event": "result",
                    "session": index,
                    "session_id": session_id,
                    "is_error": bool(result.is_error),
                    "text": result.result,
                }
            )
            nudges = 0
            job = _handoff_job(session_id)
            while job is not None and job.writing and nudges < _MAX_NUDGES:
                nudges += 1
                result = await _turn(client, CONTINUE_PROMPT, sdk, emit, index)
                last_text = result.result
                job = _handoff_job(session_id)
        if job is None or not job.ready:
            status = "completed" if not result.is_error else "error"
            emit({"event": "end", "status": status, "sessions": sessions, "handoffs": handoffs})
            return RunOutcome(status, sessions, handoffs, last_text)
        path = Path(str(job.path))
        if handoff.read_handoff(path) is None:
            raise CtxrelayError(f"the handoff file {path} is gone or empty; nothing to resume")
        handoffs.append(str(path))
        emit({"event": "handoff", "session": index, "path": str(path)})
        prompt = handoff.continue_prompt(path)  # its SessionStart injects the file
        resume = path
    emit({"event": "end", "status": "max_sessions", "sessions": sessions, "handoffs": handoffs})
    return RunOutcome("max_sessions", sessions, handoffs, last_text)
