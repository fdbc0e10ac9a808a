"""Every ``ctxrelay claude …`` subcommand's ``--help`` teaches: a description, examples
to copy, and the default of every option that takes a value."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ctxrelay.claude.extras.driver import MAX_SESSIONS, DriverOptions
from ctxrelay.cli.claude import SUBCOMMANDS
from ctxrelay.cli.claude import main as claude_main


def _help(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        code = claude_main([*argv, "--help"] if argv else ["--help"])
    assert code == 0
    return out.getvalue()


def _options(text: str) -> dict[str, str]:
    """Each option's help entry (its first line and wrapped continuation lines)."""
    entries: dict[str, str] = {}
    current: str | None = None
    for line in text.split("options:", 1)[-1].splitlines():
        head = re.match(r"^  (-[^ ].*?)(?:  +(.*))?$", line)
        if head:
            current = head.group(1)
            entries[current] = head.group(2) or ""
        elif current is not None and line.startswith("    "):
            entries[current] += " " + line.strip()
        elif not line.strip():
            current = None
    return entries


@pytest.mark.parametrize("sub", sorted(SUBCOMMANDS))
def test_help_has_a_description_and_examples(sub: str) -> None:
    text = _help(sub)
    assert text.startswith(f"usage: ctxrelay claude {sub}")
    assert re.search(r"^examples?:$", text, re.MULTILINE), text
    examples = text.split("example", 1)[1]
    assert f"ctxrelay claude {sub}" in examples


@pytest.mark.parametrize("sub", sorted(SUBCOMMANDS))
def test_every_option_with_a_value_shows_its_default(sub: str) -> None:
    entries = _options(_help(sub))
    for flags, help_text in entries.items():
        takes_value = re.search(r"--[\w-]+ (\{|[A-Z])", flags)
        if takes_value:
            assert "default" in help_text, f"{sub} {flags}: {help_text!r}"


def test_run_shows_how_many_sessions_it_starts_by_default() -> None:
    entries = _options(_help("run"))
    sessions = next(v for k, v in entries.items() if k.startswith("--max-sessions"))
    assert f"(default: {MAX_SESSIONS})" in sessions
    assert DriverOptions(Path(".")).max_sessions == MAX_SESSIONS


def test_the_subcommand_list_teaches_too() -> None:
    text = _help()
    for sub in SUBCOMMANDS:
        assert f"  {sub} " in text
    assert "examples:" in text
