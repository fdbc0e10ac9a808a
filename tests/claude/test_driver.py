"""``ctxrelay claude run``: argument checks (the runs themselves are end-to-end tests in
``tests/e2e/test_claude_handoff.py``, against the real CLI)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from ctxrelay.budget.bounds import HANDOFF_RETRY_MAX, HANDOFF_WAIT_TURNS
from ctxrelay.claude.driver import _MAX_NUDGES
from ctxrelay.cli.claude import main


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["run", *argv])
    return code, out.getvalue(), err.getvalue()


def test_help_teaches_with_examples() -> None:
    code, out, _ = _run("--help")
    assert code == 0
    assert "ctxrelay claude run --mode auto" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--max-sessions", "0", "task"), "--max-sessions must be at least 1"),
        (("--project-dir", "/nonexistent/ctxrelay-x", "task"), "does not exist"),
    ],
)
def test_bad_arguments_are_one_sentence(argv: tuple[str, ...], message: str) -> None:
    code, out, err = _run(*argv)
    assert code == 1
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_bad_mode_is_a_usage_error() -> None:
    code, _, err = _run("--mode", "sometimes", "task")
    assert code == 2
    assert "invalid choice" in err


def test_waiting_turns_cover_the_hooks_retry() -> None:
    # Enough "Continue." turns for the Stop hook to wait, retry and give up.
    assert _MAX_NUDGES > HANDOFF_WAIT_TURNS * (HANDOFF_RETRY_MAX + 1)
