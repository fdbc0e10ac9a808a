"""No human output of ``ctxrelay`` prints a Python repr.

Every command's ``--help`` (found by walking the commands each help lists and the
subparsers argparse builds) and the human output of every command that can run here
(stdout and stderr) are checked for dict, list, None/True/False and object reprs.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.cli import COMMANDS, main

REPR = re.compile(
    r"\{'[^'\n]*': "  # {'key': ...}
    r"|\['[^'\n]*'[,\]]"  # ['a', ...]
    r"|[:=(\[,] ?(?:None|True|False)\b(?! *[A-Za-z])"  # key: None, (True, x=False
    r"|\b(?:None|True|False)[,)\]}]"
    r"|<[\w.]+ object at 0x"
    r"|\b[A-Z]\w*\((?:\w+=|'|\))"  # Budget(limit=, PosixPath('...'), Thing()
    r"|\b(?:dict_keys|dict_values|mappingproxy|datetime\.datetime)\("
)


def reprs(text: str) -> list[str]:
    return [text[max(m.start() - 30, 0) : m.end() + 30] for m in REPR.finditer(text)]


def test_the_pattern_finds_reprs_and_spares_prose() -> None:
    for bad in (
        "metadata {'context_tokens': 6200}",
        "tools ['read_file', 'write_file']",
        "hook_command    None,",
        "ok: False",
        "config Budget(limit=200000, output_reserve=32000)",
        "at PosixPath('/tmp/x')",
        "<ctxrelay.store.sqlite.SQLiteStore object at 0x7f>",
    ):
        assert reprs(bad), bad
    for fine in (
        "None of the windows was sealed.",
        "--policy none,compact,handoff:50",
        '{"session_id", "windows": [{"index", "id"}]}',
        "jq '.windows[].seal_reason'",
        "matches for 'pytest -k', newest first",
        "ok              no",
    ):
        assert not reprs(fine), fine


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def _help_tree(
    prefix: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[list[str], str]]:
    """``prefix --help`` and, recursively, the help of every subcommand it names."""
    built: list[str] = []
    original = argparse._SubParsersAction.add_parser

    def recording(self: argparse._SubParsersAction, name: str, **kw: object) -> object:  # type: ignore[type-arg]
        built.append(name)
        return original(self, name, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", recording)
    code, text = _run([*prefix, "--help"], capsys)
    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", original)
    assert code == 0, (prefix, text)
    yield prefix, text
    listed = []
    section = False
    for line in text.splitlines():
        if re.fullmatch(r"(sub)?commands:", line.strip()):
            section = True
        elif section and (m := re.match(r"  ([a-z][a-z-]*)  ", line)):
            listed.append(m.group(1))
        elif section and not line.strip():
            section = False
    for name in dict.fromkeys([*listed, *built]):
        if len(prefix) < 3:
            yield from _help_tree([*prefix, name], capsys, monkeypatch)


def test_every_help_is_free_of_reprs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, str] = {}
    for argv, text in _help_tree([], capsys, monkeypatch):
        seen[" ".join(argv)] = text
    for name in COMMANDS:
        assert name in seen, f"ctxrelay {name} --help was not reached"
    assert {"sessions show", "policy simulate", "claude install"} <= set(seen)
    found = {argv: reprs(text) for argv, text in seen.items() if reprs(text)}
    assert not found, found


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "80")
    (tmp_path / "project").mkdir()
    steps = tmp_path / "steps.json"
    steps.write_text(
        json.dumps(
            [
                {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"path": "a"}}]},
                {"text": "Done."},
            ]
        )
    )
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a").write_text("hello\n")
    return {
        "db": str(tmp_path / "demo.db"),
        "run_db": str(tmp_path / "run.db"),
        "demo_ws": str(tmp_path / "demo"),
        "ws": str(tmp_path / "ws"),
        "steps": str(steps),
        "project": str(tmp_path / "project"),
    }


def test_every_command_that_runs_here_prints_no_repr(
    places: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, project = places["db"], places["project"]
    outputs: dict[str, str] = {}

    def run(*argv: str, ok: tuple[int, ...] = (0,), stdin: str | None = None) -> str:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code, text = _run(list(argv), capsys)
        assert code in ok, (argv, code, text)
        outputs[" ".join(argv)] = text
        return text

    run(ok=(2,))
    run("--version")
    run("demo", "--db", db, "--workspace", places["demo_ws"])
    sid = json.loads(run("sessions", "list", "--db", db, "--json"))["sessions"][0]["session_id"]
    budget = ["--limit", "200000", "--reserve", "32000", "--threshold", "60"]
    run("policy", "plan", *budget)
    run("policy", "simulate", *budget, "--tokens", "90000,100000,121000,168001,50000")
    run(
        "run",
        "--model",
        f"scripted:{places['steps']}",
        "--db",
        places["run_db"],
        "--workspace",
        places["ws"],
        "--yes",
        "read a",
    )
    run("sessions", "list", "--db", db)
    run("sessions", "show", sid[:8], "--db", db)
    # The demo's rows hold Python source (the files it edits): --verbose shows them whole,
    # so it is checked on the scripted run, whose rows do not.
    run_sid = json.loads(run("sessions", "list", "--db", places["run_db"], "--json"))
    run("sessions", "show", run_sid["sessions"][0]["session_id"], "--db", places["run_db"], "-v")
    run("sessions", "history", sid, "--db", db)
    run("sessions", "history", sid, "--db", db, "--search", "Decisions")
    run("sessions", "history", sid, "--db", db, "--window", "1", "--limit", "5")
    run("sessions", "reset", sid, "--db", db)
    run("sessions", "show", "no-such-session", "--db", db, ok=(1,))
    run("analyze", "--db", db)
    run("analyze", "--db", db, "--policy", "none,handoff:50")
    run("claude", "install", "--project-dir", project)
    run("claude", "doctor", "--project-dir", project, ok=(0, 1))
    run("claude", "config", "--project-dir", project)
    run("claude", "handoff", "list", "--project-dir", project)
    statusline = {
        "session_id": "s1",
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet"},
        "workspace": {"current_dir": project},
        "context_window": {"total_input_tokens": 50_000, "context_window_size": 200_000},
    }
    run("claude", "statusline", stdin=json.dumps(statusline))
    run("claude", "uninstall", "--project-dir", project)
    found = {argv: reprs(text) for argv, text in outputs.items() if reprs(text)}
    assert not found, "\n".join(f"{k}: {v}" for k, v in found.items())
    assert "handoff saved" in outputs[f"demo --db {db} --workspace {places['demo_ws']}"]
