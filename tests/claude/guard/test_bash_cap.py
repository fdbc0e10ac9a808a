"""The Bash output cap the guard reads: Claude Code's ``bashOutputMaxChars`` setting from
its settings layers, else ``BASH_MAX_OUTPUT_LENGTH``. What Claude Code itself does with
the same files is ``tests/e2e/test_claude_bash_cap.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import CLAUDE_CODE_BASH_OUTPUT_DEFAULT
from ctxrelay.claude.guard.bash import SETTING, deny_reason, host_output


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    return project, home


def _set(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({SETTING: value}))


def _cap(project: Path, home: Path, **env: str) -> int:
    return host_output(env, project, home).cap


def test_without_the_setting_the_variable_or_the_default(where: tuple[Path, Path]) -> None:
    project, home = where
    assert _cap(project, home) == CLAUDE_CODE_BASH_OUTPUT_DEFAULT
    assert _cap(project, home, BASH_MAX_OUTPUT_LENGTH="9000") == 9_000
    assert _cap(project, home, BASH_MAX_OUTPUT_LENGTH="200000") == 150_000


def test_the_setting_replaces_the_variable(where: tuple[Path, Path]) -> None:
    project, home = where
    _set(project / ".claude" / "settings.json", 20_000)
    assert _cap(project, home, BASH_MAX_OUTPUT_LENGTH="4000") == 20_000


def test_local_over_project_over_user(where: tuple[Path, Path]) -> None:
    project, home = where
    _set(home / ".claude" / "settings.json", 5_000)
    assert _cap(project, home) == 5_000
    _set(project / ".claude" / "settings.json", 6_000)
    assert _cap(project, home) == 6_000
    _set(project / ".claude" / "settings.local.json", 7_000)
    assert _cap(project, home) == 7_000


def test_the_user_layer_follows_claude_config_dir(where: tuple[Path, Path]) -> None:
    project, home = where
    _set(home / "elsewhere" / "settings.json", 8_000)
    assert _cap(project, home) == CLAUDE_CODE_BASH_OUTPUT_DEFAULT
    assert _cap(project, home, CLAUDE_CONFIG_DIR=str(home / "elsewhere")) == 8_000


@pytest.mark.parametrize(("value", "cap"), [(1_000, 4_000), (200_000, 128_000)])
def test_the_setting_is_clamped_as_claude_code_clamps_it(
    where: tuple[Path, Path], value: int, cap: int
) -> None:
    project, home = where
    _set(project / ".claude" / "settings.json", value)
    assert _cap(project, home) == cap


@pytest.mark.parametrize("value", ["20000", 20_000.5, 0, -5, True, None])
def test_a_value_claude_code_refuses_falls_through_to_the_next_layer(
    where: tuple[Path, Path], value: object
) -> None:
    project, home = where
    _set(home / ".claude" / "settings.json", 5_000)
    _set(project / ".claude" / "settings.local.json", value)
    assert _cap(project, home, BASH_MAX_OUTPUT_LENGTH="9000") == 5_000


def test_an_unreadable_settings_file_sets_nothing(where: tuple[Path, Path]) -> None:
    project, home = where
    (project / ".claude" / "settings.local.json").write_text("{not json")
    _set(project / ".claude" / "settings.json", 6_000)
    assert _cap(project, home) == 6_000


def test_the_guard_denies_a_print_the_raised_setting_would_hand_over_whole(
    where: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = where
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "4000")  # what install sets
    (project / "notes.md").write_text("a line of notes\n" * 1_250)  # 20,000 bytes
    assert deny_reason("cat notes.md", str(project)) is None  # a preview under 4,000
    _set(project / ".claude" / "settings.local.json", 128_000)
    reason = deny_reason("cat notes.md", str(project))
    assert reason is not None
    assert "128,000 characters" in reason
