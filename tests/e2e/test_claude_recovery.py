"""A Claude Code handoff that survives a crash: the real CLI bundled by
``claude-agent-sdk`` in a pseudo-terminal, auto mode with the auto-handoff mod, killed
with ``SIGKILL`` at each moment of a handoff, then started again as a user would.

The moments are held open by what the test controls, never by the clock: the scripted
model holds its answer (during the write), or a user hook of the project blocks on a file
the test creates (after the write, before ``/clear``: a ``Stop`` hook; after ``/clear``,
before the fresh session's first request: a ``SessionStart`` hook). Each test then checks
that the handoff was used exactly once, by the right session, and that a prompt typed
during the handoff reached the model once. And while the writer still runs, a second
`claude` in the project leaves its handoff alone, until the writer is killed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude import _state, handoff
from ctxrelay.claude._events.session_start import loaded_text, offer_text
from ctxrelay.hooks import chain as _chain
from ctxrelay.testing import AnthropicServer, Step
from tests.e2e._claude import TIMEOUT, Terminal, bodies
from tests.e2e._process import wait_until
from tests.e2e.test_claude_handoff import MODEL
from tests.e2e.test_claude_interactive import (
    Plan,
    _everything,
    _first_user_text,
    _handoff_files,
    _launch,
    _resumed,
    setup,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = ["setup"]  # the fixture, shared with the interactive tests

# A user hook that blocks while ``arm-<event>`` exists and ``open`` does not, once the
# moment it waits for has come; it says so with ``reached-<event>``. It ends with the
# Claude Code that ran it.
GATE = """\
input=$(cat)
[ -e "$GATES/arm-$1" ] || exit 0
case "$1" in
  SessionStart) case "$input" in *'"source":"clear"'*) ;; *) exit 0 ;; esac ;;
  Stop) ls "$PROJECT"/.ctxrelay/handoff/handoff-*.md >/dev/null 2>&1 || exit 0 ;;
esac
touch "$GATES/reached-$1"
while [ ! -e "$GATES/open" ] && kill -0 "$CLAUDE_PID" 2>/dev/null; do sleep 0.05; done
"""


def _gates(project: Path, env: dict[str, str]) -> Path:
    """The gate hook, in the project's ``settings.local.json`` next to ctxrelay's hooks."""
    gates = project.parent / "gates"
    gates.mkdir()
    script = gates / "gate.sh"
    script.write_text(GATE)
    env["GATES"] = str(gates)
    env["PROJECT"] = str(project)

    def hook(event: str) -> list[dict[str, Any]]:
        command = f'sh "{script}" {event}'
        return [{"hooks": [{"type": "command", "command": command, "timeout": 120}]}]

    settings = {"hooks": {"Stop": hook("Stop"), "SessionStart": hook("SessionStart")}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    return gates


class HoldingPlan(Plan):
    """The scripted model, which can hold its answer to the request that carries the
    handoff's Write result: the file is on disk and no Stop has seen it."""

    def __init__(self, *, hold_after_write: bool = False) -> None:
        super().__init__()
        self.hold = hold_after_write
        self.wrote = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: Mapping[str, Any]) -> Step:
        last = json.dumps(body["messages"][-1])
        if self.hold and "tool_result" in last and "TASK-WIDGET" in _everything(body):
            self.wrote.set()
            self.release.wait(TIMEOUT)
        return super().__call__(body)


def _writer(env: dict[str, str]) -> str:
    """The id of the session whose transcript holds the first task."""
    for path in (Path(env["HOME"]) / ".claude" / "projects").glob("*/*.jsonl"):
        if "TASK-WIDGET build" in path.read_text():
            return path.stem
    raise AssertionError("no transcript holds the first task")


def _until_writing(
    project: Path, env: dict[str, str], server: AnthropicServer, plan: Plan, *, typed: str
) -> Terminal:
    """A session from its first prompt to the write prompt at the model; ``typed`` is
    typed meanwhile (held by the mod) unless empty."""
    term = _launch(env, project, server)
    term.ready()
    term.type("TASK-WIDGET build the widget")
    term.wait(plan.writing.is_set, "the write prompt to reach the model")
    if typed:
        term.type(typed)
        term.wait(lambda: term.shows("ctxrelay: held until"), "the prompt held")
    plan.typed.set()
    return term


