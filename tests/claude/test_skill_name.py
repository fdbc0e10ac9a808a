"""The handoff skill's name: installed as ``/ctxrelay-handoff``, ``/ctxrelay:handoff``
from the plugin, and every hint names the one that works in the setup at hand
(:func:`ctxrelay.claude.handoff.skill_command`). The real CLI's side of this is in
``tests/e2e/test_claude_handoff.py``."""

from __future__ import annotations

import hashlib
import io
import json
import shlex
from pathlib import Path

import pytest

from ctxrelay.budget.triggers import MainTrigger
from ctxrelay.claude._events.stop import failed_text, hint_text
from ctxrelay.claude.handoff import INSTALLED_SKILL, skill_command
from ctxrelay.claude.setup._snippet import plugin_dir
from ctxrelay.cli.claude import main
from ctxrelay.cli.claude.statusline import main as statusline_main
from ctxrelay.hooks.install.manifest import MANIFEST_NAME

INSTALLED = "/ctxrelay-handoff"
PLUGIN = "/ctxrelay:handoff"
PLUGIN_SKILL = plugin_dir() / "skills" / "handoff" / "SKILL.md"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR", "CTXRELAY_MAIN_HANDOVER"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def installed_skill(base: Path) -> Path:
    return base / ".claude" / "skills" / INSTALLED_SKILL / "SKILL.md"


def test_install_copies_the_skill_under_its_own_prefixed_name(project: Path) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    skill = installed_skill(project)
    text = skill.read_text()
    assert f"\nname: {INSTALLED_SKILL}\n" in text
    assert "\nname: handoff\n" in PLUGIN_SKILL.read_text()  # the plugin's stays /…:handoff
    # Nothing else of the skill changes but the command it runs: this environment's
    # ctxrelay, by absolute path, in its `!` line and its allowed-tools alike.
    ctxrelay = json.loads((project / ".claude" / MANIFEST_NAME).read_text())["commands"]
    assert Path(shlex.split(ctxrelay["ctxrelay"])[0]).is_absolute()
    expected = (
        PLUGIN_SKILL.read_text()
        .replace("name: handoff", f"name: {INSTALLED_SKILL}", 1)
        .replace("ctxrelay claude handoff", f"{ctxrelay['ctxrelay']} claude handoff")
    )
    assert text == expected
    assert f"allowed-tools: Bash({ctxrelay['ctxrelay']} claude handoff:*)" in text
    assert not (project / ".claude" / "skills" / "handoff").exists()
    assert main(["install", "--project-dir", str(project)]) == 0  # idempotent: still one copy
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert not (project / ".claude" / "skills").exists()


def test_a_skill_of_yours_called_handoff_is_left_alone(project: Path) -> None:
    mine = project / ".claude" / "skills" / "handoff" / "SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: handoff\ndescription: mine\n---\nmy own handoff\n")
    assert main(["install", "--project-dir", str(project)]) == 0
    assert installed_skill(project).is_file()
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert mine.read_text().endswith("my own handoff\n")


def _old_install(project: Path, edited: bool) -> Path:
    """What an earlier version left: the skill at skills/handoff/, in the manifest."""
    old = project / ".claude" / "skills" / "handoff" / "SKILL.md"
    old.parent.mkdir(parents=True)
    old.write_bytes(PLUGIN_SKILL.read_bytes())
    digest = hashlib.sha256(old.read_bytes()).hexdigest()
    manifest = {"version": 1, "files": {"skills/handoff/SKILL.md": digest}}
    (project / ".claude" / MANIFEST_NAME).write_text(json.dumps(manifest))
    if edited:
        old.write_text(old.read_text() + "\nmy note\n")
    return old


