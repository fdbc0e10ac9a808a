"""``ctxrelay claude config``: precedence, bad values, writes that keep the rest."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import DEFAULT_MAIN_HANDOVER
from ctxrelay.claude.config import config_path, load, project_dir_of, set_value
from ctxrelay.cli.claude import main
from ctxrelay.errors import ConfigError
from tests.claude._handoff import isolate


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def test_default_comes_from_the_bounds(project: Path) -> None:
    cfg = load(project)
    assert cfg.main_handover == DEFAULT_MAIN_HANDOVER
    assert cfg.main_handover_source == "default"
    assert cfg.context_window is None
    assert cfg.problems == ()


def test_env_over_project_over_user(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_value("main_handover", "off", scope="user")
    assert load(project).main_handover == "off"
    assert load(project).main_handover_source == "user"
    set_value("main_handover", "auto", scope="project", project_dir=project)
    assert (load(project).main_handover, load(project).main_handover_source) == (
        "auto",
        "project",
    )
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", " Manual ")
    assert (load(project).main_handover, load(project).main_handover_source) == (
        "manual",
        "env",
    )
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "1_000_000")
    assert load(project).context_window == 1_000_000


def test_bad_values_are_ignored_and_named(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "sometimes")
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "-5")
    path = config_path("project", project)
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    cfg = load(project)
    assert cfg.main_handover == DEFAULT_MAIN_HANDOVER
    assert cfg.context_window is None
    assert len(cfg.problems) == 3
    assert any("not valid JSON" in p for p in cfg.problems)
    assert any("sometimes" in p for p in cfg.problems)


def test_set_keeps_other_keys_and_refuses_broken_files(project: Path) -> None:
    path = config_path("project", project)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"other": {"x": 1}, "claude": {"keep": True}}))
    set_value("main_handover", "auto", project_dir=project)
    set_value("context_window", "300000", project_dir=project)
    assert json.loads(path.read_text()) == {
        "other": {"x": 1},
        "claude": {"keep": True, "main_handover": "auto", "context_window": 300000},
    }
    set_value("context_window", None, project_dir=project)
    assert "context_window" not in json.loads(path.read_text())["claude"]
    with pytest.raises(ConfigError):
        set_value("main_handover", "always", project_dir=project)
    with pytest.raises(ConfigError):
        set_value("nope", "1", project_dir=project)
    path.write_text("[not an object")
    with pytest.raises(ConfigError):
        set_value("main_handover", "auto", project_dir=project)
    assert path.read_text() == "[not an object"  # nothing lost


def test_project_dir_prefers_claude_project_dir(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert project_dir_of(str(tmp_path)) == tmp_path
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert project_dir_of(str(tmp_path / "sub")) == project


def test_cli_sets_and_shows(project: Path) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["config", "--mode", "auto", "--project-dir", str(project), "--json"])
    assert code == 0
    shown = json.loads(out.getvalue())
    assert shown["main_handover"] == "auto"
    assert shown["main_handover_source"] == "project"
    assert shown["written"] == [str(config_path("project", project))]
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["config", "--window", "auto", "--project-dir", str(project)]) == 0
    assert "mode       auto (project)" in out.getvalue()  # named as its option
    assert "main_handover" not in out.getvalue()


def test_cli_bad_usage_is_one_line(project: Path) -> None:
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["config", "--mode", "sometimes"]) == 2
    assert err.getvalue().count("\n") == 1
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["config", "--window", "lots", "--project-dir", str(project)]) == 1
    assert "positive number of tokens" in err.getvalue()


def test_window_default_unsets_it_as_threshold_default_does(project: Path) -> None:
    with redirect_stdout(io.StringIO()):
        assert main(["config", "--window", "300000", "--project-dir", str(project)]) == 0
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["config", "--window", "default", "--project-dir", str(project)]) == 0
    assert "window     from the statusline, else the model id" in out.getvalue()
