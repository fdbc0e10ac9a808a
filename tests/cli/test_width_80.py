"""Every runtime command's output for people at 80 columns (``COLUMNS=80``): nothing
wider, nothing cut that a person needs (a limit, an id, a path). The exceptions are what
a person copies, printed whole on a line of its own for the terminal to wrap, as the
demo and ``sessions list`` print them: a command (after a line ending "with:") and a
path (one word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli import main

WIDTH = 80


def _over(out: str) -> list[str]:
    lines = out.splitlines()
    return [
        line
        for i, line in enumerate(lines)
        if len(line) > WIDTH
        and not (i and lines[i - 1].endswith("with:"))
        and len(line.split()) > 1
    ]


def test_the_runtime_commands_fit_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    # Long names where they show: the store's path, the model's (a script's path).
    deep = tmp_path / ("a-rather-long-directory-name-" * 3)
    deep.mkdir()
    db = str(deep / "sessions.db")
    steps = deep / "steps.json"
    steps.write_text(
        json.dumps(
            [
                {
                    "text": "reading " + "the notes " * 20,
                    "tool_calls": [{"name": "read_file", "input": {"path": "notes.md"}}],
                    "input_tokens": 1_150_000,
                },
                {"text": "done", "input_tokens": 1_160_000},
            ]
        )
    )
    (deep / "notes.md").write_text("the plan: " + "step " * 100)
    outputs: dict[str, str] = {}

    def run(*argv: str) -> str:
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert code == 0, (argv, out, err)
        outputs[" ".join(argv[:2])] = out + err
        return out

    run(
        "run", "--db", db, "--model", f"scripted:{steps}", "--limit", "1400000",
        "--reserve", "32000", "--threshold", "90", "--workspace", str(deep),
        "read " + "the notes " * 20,
    )  # fmt: skip
    header = " ".join(outputs["run --db"].splitlines()[:6])
    assert "usable limit 1,368,000" in header
    run("demo", "--db", db, "--workspace", str(tmp_path / "demo"))
    listed = run("sessions", "list", "--db", db)
    sid = listed.splitlines()[-1].split("sessions show ", 1)[1].split()[0]
    run("sessions", "show", sid, "--db", db)
    run("sessions", "show", sid, "--db", db, "--verbose")
    run("sessions", "history", sid, "--db", db)
    run("sessions", "history", sid, "--db", db, "--window", "1")
    run("sessions", "search", sid, "window", "--db", db)
    run("sessions", "reset", sid, "--db", db)
    run("policy", "plan", "--limit", "200000", "--reserve", "32000", "--threshold", "60")
    run(
        "policy",
        "simulate",
        "--limit",
        "200000",
        "--reserve",
        "32000",
        "--threshold",
        "60",
        "--tokens",
        "90000,130000",
    )
    over = {name: _over(out) for name, out in outputs.items() if _over(out)}
    assert not over, over
