"""``ctxrelay run`` and ``ctxrelay demo`` as real processes: killed, interrupted, resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.store import open_store
from tests.e2e._process import (
    STOPPING,
    read_stderr_until,
    run_ctxrelay,
    start_ctxrelay,
    wait_until,
)

pytestmark = pytest.mark.e2e


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["CTXRELAY_DB"] = str(tmp_path / "sessions.db")
    env["CTXRELAY_SCRIPTED_LOG"] = str(tmp_path / "received.jsonl")
    return env


def _steps(tmp_path: Path) -> Path:
    steps: list[dict[str, Any]] = [
        {
            "text": "one",
            "tool_calls": [{"name": "write_file", "input": {"path": "one.txt", "content": "1"}}],
        },
        {"text": "slow", "delay_s": 30},
        {"text": "never needed"},
    ]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(steps))
    return path


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return start_ctxrelay(
        "run", "--json", "--model", f"scripted:{_steps(tmp_path)}", "--limit", "20000",
        "--reserve", "4000", "--workspace", str(ws), *args, "task", env=_env(tmp_path),
    )  # fmt: skip


def _wait_for_request(tmp_path: Path, step: int) -> None:
    log = tmp_path / "received.jsonl"

    def requested() -> bool:
        lines = log.read_text().splitlines() if log.exists() else []
        return any(json.loads(line)["step"] == step for line in lines)

    wait_until(requested, f"the request of step {step}")


def _session_id(tmp_path: Path) -> str:
    store = open_store(tmp_path / "sessions.db")
    try:
        (info,) = store.list_sessions()
        return info.id
    finally:
        store.close()


def _fast_script(tmp_path: Path) -> None:
    (tmp_path / "steps.json").write_text(
        json.dumps([{}, {"text": "second answer"}, {"text": "third"}])
    )


def test_sigkill_mid_request_then_resume(tmp_path: Path) -> None:
    proc = _start(tmp_path)
    _wait_for_request(tmp_path, 1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    sid = _session_id(tmp_path)
    _fast_script(tmp_path)  # the resumed model answers step 1 at once
    done = run_ctxrelay("run", "--resume", sid, "--json", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    end = json.loads(done.stdout.splitlines()[-1])
    assert (end["event"], end["status"], end["turns"]) == ("end", "done", 2)
    steps = [
        json.loads(line)["step"] for line in (tmp_path / "received.jsonl").read_text().splitlines()
    ]
    assert steps == [0, 1, 1]  # step 1 again: its answer was never recorded
    assert (tmp_path / "ws" / "one.txt").read_text() == "1"


def test_ctrl_c_stops_cleanly_and_resume_continues(tmp_path: Path) -> None:
    proc = _start(tmp_path)
    _wait_for_request(tmp_path, 1)
    proc.send_signal(signal.SIGINT)
    # the stop takes effect after the running step; cut the step short with a second ^C,
    # once the first one has been taken
    early = read_stderr_until(proc, STOPPING)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    err = early + err
    assert proc.returncode != 0
    assert "Traceback" not in err
    sid = _session_id(tmp_path)
    store = open_store(tmp_path / "sessions.db")
    try:
        assert store.get_session(sid).status == "stopped"
    finally:
        store.close()
    _fast_script(tmp_path)
    done = run_ctxrelay("run", "--resume", sid, "--json", env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["status"] == "done"


def test_demo_runs_without_any_key_in_a_fresh_process(tmp_path: Path) -> None:
    done = run_ctxrelay(
        "demo", "--json", "--workspace", str(tmp_path / "demo"), env=_env(tmp_path), timeout=120
    )
    assert done.returncode == 0, done.stderr
    end = json.loads(done.stdout.splitlines()[-1])
    assert (end["status"], end["windows"]) == ("done", 3)
    assert done.stderr == ""