def _started_from(project: Path, path: Path) -> _chain.ChainLink:
    """The session that started from ``path``, once its Stop (or a start) saw it."""

    def started() -> _chain.ChainLink | None:
        return _chain.started_by(project, path.name)

    wait_until(lambda: started() is not None, "a session started from the handoff", TIMEOUT)
    link = started()
    assert link is not None
    assert handoff.consumed(project, path.name)
    return link


def test_killed_after_the_write_before_clear_then_continue_and_clear(
    setup: tuple[Path, dict[str, str]],
) -> None:
    project, env = setup
    gates = _gates(project, env)
    (gates / "arm-Stop").touch()
    plan = Plan()
    with AnthropicServer(plan) as server:
        term = _until_writing(project, env, server, plan, typed="")
        wait_until((gates / "reached-Stop").exists, "the Stop after the write", TIMEOUT)
        writer = _writer(env)

        def phase() -> object:
            job = _state.session_state(writer).get("handoff")
            return job.get("phase") if isinstance(job, dict) else None

        wait_until(lambda: phase() == "ready", "ctxrelay's Stop to see the file")
        term.kill()
        (gates / "arm-Stop").unlink()
        (path,) = _handoff_files(project)
        assert not handoff.consumed(project, path.name)
        before = len(bodies(server))

        # `claude --continue` resumes the writer: told, not injected into itself.
        term = _launch(env, project, server, "--continue")
        try:
            # (No wait for the box's footer here: a restarted UI may draw it in pieces.)
            term.wait(lambda: term.shows(offer_text(path, writer=True)), "the offer")
            term.type("/clear")
            # Injected into the fresh session (its one line is drawn too, but a redraw
            # can leave it in pieces on this terminal: the state is what is waited for).
            term.wait(lambda: bool(handoff.injected_into(project, path.name)), "the injection")
            term.type("GO-ON next part")
            term.wait(
                lambda: any("GO-ON" in _everything(b) for b in bodies(server)[before:]),
                "the fresh session's first request",
            )
            fresh = _started_from(project, path)
        finally:
            term.kill()
        after = bodies(server)[before:]
    first = next(b for b in after if "GO-ON" in _everything(b))
    assert "[ctxrelay] Resume" in _first_user_text(first)
    assert "NEXT-STEP-MARKER" in _everything(first)
    assert "TASK-WIDGET build the widget" not in _everything(first)
    # Every request after the restart is the fresh session's, none the writer's.
    assert all("[ctxrelay] Resume" in _first_user_text(b) for b in after)
    assert not any("TASK-WIDGET build the widget" in _everything(b) for b in after)
    assert fresh.session_id != writer
    assert [x.session_id for x in _chain.chain(project, fresh)] == [writer, fresh.session_id]


def test_killed_after_clear_before_the_first_request_then_a_plain_start(
    setup: tuple[Path, dict[str, str]],
) -> None:
    project, env = setup
    gates = _gates(project, env)
    (gates / "arm-SessionStart").touch()
    plan = Plan()
    with AnthropicServer(plan) as server:
        term = _until_writing(project, env, server, plan, typed="TYPED-MEANWHILE add a docstring")
        wait_until((gates / "reached-SessionStart").exists, "the start after /clear", TIMEOUT)
        (path,) = _handoff_files(project)
        wait_until(lambda: bool(handoff.injected_into(project, path.name)), "the injection")
        term.kill()  # the fresh session never sent a request
        (gates / "arm-SessionStart").unlink()
        assert not _resumed(server)
        assert not handoff.consumed(project, path.name)
        before = len(bodies(server))

        # A plain `claude`: the handoff is injected, and said so; the held prompt is back
        # in the box, and goes out with it.
        term = _launch(env, project, server)
        try:
            term.wait(lambda: term.shows(loaded_text(path)), "the handoff offered at startup")
            term.wait(lambda: term.shows("TYPED-MEANWHILE add a docstring"), "the held prompt")
            term.type("")
            term.wait(lambda: bool(_resumed(server)), "the first request")
            fresh = _started_from(project, path)
        finally:
            term.kill()
        after = bodies(server)[before:]
    first = _resumed(server)[0]
    sent = _everything(first)
    assert sent.count("TYPED-MEANWHILE add a docstring") == 1
    assert "NEXT-STEP-MARKER" in sent
    assert "TASK-WIDGET build the widget" not in sent
    assert all("TYPED-MEANWHILE" not in _everything(b) for b in bodies(server)[:before])
    assert all("[ctxrelay] Resume" in _first_user_text(b) for b in after)
    assert [x.session_id for x in _chain.chain(project, fresh)][-1] == fresh.session_id


