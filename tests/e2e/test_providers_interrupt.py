"""Ctrl-C during a real-provider run (a separate ``ctxrelay run`` process, SIGINT): one
Ctrl-C finishes the step in flight and stops cleanly, a second aborts the request at
once; either way nothing stored is lost and ``--resume`` finishes the task."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import AnthropicServer, LocalServer, OpenAIServer, Step, ToolUse
from tests.e2e._process import (
    STOPPING,
    read_stderr_until,
    run_ctxrelay,
    start_ctxrelay,
    wait_until,
)

# Two ``ctxrelay run`` processes per case, each importing a provider SDK: about 10 s a
# case on an idle machine, several times that under load.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SERVERS: dict[str, tuple[type[LocalServer], str]] = {
    "anthropic": (AnthropicServer, "claude-opus-4-6"),
    "openai": (OpenAIServer, "gpt-4.1"),
}


def _env() -> dict[str, str]:
    return dict(os.environ, ANTHROPIC_API_KEY="test", OPENAI_API_KEY="test")


def start(server: Any, provider: str, model: str, tmp: Path, *args: str) -> subprocess.Popen[str]:
    return start_ctxrelay(
        "run",
        "--model",
        f"{provider}:{model}",
        "--base-url",
        server.base_url,
        "--db",
        str(tmp / "sessions.db"),
        "--workspace",
        str(tmp),
        "--limit",
        "100000",
        "--json",
        "--yes",
        *args,
        env=_env(),
    )


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("provider", "presses"),
    [("anthropic", 1), ("openai", 2)],
    ids=["anthropic-one-ctrl-c", "openai-two-ctrl-c"],
)
def test_ctrl_c_stops_cleanly_and_resume_finishes(
    provider: str, presses: int, tmp_path: Path
) -> None:
    pytest.importorskip(provider)
    server_type, model = SERVERS[provider]
    (tmp_path / "a.txt").write_text("content\n")
    # The second response is slow: Ctrl-C arrives while it is in flight.
    slow = 1.5 if presses == 1 else 60.0
    steps = [
        Step(tool_calls=[ToolUse("read_file", {"path": "a.txt"})], input_tokens=100),
        Step(tool_calls=[ToolUse("read_file", {"path": "a.txt"})], input_tokens=200, delay_s=slow),
        Step(text="finished", input_tokens=300),
    ]
    with server_type(steps) as server:
        proc = start(server, provider, model, tmp_path, "read a.txt twice")
        try:
            wait_until(lambda: len(server.requests) >= 2, "the second request")
            started = time.monotonic()
            proc.send_signal(signal.SIGINT)
            early = read_stderr_until(proc, STOPPING)  # the first Ctrl-C was taken
            if presses == 2:
                proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
            err = early + err
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        first = events(out)
        session_id = first[0]["session_id"]
        if presses == 1:
            # The step in flight finished (its response is stored) and then it stopped.
            assert first[-1]["event"] == "end"
            assert first[-1]["status"] == "stopped"
            assert [e["context_tokens"] for e in first if e["event"] == "response"] == [100, 200]
        else:
            assert time.monotonic() - started < 15  # did not wait out the 60 s response
            assert [e["context_tokens"] for e in first if e["event"] == "response"] == [100]

        resumed = run_ctxrelay(
            "run",
            "--resume",
            session_id,
            "--base-url",
            server.base_url,  # type: ignore[attr-defined]
            "--db",
            str(tmp_path / "sessions.db"),
            "--json",
            "--yes",
            env=_env(),
        )
    assert resumed.returncode == 0, resumed.stderr
    after = events(resumed.stdout)
    assert after[-1]["status"] == "done"
    responses = [e for e in after if e["event"] == "response"]
    assert responses[-1]["text"] == "finished"
