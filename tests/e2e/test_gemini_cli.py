"""The pinned Gemini CLI runs offline against ``ctxrelay.testing``'s ``GeminiServer``:
a headless ``gemini -p`` turn with a shell call, the usage it records in its session
file, the CLI's own cut of a long shell output (what the guard's ``HostOutput`` says it
does), and the folder trust it applies before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import GEMINI_TOOL_OUTPUT_MAX_CHARS
from ctxrelay.gemini.guard import host_output
from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._gemini import MODEL, events, function_responses, gemini_home, run_gemini
from tests.e2e._gemini import session_files as chats
from tests.gemini._cli import gemini_cli, pinned_version

pytestmark = pytest.mark.e2e


def test_a_headless_turn_runs_offline_and_records_its_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    steps = [
        Step(
            tool_calls=[ToolUse("run_shell_command", {"command": "cat a.txt"})],
            input_tokens=1_000,
            cache_read_input_tokens=5_000,
            reasoning_tokens=42,
            output_tokens=12,
        ),
        Step(text="All done here.", input_tokens=1_200, output_tokens=4),
    ]
    with GeminiServer(steps) as server:
        user, project = gemini_home(tmp_path, server, monkeypatch)
        (project / "a.txt").write_text("hello from a.txt\n")
        out = events(run_gemini(project, "read a.txt"))
        assert not server.unknown
        assert [r.route for r in server.requests] == [
            f"/v1beta/models/{MODEL}:streamGenerateContent"
        ] * 2
        (answer,) = function_responses(server)
    assert "hello from a.txt" in json.dumps(answer)
    assert out[0]["type"] == "init"
    assert out[-1]["stats"]["cached"] == 5_000
    (chat,) = chats(user)
    records = [json.loads(line) for line in chat.read_text().splitlines()]
    tokens = [r["tokens"] for r in records if r.get("type") == "gemini"]
    assert tokens[0] == {
        "input": 6_000,
        "output": 12,
        "cached": 5_000,
        "thoughts": 42,
        "tool": 0,
        "total": 6_054,
    }
    assert tokens[-1]["input"] == 1_200


def test_the_cli_cuts_a_long_shell_output_as_the_guard_assumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    steps = [
        Step(tool_calls=[ToolUse("run_shell_command", {"command": "cat big.txt"})]),
        Step(tool_calls=[ToolUse("run_shell_command", {"command": "cat mid.txt"})]),
        Step(text="Seen."),
    ]
    with GeminiServer(steps) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)  # no ctxrelay installed
        (project / "big.txt").write_text("".join(f"row {i:07d}\n" for i in range(10_000)))
        (project / "mid.txt").write_text("".join(f"row {i:07d}\n" for i in range(3_000)))
        events(run_gemini(project, "show me both"))
        big, mid = (r["response"]["output"] for r in function_responses(server))
    host = host_output()
    assert "Showing first 8,000 and last 32,000 characters" in big
    assert "row 0000000\n" in big
    assert "row 0009999" in big
    assert "row 0005000" not in big  # the middle cut out
    assert GEMINI_TOOL_OUTPUT_MAX_CHARS < len(big) < host.delivered(120_000) + 1_000
    # Under the cut the whole output reaches the model: 36,000 bytes of it.
    assert "row 0001500\n" in mid
    assert "too large" not in mid
    assert host.delivered(36_000) == 36_000 <= len(mid)


def test_an_untrusted_folder_stops_a_headless_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    with GeminiServer([Step(text="never")]) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch, trusted=False)
        done = run_gemini(project, "hello")
        assert server.requests == []
    assert done.returncode == 55, done.stderr[-2000:]
    assert "not running in a trusted directory" in done.stderr


def test_the_pin_is_what_runs() -> None:
    assert cli_version(gemini_cli()) == pinned_version()