def test_reinstalling_over_an_earlier_version_moves_the_skill(project: Path) -> None:
    old = _old_install(project, edited=False)
    assert main(["install", "--project-dir", str(project), "--json"]) == 0
    assert not old.exists()
    assert not old.parent.exists()
    assert installed_skill(project).is_file()
    manifest = json.loads((project / ".claude" / MANIFEST_NAME).read_text())
    assert "skills/handoff/SKILL.md" not in manifest["files"]


def test_an_edited_copy_of_an_earlier_version_is_kept(project: Path) -> None:
    old = _old_install(project, edited=True)
    assert main(["install", "--project-dir", str(project)]) == 0
    assert old.read_text().endswith("my note\n")
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert old.read_text().endswith("my note\n")
    assert not installed_skill(project).exists()


def test_the_name_follows_the_setup(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert skill_command(project) == PLUGIN  # nothing installed: only the plugin can be
    assert main(["install", "--project-dir", str(project)]) == 0
    assert skill_command(project) == INSTALLED
    assert skill_command() == INSTALLED  # the current directory is the project
    # A hook run from the plugin's hooks.json (Claude Code exports CLAUDE_PLUGIN_ROOT to
    # those only) names the plugin's form.
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin_dir()))
    assert skill_command(project) == PLUGIN
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT")
    # Claude Code's project directory wins over the hook's cwd.
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    assert skill_command(elsewhere) == PLUGIN
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert skill_command(elsewhere) == INSTALLED


def test_a_user_install_names_the_installed_skill_in_every_project(
    project: Path, tmp_path: Path
) -> None:
    assert main(["install", "--user"]) == 0
    assert installed_skill(tmp_path / "home").is_file()
    assert skill_command(tmp_path / "another") == INSTALLED


def test_hints_and_the_statusline_name_the_skill_of_the_setup(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def statusline() -> str:
        payload = {
            "session_id": "s-skill",
            "workspace": {"project_dir": str(project)},
            "model": {"id": "claude-sonnet-4-5"},
            "context_window": {
                "context_window_size": 200_000,
                "current_usage": {"input_tokens": 130_000},
            },
        }
        out = io.StringIO()
        statusline_main([], io.StringIO(json.dumps(payload)), out)
        return out.getvalue()

    assert f"Run {PLUGIN} to" in hint_text([MainTrigger.CONTEXT], 130_000, 200_000)
    assert statusline().rstrip().endswith(f": {PLUGIN}\x1b[0m")
    assert main(["install", "--project-dir", str(project)]) == 0
    assert f"Run {INSTALLED} to" in hint_text([MainTrigger.TASK_DONE], None, 200_000)
    assert f"Run {INSTALLED} to" in failed_text(2)
    assert statusline().rstrip().endswith(f": {INSTALLED}\x1b[0m")
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")  # auto names no skill
    assert "handoff" not in statusline().split("·")[1].split(")")[-1]
    # An explicit name wins (the docs show the installed one).
    assert f"Run {PLUGIN} to" in hint_text([MainTrigger.CONTEXT], 130_000, 200_000, PLUGIN)


def test_the_installed_skill_still_runs_at_the_usable_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.budget.bounds import MAIN_OUTPUT_RESERVE as OUTPUT_RESERVE
    from ctxrelay.claude._limit import deny_reason
    from tests.claude._handoff import SESSION, Transcript, isolate

    project = isolate(monkeypatch, tmp_path)
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("work")
    t.assistant(context=200_000 - OUTPUT_RESERVE, tools=[("Bash", {"command": "ls"})])

    def call(skill: str) -> str | None:
        return deny_reason(
            {
                "session_id": SESSION,
                "transcript_path": str(t.path),
                "cwd": str(project),
                "hook_event_name": "PreToolUse",
                "tool_name": "Skill",
                "tool_input": {"skill": skill},
            }
        )

    assert call("ctxrelay:handoff") is None  # the plugin's name runs
    assert call("some-other-skill") is not None  # at the limit, other skills do not
    assert call(INSTALLED_SKILL) is None  # the installed name must run too
