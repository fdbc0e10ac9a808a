"""``cli._common``: errors of the policy core name the flag the user typed, in every
command that takes budget flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget import Budget, BudgetValueError
from ctxrelay.cli import main
from ctxrelay.cli._common import BUDGET_FLAGS, budget_error_message, handle_errors


def _run_argv(tmp_path: Path, *budget: str) -> list[str]:
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([{"text": "done"}]))
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return [
        "run", "--db", str(tmp_path / "s.db"), "--model", f"scripted:{steps}",
        "--workspace", str(ws), *budget, "task",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (
            ["--limit", "1000", "--reserve", "2000"],
            "--reserve must be smaller than --limit (1000), got 2000",
        ),
        (
            ["--limit", "1000", "--reserve", "10", "--threshold", "101"],
            "--threshold must be a percentage from 0 to 100, got 101",
        ),
        (
            ["--limit", "1000", "--reserve", "10", "--warning-lead", "200"],
            "--warning-lead must be from 0 to 100 points, got 200",
        ),
        (
            ["--limit", "0", "--reserve", "0"],
            "--limit must be a positive whole number of tokens, got 0",
        ),
    ],
)
def test_run_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], budget: list[str], message: str
) -> None:
    assert main(_run_argv(tmp_path, *budget)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"ctxrelay: error: {message}\n"


def test_run_and_policy_word_the_same_error_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run_argv(tmp_path, "--limit", "1000", "--reserve", "2000")) == 2
    run_err = capsys.readouterr().err
    argv = ["policy", "plan", "--limit", "1000", "--reserve", "2000", "--threshold", "60"]
    assert main(argv) == 2
    assert capsys.readouterr().err == run_err


def test_flags_map_is_per_command(capsys: pytest.CaptureFixture[str]) -> None:
    def build(argv: list[str]) -> int:
        Budget(limit=1000, output_reserve=int(argv[0]), threshold=60)
        return 0

    assert handle_errors(build)(["2000"]) == 2
    assert "output_reserve must be" in capsys.readouterr().err  # no flags: the field
    assert handle_errors(flags=BUDGET_FLAGS)(build)(["2000"]) == 2
    assert "--reserve must be" in capsys.readouterr().err
    other = BudgetValueError("tokens", -1, "zero or more")
    assert budget_error_message(other, BUDGET_FLAGS) == str(other)
