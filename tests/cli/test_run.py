"""``ctxrelay run`` in-process: the JSON event stream, resume, caps and bad input."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.providers import resolve
from ctxrelay.store import open_store

run_cli = importlib.import_module("ctxrelay.cli.run")


def _script(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(steps))
    return path


STEPS = [
    {
        "text": "a",
        "tool_calls": [{"name": "write_file", "input": {"path": "a.txt", "content": "A"}}],
        "input_tokens": 1_000,
    },
    {
        "text": "b",
        "tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}],
        "input_tokens": 5_200,
    },
    {
        "text": "c",
        "tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}],
        "input_tokens": 6_100,
    },
    {"text": "d", "tool_calls": [{"name": "new_context", "input": {}}], "input_tokens": 6_300},
    {"text": "finished", "input_tokens": 800},
]


def _events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def _args(tmp_path: Path, *extra: str) -> list[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return [
        "--db", str(tmp_path / "s.db"), "--model", f"scripted:{_script(tmp_path, STEPS)}",
        "--limit", "10000", "--reserve", "2000", "--threshold", "60",
        "--workspace", str(ws), *extra,
    ]  # fmt: skip


def test_json_stream_follows_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli.main([*_args(tmp_path), "--json", "write and read a.txt"])
    out, err = capsys.readouterr()
    assert code == 0, err
    events = _events(out)
    dispatches = [e for e in events if e["event"] == "dispatch"]
    for e in dispatches:
        assert {"event", "window", "tokens", "decision", "stage"} <= set(e)
    assert [(e["window"], e["decision"], e["stage"]) for e in dispatches] == [
        (1, "continue", None),
        (1, "continue", None),
        (1, "warn", "warning"),
        (1, "warn", "handoff"),
        (2, "continue", None),
    ]
    assert events[-1] == {
        "event": "end",
        "session_id": events[0]["session_id"],
        "status": "done",
        "reason": None,
        "windows": 2,
        "turns": 5,
        "cost_usd": 0.0,
    }
    assert (tmp_path / "ws" / "a.txt").read_text() == "A"


def test_caps_pause_with_exit_3_and_resume_continues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli.main([*_args(tmp_path), "--json", "--max-turns", "2", "task"])
    out, err = capsys.readouterr()
    assert code == run_cli.EXIT_PAUSED
    assert "max-turns" in err
    end = _events(out)[-1]
    assert (end["status"], end["reason"], end["turns"]) == ("paused", "max_turns", 2)
    sid = end["session_id"]
    code = run_cli.main(
        ["--db", str(tmp_path / "s.db"), "--resume", sid, "--json", "--max-turns", "50"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    events = _events(out)
    assert events[0]["resumed"] is True
    assert events[-1]["status"] == "done"
    assert events[-1]["turns"] == 5


def test_human_output_is_a_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli.main([*_args(tmp_path), "task"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "warn (handoff)" in out
    assert "window 1 sealed (new_context)" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["task"], "--model is required"),
        (["--model", "scripted:/nonexistent/steps.json", "task"], "does not exist"),
        (["--model", "nope", "task"], "provider:model"),
        (["--resume", "no-such-session"], "no session"),
        ([], "give the task"),
    ],
)
def test_bad_input_is_one_sentence_and_nonzero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code = run_cli.main(["--db", str(tmp_path / "s.db"), *argv])
    _, err = capsys.readouterr()
    assert code != 0
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--resume" in out
    assert "Examples:" in out


@pytest.mark.parametrize(
    ("spec", "limit"),
    [
        ("openai:my-local-model", 8_192),  # unknown: the window comes from --limit
        ("openai:gpt-4.1", 8_000),  # known, but --limit shrinks its window
        ("anthropic:claude-sonnet-4-5", None),
    ],
)
def test_the_output_reserve_follows_the_model_registry(spec: str, limit: int | None) -> None:
    from ctxrelay.runtime.providers import split_spec
    from ctxrelay.runtime.registry import resolve_model

    argv = ["--model", spec, "task"] + ([] if limit is None else ["--limit", str(limit)])
    budget = run_cli._budget(run_cli._parser().parse_args(argv))
    expected = resolve_model(*split_spec(spec), limit=limit)
    assert (budget.limit, budget.output_reserve) == (
        expected.context_window,
        expected.output_reserve,
    )


def test_a_scripted_model_with_a_small_limit_reserves_by_the_same_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxrelay.runtime.registry import DEFAULT_RESERVE_CAP, default_reserve

    ws = tmp_path / "ws"
    ws.mkdir()
    argv = ["--db", str(tmp_path / "s.db"), "--model", f"scripted:{_script(tmp_path, STEPS)}",
            "--limit", "10000", "--workspace", str(ws), "--json", "go"]  # fmt: skip
    run_cli.main(argv)
    start = _events(capsys.readouterr().out)[0]
    assert start["usable_limit"] == 10_000 - default_reserve(DEFAULT_RESERVE_CAP, 10_000)


@pytest.mark.parametrize(
    ("base_url", "kept"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://user:hunter2@127.0.0.1:8000/v1", False),  # a password in the URL
        ("http://127.0.0.1:8000/v1?api-key=hunter2", False),  # a key in the query
    ],
)
def test_a_session_remembers_provider_options_but_no_secret(base_url: str, kept: bool) -> None:
    options = {"base_url": base_url, "timeout": 5.0, "api_key": "hunter2", "max_retries": 1}
    remembered = run_cli._rememberable(options)
    assert "api_key" not in remembered
    assert ("base_url" in remembered) is kept
    assert (remembered["timeout"], remembered["max_retries"]) == (5.0, 1)


def test_a_task_too_large_for_any_window_is_a_block_in_the_json_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli.main([*_args(tmp_path), "--json", "z" * 60_000])
    out, err = capsys.readouterr()
    assert code == 1
    assert "nothing was sent" in err
    events = _events(out)
    dispatches = [e for e in events if e["event"] == "dispatch"]
    assert [(d["decision"], d.get("reason")) for d in dispatches] == [("block", "too_large")]
    assert not any(e["event"] == "rollover" for e in events)
    assert events[-1]["event"] == "end"


def test_a_cost_cap_on_an_unpriced_model_warns_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli.main([*_args(tmp_path), "--json", "--max-cost", "2", "task"])
    out, err = capsys.readouterr()
    assert code == 0
    notices = [e for e in _events(out) if e["event"] == "notice"]
    assert [n["code"] for n in notices] == ["max_cost_unpriced"]
    assert err.count("\n") == 1
    assert err.startswith("ctxrelay: warning: --max-cost $2.0000 cannot be enforced")
    assert run_cli.main([*_args(tmp_path), "--max-cost", "2", "task"]) == 0
    assert capsys.readouterr().err == err  # the timeline says it on stderr too
    assert run_cli.main([*_args(tmp_path), "--json", "task"]) == 0
    assert capsys.readouterr().err == ""


def test_help_names_every_exit_status_and_the_budget_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli.main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    status = out.split("Exit status:")[1]
    for code in ("0 done", "3 paused", "130 stopped by Ctrl-C", "1 error", "2 bad usage"):
        assert code in status
    assert "--limit and --reserve default from the model registry" in out


def test_a_run_with_a_set_slider_does_not_load_the_analyzer(tmp_path: Path) -> None:
    # Only --threshold auto reads the store's sessions with the analyzer (its transcript
    # decoders and replay, ~60 ms to import): any other run starts without it.
    code = (
        "import sys\n"
        "from ctxrelay.cli import main\n"
        f"code = main(['run', *{_args(tmp_path)!r}, '--json', 'write and read a.txt'])\n"
        "sys.stderr.write(' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.split())
    assert "ctxrelay.cli.run" in loaded
    assert {
        m for m in loaded if m.startswith(("ctxrelay.analyze", "ctxrelay.cli.analyze"))
    } == set()


def test_resume_takes_a_unique_start_of_the_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli.main([*_args(tmp_path), "--json", "--max-turns", "2", "task"])
    sid = _events(capsys.readouterr().out)[-1]["session_id"]
    assert code == run_cli.EXIT_PAUSED
    code = run_cli.main(
        ["--db", str(tmp_path / "s.db"), "--resume", sid[:8], "--json", "--max-turns", "50"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    events = _events(out)
    assert (events[0]["session_id"], events[0]["resumed"]) == (sid, True)
    assert events[-1]["status"] == "done"


def test_resume_with_an_ambiguous_or_unknown_start_is_one_clear_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_store(tmp_path / "s.db")
    runtime = Runtime(store, resolve(f"scripted:{_script(tmp_path, STEPS)}"))
    config = SessionConfig(budget=Budget(10_000, 2_000), workspace=tmp_path)
    for sid in ("cafe0001", "cafe0002"):
        runtime.start("task", config, session_id=sid)
    store.close()
    db = ["--db", str(tmp_path / "s.db")]
    assert run_cli.main([*db, "--resume", "cafe"]) == 1
    err = capsys.readouterr().err
    assert "2 sessions start with 'cafe' (cafe0002, cafe0001)" in err  # newest first
    assert "give more of the id" in err
    assert len(err.strip().splitlines()) == 1
    assert run_cli.main([*db, "--resume", "beef"]) == 1
    err = capsys.readouterr().err
    assert "no session 'beef'" in err
    assert len(err.strip().splitlines()) == 1