def test_killed_during_the_write_then_a_plain_start(
    setup: tuple[Path, dict[str, str]],
) -> None:
    project, env = setup
    plan = HoldingPlan(hold_after_write=True)
    with AnthropicServer(plan) as server:
        term = _until_writing(project, env, server, plan, typed="")
        wait_until(plan.wrote.is_set, "the Write to run", TIMEOUT)
        term.kill()  # the file is on disk; no Stop has seen it
        plan.release.set()
        (path,) = _handoff_files(project)
        writer = _writer(env)
        assert _chain.written_by(project, path.name) is None
        before = len(bodies(server))

        term = _launch(env, project, server)
        try:
            term.wait(lambda: term.shows(loaded_text(path)), "the handoff offered at startup")
            term.type("GO-ON next part")
            term.wait(lambda: bool(_resumed(server)), "the first request")
            fresh = _started_from(project, path)
        finally:
            term.kill()
    first = _resumed(server)[0]
    assert "GO-ON next part" in _everything(first)
    assert "TASK-WIDGET build the widget" not in _everything(first)
    after = bodies(server)[before:]
    assert all("[ctxrelay] Resume" in _first_user_text(b) for b in after)
    assert not any("TASK-WIDGET build the widget" in _everything(b) for b in after)
    # The writer is known though its Stop never ran: the chain holds.
    assert [x.session_id for x in _chain.chain(project, fresh)] == [writer, fresh.session_id]


class SideTaskPlan(Plan):
    """The scripted model, answering a side task (a second `claude` in the project)
    below the slider, so it does not hand off itself."""

    def __call__(self, body: Mapping[str, Any]) -> Step:
        if "SIDE-TASK" in _everything(body) and "[ctxrelay] Resume" not in _first_user_text(body):
            return Step(text="side task done", input_tokens=5, cache_read_input_tokens=9_000)
        return super().__call__(body)


def test_a_second_claude_leaves_the_handoff_while_the_writer_runs(
    setup: tuple[Path, dict[str, str]],
) -> None:
    from tests.e2e._claude import run_cli

    project, env = setup
    gates = _gates(project, env)
    (gates / "arm-Stop").touch()
    plan = SideTaskPlan()
    with AnthropicServer(plan) as server:
        term = _until_writing(project, env, server, plan, typed="")
        try:
            wait_until((gates / "reached-Stop").exists, "the Stop after the write", TIMEOUT)
            writer = _writer(env)

            def phase() -> object:
                job = _state.session_state(writer).get("handoff")
                return job.get("phase") if isinstance(job, dict) else None

            wait_until(lambda: phase() == "ready", "ctxrelay's Stop to see the file")
            (gates / "arm-Stop").unlink()  # the writer's Stop stays held; no other is
            (path,) = _handoff_files(project)

            # A second `claude` in the project while the writer runs: nothing of it.
            done = run_cli(env, project, server, "-p", "SIDE-TASK one", "--model", MODEL)
            assert done.returncode == 0, done.stderr[-2000:]
            side = [b for b in bodies(server) if "SIDE-TASK one" in _everything(b)]
            assert side
            assert not any(str(path) in _everything(b) for b in side)
            assert handoff.injected_into(project, path.name) == []
        finally:
            term.kill()  # the writer's Claude Code is gone: the handoff is any start's

        done = run_cli(env, project, server, "-p", "SIDE-TASK two", "--model", MODEL)
        assert done.returncode == 0, done.stderr[-2000:]
        (first,) = [b for b in _resumed(server) if "SIDE-TASK two" in _everything(b)]
        assert "NEXT-STEP-MARKER" in _everything(first)
    assert handoff.consumed(project, path.name)
