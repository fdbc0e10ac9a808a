"""``ctxrelay claude run``: argument checks, and the step from one session to the next
with a stand-in for the SDK that runs the real hooks (the runs themselves are end-to-end
tests in ``tests/e2e/test_claude_handoff.py``, against the real CLI)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import HANDOFF_RETRY_MAX, HANDOFF_WAIT_TURNS
from ctxrelay.claude import handoff
from ctxrelay.claude._events.session_start import loaded_text
from ctxrelay.claude.extras.driver import _MAX_NUDGES
from ctxrelay.cli.claude import main
from ctxrelay.hooks import chain as _chain
from tests.claude._handoff import Transcript, isolate, run_hook


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["run", *argv])
    return code, out.getvalue(), err.getvalue()


def test_help_teaches_with_examples() -> None:
    code, out, _ = _run("--help")
    assert code == 0
    assert "ctxrelay claude run --mode auto" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--max-sessions", "0", "task"), "--max-sessions must be at least 1"),
        (("--project-dir", "/nonexistent/ctxrelay-x", "task"), "does not exist"),
    ],
)
def test_bad_arguments_are_one_sentence(argv: tuple[str, ...], message: str) -> None:
    code, out, err = _run(*argv)
    assert code == 1
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_bad_mode_is_a_usage_error() -> None:
    code, _, err = _run("--mode", "sometimes", "task")
    assert code == 2
    assert "invalid choice" in err


def test_waiting_turns_cover_the_hooks_retry() -> None:
    # Enough "Continue." turns for the Stop hook to wait, retry and give up.
    assert _MAX_NUDGES > HANDOFF_WAIT_TURNS * (HANDOFF_RETRY_MAX + 1)


# -- from one session to the next, with the hooks run as the CLI runs them ---------------


class _Options:
    def __init__(self, **kw: Any) -> None:
        self.env: dict[str, str] = kw["env"]
        self.cwd = Path(kw["cwd"])


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text


class _Assistant:
    def __init__(self, text: str) -> None:
        self.content = [_Text(text)]


class _Result:
    def __init__(self, session_id: str) -> None:
        self.session_id, self.result, self.is_error = session_id, "ok", False
        self.model_usage: dict[str, Any] = {}


class _Cli:
    """``claude_agent_sdk`` and the CLI behind it, as far as the driver sees them: each
    client is one session whose first prompt runs the real ``SessionStart`` (under the
    environment the driver gave the session), whose transcript is written as Claude Code
    2.1.332 writes it (the start's injection, the prompt, an ``api-request`` line once
    the request went out) and whose turn ends with the real ``Stop`` hook. The first
    session writes a handoff file with the skill; ``crash`` kills the second one before
    its first request."""

    ClaudeAgentOptions = _Options
    AssistantMessage = _Assistant
    TextBlock = _Text
    ToolUseBlock = _Text
    ResultMessage = _Result

    def __init__(self, tmp: Path, *, crash: bool) -> None:
        self.tmp, self.crash = tmp, crash
        self.prompts: list[str] = []  # each session's first prompt
        self.starts: list[dict[str, Any] | None] = []  # each SessionStart's answer
        self.consumed_at_start: list[bool] = []
        self.handoff: Path | None = None

    def ClaudeSDKClient(self, options: _Options) -> _Client:
        return _Client(self, options)

    def session(self, options: _Options, prompt: str) -> list[Any]:
        project = options.cwd
        session_id = f"s{len(self.prompts) + 1}"
        transcript = Transcript(self.tmp / "transcripts" / f"{session_id}.jsonl")
        base = {"session_id": session_id, "transcript_path": str(transcript.path)}
        base["cwd"] = str(project)
        with pytest.MonkeyPatch.context() as env:
            for key, value in options.env.items():
                env.setenv(key, value)
            start = run_hook({**base, "hook_event_name": "SessionStart", "source": "startup"})
            self.starts.append(start)
            self.prompts.append(prompt)
            if self.handoff is not None:
                self.consumed_at_start.append(handoff.consumed(project, self.handoff.name))
            if start is not None:
                transcript.context(start["hookSpecificOutput"]["additionalContext"])
            transcript.prompt(prompt)
            if self.handoff is None:  # the task: the handoff skill writes the file
                self.handoff = handoff.new_handoff_path(project)
                self.handoff.write_text("# Handoff\n## Next step\nNEXT-STEP: part two\n")
                write = ("Write", {"file_path": str(self.handoff)})
                transcript.assistant(context=50_000, tools=[write])
            elif self.crash:
                raise RuntimeError("the CLI died before its first request")
            with transcript.path.open("a") as fh:
                fh.write(json.dumps({"type": "api-request", "querySource": "sdk"}) + "\n")
            transcript.assistant(context=60_000, text="done")
            stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False}
            run_hook({**stop, "last_assistant_message": "done"})
        return [_Assistant("done"), _Result(session_id)]


class _Client:
    def __init__(self, cli: _Cli, options: _Options) -> None:
        self.cli, self.options = cli, options
        self.messages: list[Any] = []

    async def __aenter__(self) -> _Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def get_context_usage(self) -> dict[str, Any]:
        raise RuntimeError("not in this CLI")

    async def query(self, prompt: str) -> None:
        self.messages = self.cli.session(self.options, prompt)

    async def receive_response(self) -> AsyncIterator[Any]:
        for message in self.messages:
            yield message


def _drive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, crash: bool) -> _Cli:
    from ctxrelay.claude.extras import driver

    project = isolate(monkeypatch, tmp_path)
    cli = _Cli(tmp_path, crash=crash)
    monkeypatch.setattr(driver, "_sdk", lambda: cli)
    options = driver.DriverOptions(project_dir=project, mode="auto")
    if crash:
        with pytest.raises(RuntimeError, match="before its first request"):
            asyncio.run(driver.run_task("TASK build it", options, lambda event: None))
    else:
        outcome = asyncio.run(driver.run_task("TASK build it", options, lambda event: None))
        assert (outcome.status, outcome.sessions) == ("completed", ["s1", "s2"])
        assert outcome.handoffs == [str(cli.handoff)]
    return cli


def test_the_fresh_session_starts_from_the_handoff_as_at_clear(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cli = _drive(monkeypatch, tmp_path, crash=False)
    path, project = cli.handoff, tmp_path / "project"
    assert path is not None
    # Not consumed when the fresh session started: its start injected it ...
    assert cli.consumed_at_start == [False]
    fresh_start = cli.starts[1]
    assert fresh_start is not None
    assert fresh_start["systemMessage"] == loaded_text(path)
    assert "NEXT-STEP: part two" in fresh_start["hookSpecificOutput"]["additionalContext"]
    assert cli.prompts[1] == handoff.continue_prompt(path)
    # ... and consumed once its first request went out with it, the chain recorded.
    assert handoff.consumed(project, path.name)
    assert [x.session_id for x in _chain.chain(project, "s2")] == ["s1", "s2"]


def test_a_fresh_session_that_dies_before_its_first_request_leaves_the_handoff(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cli = _drive(monkeypatch, tmp_path, crash=True)
    path, project = cli.handoff, tmp_path / "project"
    assert path is not None
    assert not handoff.consumed(project, path.name)
    assert handoff.latest_unconsumed(project) == path
    # The next start takes it (auto mode): as after a crash in the UI.
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    payload = {"session_id": "s9", "transcript_path": str(tmp_path / "s9.jsonl")}
    answer = run_hook(
        {**payload, "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    )
    assert answer is not None
    assert answer["systemMessage"] == loaded_text(path)
