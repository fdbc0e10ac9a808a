"""``ctxrelay gemini …`` as a command: registered, a help that teaches, ``--json``, the
slider and the mode set, shown and reset, a bad value refused in a sentence, and install
and uninstall in a trusted project (the settings as found afterwards) without the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.cli.gemini import SUBCOMMANDS


def test_gemini_is_a_command_with_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxrelay(["--help"]) == 0
    assert "gemini" in capsys.readouterr().out
    assert ctxrelay(["gemini", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("install", "uninstall", "doctor", "config", "mcp"))
    assert ctxrelay(["gemini", "mcp", "--help"]) == 0
    assert "mcp_ctxrelay_session_history" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(set(SUBCOMMANDS) - {"mcp"}))  # mcp speaks MCP only
def test_each_subcommand_has_examples_and_json(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ctxrelay(["gemini", name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"ctxrelay gemini {name}" in out
    assert "examples:" in out
    assert "--json" in out


def test_the_slider_and_mode_are_set_shown_and_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CTXRELAY_GEMINI_THRESHOLD", raising=False)
    where = ["--project-dir", str(tmp_path)]
    assert ctxrelay(["gemini", "config", *where, "--threshold", "45", "--mode", "auto"]) == 0
    capsys.readouterr()
    assert ctxrelay(["gemini", "config", *where, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["threshold"], shown["threshold_source"], shown["mode"]) == (45, "project", "auto")
    assert ctxrelay(["gemini", "config", *where, "--threshold", "default", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["threshold_source"] == "default"
    assert ctxrelay(["gemini", "config", *where, "--threshold", "250"]) != 0
    assert "percentage from 0 to 100" in capsys.readouterr().err


def test_install_and_uninstall_in_a_trusted_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    where = ["--project-dir", str(project)]
    assert ctxrelay(["gemini", "install", *where]) != 0  # no trust rule: the CLI would ask
    assert "Trust folder" in capsys.readouterr().err
    assert not (project / ".gemini").exists()
    rules = {str(tmp_path): "TRUST_FOLDER", str(project / "x"): "DO_NOT_TRUST"}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))
    assert ctxrelay(["gemini", "install", *where, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["trust"] == "trusted"
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    assert sorted(settings["hooks"]) == ["AfterAgent", "AfterTool", "BeforeAgent", "BeforeTool"]
    assert settings["hooks"]["BeforeTool"][0]["matcher"] == "run_shell_command|read_file"
    assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] % 1000 == 0  # ms
    server = settings["mcpServers"]["ctxrelay"]
    assert server["args"][-2:] == ["gemini", "mcp"]
    assert server["trust"] is True  # the CLI's documented bypass: gemini -p denies an ask
    assert Path(server["command"]).is_absolute()
    assert ctxrelay(["gemini", "install", *where]) == 0  # again: replaced, never doubled
    again = json.loads((project / ".gemini" / "settings.json").read_text())
    assert again == settings
    assert ctxrelay(["gemini", "uninstall", *where]) == 0
    assert not (project / ".gemini").exists()  # install made it


def test_uninstall_leaves_the_users_servers_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    project = tmp_path / "proj"
    (project / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"})
    )
    settings = project / ".gemini" / "settings.json"
    found = b'{\n  "mcpServers": {"mine": {"command": "my-server"}},\n  "ui": {"theme": "x"}\n}\n'
    settings.write_bytes(found)
    where = ["--project-dir", str(project)]
    assert ctxrelay(["gemini", "install", *where]) == 0
    servers = json.loads(settings.read_text())["mcpServers"]
    assert servers["mine"] == {"command": "my-server"}  # the user's own server stays
    assert servers["ctxrelay"]["args"][-2:] == ["gemini", "mcp"]
    assert ctxrelay(["gemini", "uninstall", *where]) == 0
    assert settings.read_bytes() == found
