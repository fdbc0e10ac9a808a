"""Codex's hook probe (``ctxrelay.codex.setup.probe.check_hook``) exercises the guard's shell
parser as Claude Code's does: a hook that cannot import tree-sitter fails its
``PreToolUse`` check with the sentence that names the interpreter needing the extra."""

from __future__ import annotations

from ctxrelay.codex.setup.install import EVENTS
from ctxrelay.codex.setup.launcher import hook_candidates
from ctxrelay.codex.setup.probe import check_hook
from ctxrelay.hooks.install.probe import NO_PARSER, PARSER_COMMAND
from tests.hooks.install._launchers import PYTHON, without_parser


def test_a_hook_without_the_parser_fails_its_pre_tool_use_check_loudly() -> None:
    check = check_hook(without_parser("ctxrelay.codex.hook"))
    assert not check.ok
    assert NO_PARSER in check.detail
    assert PARSER_COMMAND in check.detail
    assert "MissingExtraError" in check.detail  # what the hook said on stderr
    assert f"{PYTHON} -m pip install " in check.detail
    assert "tree-sitter" in check.detail


def test_this_environments_hook_passes_every_events_probe() -> None:
    (command,) = hook_candidates()
    for event in EVENTS:
        check = check_hook(command, event)
        assert check.ok, (event, check.detail)
    assert PARSER_COMMAND in check_hook(command).detail
