"""The probes every host shares (``ctxrelay.hooks.install.probe``): a command run as a
host runs it, and the guard's probe, whose sentence for a hook without the shell parser
names the interpreter that needs the ``guard`` extra."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ctxrelay.hooks.install import probe

DENY = json.dumps({"hookSpecificOutput": {"permissionDecision": "deny"}})


def _guard(command: str, root: Path, **options: object) -> probe.Check:
    return probe.check_guard(
        command,
        lambda bash: json.dumps({"command": bash}),
        cwd=root,
        env=probe.state_env(root),
        **options,  # type: ignore[arg-type]
    )


def test_a_command_runs_through_the_shell_with_its_payload(tmp_path: Path) -> None:
    ran = probe.run_as_host('cat; echo "$PWD" >&2; exit 3', "hello", cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr.strip()) == (3, "hello", str(tmp_path))
    assert probe.run_as_host("exec /nowhere/at/all", "", cwd=tmp_path).returncode == 127


def test_a_guard_that_denies_both_commands_and_fails_open_passes(tmp_path: Path) -> None:
    # A fake hook: it denies anything that mentions big.txt and ignores the rest.
    hook = f"grep -q big.txt && printf '%s' '{DENY}' || true"
    with probe.scratch("x\n" * 10) as root:
        check = _guard(hook, root, runs=2)
        assert (root / probe.PARSER_DIR / "big.txt").is_file()
    assert check.ok, check.detail
    assert probe.PARSER_COMMAND in check.detail
    assert check.ms is not None
    assert check.python_ms is not None


def test_each_way_a_guard_fails_is_one_sentence(tmp_path: Path) -> None:
    with probe.scratch("x\n") as root:
        assert _guard("exit 2", root).detail.startswith("it exited 2")
        said = _guard("echo warn >&2; printf '%s' '" + DENY + "'", root, quiet=True).detail
        assert said == "it failed open (warn)"
        assert _guard("echo '{}'", root).detail == "'cat big.txt' was not denied (it answered {})"
        # Denies what it can judge from words alone, lets the parser's command through.
        half = f"grep -q '\"cat big.txt\"' && printf '%s' '{DENY}'; echo MissingExtraError >&2"
        detail = _guard(half, root).detail
        assert probe.NO_PARSER in detail
        assert "MissingExtraError" in detail
        # Allows nothing, not even a small file.
        every = f"printf '%s' '{DENY}'"
        assert _guard(every, root, allowed="cat small.txt").detail == (
            "'cat small.txt' was not allowed"
        )


def test_an_event_with_nothing_to_say_must_say_nothing(tmp_path: Path) -> None:
    env = probe.state_env(tmp_path)
    assert probe.check_quiet("cat >/dev/null", "{}", cwd=tmp_path, env=env).ok
    said = probe.check_quiet("echo hi", "{}", cwd=tmp_path, env=env).detail
    assert said == "it answered hi"


def test_a_deny_is_read_as_claude_code_and_codex_write_it() -> None:
    assert probe.denied(DENY)
    assert not probe.denied('{"hookSpecificOutput": {"permissionDecision": "allow"}}')
    assert not probe.denied("")
    assert not probe.denied("[]")


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
