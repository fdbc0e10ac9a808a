"""The hook probe (``ctxrelay.claude.setup.probe.check_hook``) exercises the guard's
shell parser: a hook that denies ``cat big.txt`` (no parser needed) but lets
``cd sub && cat big.txt`` through runs where tree-sitter cannot be imported, and the
check fails saying so and naming the interpreter that needs the ``guard`` extra."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ctxrelay.claude.setup import probe
from ctxrelay.claude.setup.launcher import hook_candidates
from tests.hooks.install._launchers import PYTHON, without_parser


def _says_no_parser(detail: str) -> None:
    assert probe.NO_PARSER in detail
    assert probe.PARSER_COMMAND in detail
    assert "MissingExtraError" in detail  # what the hook said
    assert f"{PYTHON} -m pip install " in detail  # the interpreter that needs the extra
    assert "tree-sitter" in detail


def test_a_claude_hook_without_the_parser_fails_its_check_loudly() -> None:
    check = probe.check_hook(without_parser("ctxrelay.claude.hook"), runs=1)
    assert not check.ok
    _says_no_parser(check.detail)


def test_this_environments_hooks_pass_the_parser_probe() -> None:
    for command in hook_candidates():
        check = probe.check_hook(command, runs=1)
        assert check.ok, check.detail
        assert probe.PARSER_COMMAND in check.detail


@pytest.mark.parametrize(
    ("shebang", "found"),
    [
        ("#!/venv/bin/python\n", "/venv/bin/python"),
        ("#!/usr/bin/env python3\n", "python3"),
        ("#!/usr/bin/env -S python3.11 -I\n", "python3.11"),
        ("#!/bin/sh\n", None),
    ],
)
def test_the_interpreter_of_a_console_script_is_its_shebangs(
    tmp_path: Path, shebang: str, found: str | None
) -> None:
    script = tmp_path / "ctxrelay-hook"
    script.write_text(shebang + "import sys\n")
    assert probe.hook_interpreter(shlex.quote(str(script))) == found


def test_the_interpreter_of_a_python_command_is_its_first_word() -> None:
    assert probe.hook_interpreter("/v/bin/python3 -I -m ctxrelay.claude.hook") == "/v/bin/python3"
    assert probe.hook_interpreter("'/my venv/bin/python' -m x") == "/my venv/bin/python"
    assert probe.hook_interpreter("/nowhere/ctxrelay-hook") is None
    assert probe.hook_interpreter("'unclosed") is None
    assert probe.hook_interpreter("") is None


def test_without_a_known_interpreter_the_sentence_still_says_what_to_install() -> None:
    said = probe.no_parser("sh /plugin/hooks/run-hook.sh PreToolUse", "nothing")
    assert probe.NO_PARSER in said
    assert "'guard' extra" in said
    assert "tree-sitter" in said
