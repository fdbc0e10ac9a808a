"""Claude Code's hook probe (``ctxrelay.claude.setup.probe.check_hook``) exercises the
guard's shell parser: a hook that denies ``cat big.txt`` (no parser needed) but lets
``cd sub && cat big.txt`` through runs where tree-sitter cannot be imported, and the
check fails saying so and naming the interpreter that needs the ``guard`` extra."""

from __future__ import annotations

from ctxrelay.claude.setup import probe
from ctxrelay.claude.setup.launcher import hook_candidates
from ctxrelay.hooks.install.probe import NO_PARSER, PARSER_COMMAND
from tests.hooks.install._launchers import PYTHON, without_parser


def test_a_claude_hook_without_the_parser_fails_its_check_loudly() -> None:
    check = probe.check_hook(without_parser("ctxrelay.claude.hook"), runs=1)
    assert not check.ok
    assert NO_PARSER in check.detail
    assert PARSER_COMMAND in check.detail
    assert "MissingExtraError" in check.detail  # what the hook said
    assert f"{PYTHON} -m pip install " in check.detail  # the interpreter that needs the extra
    assert "tree-sitter" in check.detail


def test_this_environments_hooks_pass_the_parser_probe() -> None:
    for command in hook_candidates():
        check = probe.check_hook(command, runs=1)
        assert check.ok, check.detail
        assert PARSER_COMMAND in check.detail
