"""ctxrelay's hooks in the real Gemini CLI, offline: install into a trusted project (each
hook run on real payloads first), a clear refusal in an untrusted one, the guard denying
a ``cat`` of a 300 KB file with the model told why, doctor, and uninstall leaving the
settings as found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import GEMINI_COMPRESSION_THRESHOLD, PRINT_PAGE_BYTES
from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._gemini import events, function_responses, gemini_home, run_gemini
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e

SETTINGS = '{\n    "ui": {"theme": "GitHub"},   "general": {"vimMode": false}\n}\n'


def test_install_guard_doctor_uninstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gemini_cli()
    steps = [
        Step(tool_calls=[ToolUse("run_shell_command", {"command": "cat big.txt"})]),
        Step(text="I will page it instead."),
    ]
    with GeminiServer(steps) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        settings = project / ".gemini" / "settings.json"
        settings.parent.mkdir()
        settings.write_text(SETTINGS)
        (project / "big.txt").write_text(
            "".join(f"line {i:06d} lorem ipsum\n" for i in range(15_000))
        )
        assert (project / "big.txt").stat().st_size > 300_000
        assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) == 0
        written = json.loads(settings.read_text())
        assert written["ui"] == {"theme": "GitHub"}
        assert written["model"] == {"compressionThreshold": GEMINI_COMPRESSION_THRESHOLD}
        assert "ctxrelay.gemini.hook" in json.dumps(written["hooks"]["BeforeTool"])
        capsys.readouterr()
        assert ctxrelay(["gemini", "doctor", "--project-dir", str(project), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["trust"] == "trusted"
        assert {c["kind"] for c in report["checks"]} == {
            "BeforeTool hook",
            "AfterTool hook",
            "BeforeAgent hook",
            "AfterAgent hook",
            "mcp",  # session_history's server, started and asked for its tool
        }
        assert all(c["ok"] for c in report["checks"])
        out = events(run_gemini(project, "show me big.txt"))
        (blocked,) = function_responses(server)
    error = blocked["response"]["error"]
    assert error.startswith("Tool execution blocked: ctxrelay guard:")
    assert "first 8,000 and last 32,000 characters" in error
    assert f"head -c {PRINT_PAGE_BYTES} {project / 'big.txt'}" in error
    results = [e for e in out if e["type"] == "tool_result"]
    assert results[0]["status"] == "error"
    assert ctxrelay(["gemini", "uninstall", "--project-dir", str(project)]) == 0
    assert settings.read_text() == SETTINGS
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_an_untrusted_project_is_refused_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gemini_cli()
    with GeminiServer([]) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch, trusted=False)
        assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) != 0
    err = capsys.readouterr().err
    assert "does not trust" in err
    assert "Trust folder" in err
    assert "never trusts a folder for you" in err
    assert not (project / ".gemini").exists()
