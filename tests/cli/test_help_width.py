"""Every command's ``--help`` wraps at the terminal's width (``COLUMNS``), never wider:
the top-level usage, each command, and each subcommand, found from the command tables
and the parsers themselves (a new command is checked without being listed here)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator

import pytest

from ctxrelay.cli import COMMANDS, main
from ctxrelay.cli._wrap import wrap_help


def _paths() -> Iterator[tuple[str, ...]]:
    yield ()
    for name, (module_name, _) in COMMANDS.items():
        yield (name,)
        module = importlib.import_module(module_name)
        table = getattr(module, "SUBCOMMANDS", None)
        if table is not None:
            yield from ((name, sub) for sub in table)
            continue
        make = getattr(module, "_parser", None)
        parser = make() if callable(make) else None
        for action in getattr(parser, "_actions", ()):
            if isinstance(action, argparse._SubParsersAction):
                yield from ((name, sub) for sub in action.choices)


PATHS = list(_paths())


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "ctxrelay" for p in PATHS])
def test_help_fits_the_terminal(
    path: tuple[str, ...],
    columns: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage" in out.lower()
    too_long = [line for line in out.splitlines() if len(line) > columns]
    assert not too_long, f"lines over {columns} columns: {too_long}"


def test_the_commands_and_subcommands_are_all_walked() -> None:
    walked = {" ".join(p) for p in PATHS}
    assert {"run", "sessions list", "sessions history", "policy plan", "claude install"} <= walked


def test_help_text_laid_out_by_hand_wraps_and_keeps_its_shape() -> None:
    text = (
        "A paragraph of prose laid out by hand at a width wider than the terminal's.\n"
        "\n"
        "  list        sessions, newest first, with a longer explanation than fits\n"
        "              and its continuation laid out by hand\n"
        '  ctxrelay run --model anthropic:claude-sonnet-4-6 "task"  # a comment\n'
    )
    assert wrap_help(text, 40).splitlines() == [
        "A paragraph of prose laid out by hand at",
        "a width wider than the terminal's.",
        "",
        "  list        sessions, newest first,",
        "              with a longer explanation",
        "              than fits and its",
        "              continuation laid out by",
        "              hand",
        "  ctxrelay run --model",
        '      anthropic:claude-sonnet-4-6 "task"',
        "      # a comment",
    ]
    assert wrap_help(text, 120).splitlines()[2:] == [
        "  list        sessions, newest first, with a longer explanation than fits and its "
        "continuation laid out by hand",
        '  ctxrelay run --model anthropic:claude-sonnet-4-6 "task"  # a comment',
    ]
