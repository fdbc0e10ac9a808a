"""The README's commands run as written: the two-command quick start, then one section for
each kind of user (Claude Code, Codex, Python agents, costs), each at most five commands, each
run here (``make`` targets as a dry run, the Anthropic model on the local wire server)."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ctxrelay.cli import main
from ctxrelay.store import DB_ENV
from ctxrelay.testing import AnthropicServer, Step
from tests.transcripts._lines import assistant, user, write

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTIONS = (
    "Quick start",
    "Claude Code",
    "Codex",
    "Gemini CLI",
    "OpenCode",
    "Python agents",
    "Your costs",
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert found, f"README has no section {title!r}"
    return found.group(1)


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.M | re.S)


def commands(title: str) -> list[str]:
    lines = []
    for block in blocks(section(title), "sh"):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def test_the_sections_come_in_order_after_a_two_command_quick_start() -> None:
    at = [README.index(f"\n## {title}\n") for title in SECTIONS]
    assert at == sorted(at)
    assert commands("Quick start") == ["make demo", "make test"]
    for title in SECTIONS[1:]:
        assert 0 < len(commands(title)) <= 5, (title, commands(title))


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv(DB_ENV, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    return home


def run_readme(
    title: str, where: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Run the section's commands in order, as a shell in ``where`` would (``~`` is the
    test's home); returns each ``ctxrelay`` command's output."""
    monkeypatch.chdir(where)
    outputs: dict[str, str] = {}
    for line in commands(title):
        words = [os.path.expanduser(w) if w.startswith("~/") else w for w in shlex.split(line)]
        for word in words:
            if word.startswith(str(Path.home())):  # the user's project exists
                Path(word).mkdir(parents=True, exist_ok=True)
        if words[0] == "make":
            done = subprocess.run(
                ["make", "-n", *words[1:]], cwd=ROOT, capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, (line, done.stderr)
        elif words[0] == "export":  # an API key: the local wire server takes any
            name, _, value = words[1].partition("=")
            assert value == "...", line
            monkeypatch.setenv(name, "test-key")
        else:
            assert words[0] in ("ctxrelay", ".venv/bin/ctxrelay"), line
            argv, target = words[1:], None
            if ">" in argv:
                argv, target = argv[: argv.index(">")], argv[argv.index(">") + 1]
            code = main(argv)
            out, err = capsys.readouterr()
            assert code == 0, (line, out, err)
            if target is not None:
                Path(target).write_text(out)
            outputs[line] = out
    return outputs


def test_claude_code_section_installs_shows_and_uninstalls(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outputs = run_readme("Claude Code", tmp_path, capsys, monkeypatch)
    project = user_home / "src" / "app"
    assert project.is_dir()
    assert not (project / ".claude").exists()  # install made it; uninstall took it away
    assert any("installed into" in out for out in outputs.values())
    assert any("Everything works." in out for out in outputs.values())
    assert any("removed from" in out for out in outputs.values())
    # The statusline the section shows is the one ctxrelay prints.
    shown = re.search(r"`(ctx 31% [^`]+)`", " ".join(section("Claude Code").split()))
    assert shown
    payload = (
        '{"session_id": "s", "model": {"id": "claude-sonnet-4-6"}, "context_window": '
        '{"context_window_size": 200000, "used_percentage": 31, "current_usage": '
        '{"input_tokens": 2000, "cache_creation_input_tokens": 5000, '
        '"cache_read_input_tokens": 55000, "output_tokens": 500}}}'
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    assert main(["claude", "statusline"]) == 0
    assert ANSI.sub("", capsys.readouterr().out).strip() == shown.group(1)


def test_codex_section_installs_trusts_checks_and_uninstalls(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.codex._cli import codex_cli

    monkeypatch.setenv("PATH", f"{codex_cli().parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    outputs = run_readme("Codex", tmp_path, capsys, monkeypatch)
    assert any("Codex trusts all" in out for out in outputs.values())
    assert any("Everything works." in out for out in outputs.values())
    home = user_home / ".codex"
    assert not (home / "hooks.json").exists()
    assert not (home / "config.toml").exists()  # install's trust made it; uninstall took it


def test_gemini_section_installs_configures_checks_and_uninstalls(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    folder = user_home / ".gemini"
    folder.mkdir()
    found = '{"ui": {"theme": "GitHub"}}\n'
    (folder / "settings.json").write_text(found)
    # the person trusted the folder in the CLI's dialog
    (folder / "trustedFolders.json").write_text(json.dumps({str(tmp_path): "TRUST_FOLDER"}))
    outputs = run_readme("Gemini CLI", tmp_path, capsys, monkeypatch)
    assert any("installed into" in out for out in outputs.values())
    assert any("mode: auto" in out for out in outputs.values())
    assert any("Everything works." in out for out in outputs.values())
    assert (folder / "settings.json").read_text() == found


def test_opencode_section_installs_configures_checks_and_uninstalls(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.e2e._opencode import opencode_cli

    monkeypatch.setenv("PATH", f"{opencode_cli().parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(user_home / ".local" / "state"))
    monkeypatch.setenv("OPENCODE_DISABLE_MODELS_FETCH", "1")
    monkeypatch.setenv("OPENCODE_DISABLE_AUTOUPDATE", "1")
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    folder = user_home / ".config" / "opencode"
    folder.mkdir(parents=True)
    # with its $schema: OpenCode adds one to a file without it when it starts
    found = '{"$schema": "https://opencode.ai/config.json", "theme": "system"}\n'
    (folder / "opencode.json").write_text(found)
    outputs = run_readme("OpenCode", tmp_path, capsys, monkeypatch)
    assert any("wrote the plugin" in out for out in outputs.values())
    assert any("threshold: 50%" in out for out in outputs.values())
    assert any(": loaded." in out and "Everything works." in out for out in outputs.values())
    # OpenCode's own files in its folder (doctor started it) stay; ctxrelay's went
    assert not (folder / "plugin").exists()
    assert not (folder / "ctxrelay-install.json").exists()
    assert (folder / "opencode.json").read_text() == found


def test_python_agents_section_runs_on_the_anthropic_wire(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps = [Step(text="The test passes now.", input_tokens=1_200)] * 2
    with AnthropicServer(steps) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        outputs = run_readme("Python agents", tmp_path, capsys, monkeypatch)
        listing = next(out for line, out in outputs.items() if "sessions list" in line)
        assert "Fix the failing test" in listing
        (example,) = blocks(section("Python agents"), "python")
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compile(example, "README.md", "exec"), {})  # the README's own example
        assert printed.getvalue().split()[0] == "done"
        models = {r.body["model"] for r in server.requests_to("/v1/messages")}
        assert models == {"claude-sonnet-4-6"}
    assert (tmp_path / "agent.db").exists()
    assert "ctxrelay.integrations" in section("Python agents")


def test_costs_section_analyzes_the_users_transcripts(
    user_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    projects = user_home / ".claude" / "projects" / "-home-me-src-app"
    projects.mkdir(parents=True)
    records = [user("fix it")]
    for i in range(30):
        records.append(assistant(f"m{i}", created=6_000, read=6_000 * i, output=300))
    write(projects / "s-1.jsonl", records)
    outputs = run_readme("Your costs", tmp_path, capsys, monkeypatch)
    assert any("handoff:" in out for out in outputs.values())
    assert '"sessions"' in (tmp_path / "costs.json").read_text()
