"""Ctrl-C in ``ctxrelay run`` (a real process, SIGINT) against the local Messages server:
one Ctrl-C during a model request lets the response arrive and its tool calls run, then
stops; a second one abandons what is running. Either way the resumed run says which,
and no call a handled Ctrl-C left is answered "interrupted by a restart"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.store import open_store
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.e2e._process import STOPPING, read_stderr_until, run_ctxrelay, start_ctxrelay, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MODEL = "anthropic:claude-sonnet-4-6"
RESTART = "interrupted by a restart"


def _env() -> dict[str, str]:
    return dict(os.environ, ANTHROPIC_API_KEY="test")


def _args(server: AnthropicServer, tmp: Path) -> list[str]:
    return [
        "--base-url", server.base_url, "--db", str(tmp / "s.db"), "--json", "--yes",
    ]  # fmt: skip


def _start(server: AnthropicServer, tmp: Path) -> subprocess.Popen[str]:
    return start_ctxrelay(
        "run", "--model", MODEL, "--workspace", str(tmp), "--limit", "100000",
        *_args(server, tmp), "do it", env=_env(),
    )  # fmt: skip


def _events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _finish(proc: subprocess.Popen[str], early: str) -> tuple[list[dict[str, Any]], str]:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = early + err
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    return _events(out), err


def _results(tmp: Path, session_id: str) -> list[tuple[str, str | None, bool]]:
    store = open_store(tmp / "s.db")
    try:
        rows = store.rows(session_id)
    finally:
        store.close()
    return [
        (str(r.metadata["name"]), r.text, bool(r.metadata.get("abandoned")))
        for r in rows
        if r.kind == "tool_result"
    ]


def _resume(server: AnthropicServer, tmp: Path, session_id: str) -> tuple[list[Any], str]:
    done = run_ctxrelay("run", "--resume", session_id, *_args(server, tmp), env=_env())
    assert done.returncode == 0, done.stderr
    events = _events(done.stdout)
    assert events[-1]["status"] == "done"
    return events, done.stderr


def _notice(events: list[dict[str, Any]]) -> str:
    (notice,) = [e for e in events if e["event"] == "notice"]
    assert notice["code"] == "resumed_after_stop"
    return str(notice["message"])


def _sent(server: AnthropicServer) -> str:
    return json.dumps([r.body for r in server.requests_to("/v1/messages")])


def test_one_ctrl_c_during_a_request_runs_the_steps_tool_calls_then_stops(
    tmp_path: Path,
) -> None:
    steps = [
        Step(tool_calls=[ToolUse("bash", {"command": "echo ran >> log.txt"})], input_tokens=100),
        Step(text="finished", input_tokens=200),
    ]
    with AnthropicServer(steps) as server:
        held = server.hold()
        proc = _start(server, tmp_path)
        wait_until(held.arrived.is_set, "the first model request")
        proc.send_signal(signal.SIGINT)
        early = read_stderr_until(proc, STOPPING)
        held.release()  # the response arrives after the Ctrl-C
        first, _ = _finish(proc, early)
        session_id = first[0]["session_id"]
        assert first[-1]["status"] == "stopped"
        assert [(e["name"], e["is_error"]) for e in first if e["event"] == "tool"] == [
            ("bash", False)
        ]
        assert (tmp_path / "log.txt").read_text() == "ran\n"
        assert [(n, a) for n, _, a in _results(tmp_path, session_id)] == [("bash", False)]

        after, err = _resume(server, tmp_path, session_id)
        said = _notice(after)
        assert "after its step's tool calls had finished (bash)" in said
        assert f"ctxrelay: {said}" in err
        assert not [e for e in after if e["event"] == "tool"]  # nothing ran again
        assert (tmp_path / "log.txt").read_text() == "ran\n"
        assert "exit code 0" in _sent(server)
        assert RESTART not in _sent(server)


def test_a_second_ctrl_c_abandons_the_running_tool_call_and_resume_says_so(
    tmp_path: Path,
) -> None:
    waits = "touch started; while [ ! -e go ]; do sleep 0.05; done; echo late > late.txt"
    steps = [
        Step(tool_calls=[ToolUse("bash", {"command": waits})], input_tokens=100),
        Step(text="finished", input_tokens=200),
    ]
    with AnthropicServer(steps) as server:
        proc = _start(server, tmp_path)
        try:
            wait_until((tmp_path / "started").exists, "the command to start")
            proc.send_signal(signal.SIGINT)
            early = read_stderr_until(proc, STOPPING)
            proc.send_signal(signal.SIGINT)
            first, _ = _finish(proc, early)
        finally:
            (tmp_path / "go").touch()  # never leave the command waiting
        session_id = first[0]["session_id"]
        assert first[-1]["status"] == "stopped"
        ((name, text, abandoned),) = _results(tmp_path, session_id)
        assert (name, abandoned) == ("bash", True)
        assert "stopped by the user (Ctrl-C)" in str(text)

        after, _ = _resume(server, tmp_path, session_id)
        assert "abandoned: bash" in _notice(after)
        assert "stopped by the user (Ctrl-C)" in _sent(server)
        assert RESTART not in _sent(server)
    assert not (tmp_path / "late.txt").exists()  # the command was killed, not left running


def test_a_second_ctrl_c_during_a_request_drops_it_and_resume_sends_it_again(
    tmp_path: Path,
) -> None:
    steps = [Step(text="finished", input_tokens=100)]
    with AnthropicServer(steps) as server:
        held = server.hold()
        proc = _start(server, tmp_path)
        try:
            wait_until(held.arrived.is_set, "the first model request")
            proc.send_signal(signal.SIGINT)
            early = read_stderr_until(proc, STOPPING)
            proc.send_signal(signal.SIGINT)
            first, _ = _finish(proc, early)
        finally:
            held.release()
        session_id = first[0]["session_id"]
        assert not [e for e in first if e["event"] == "response"]
        after, _ = _resume(server, tmp_path, session_id)
        assert "during a model request; the request is sent again" in _notice(after)
        assert [e["text"] for e in after if e["event"] == "response"] == ["finished"]
