"""``ctxrelay demo --framework X``: the demo's session through the framework's own loop,
with the same JSON lines as the runtime's demo and the same rows in ``sessions show``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import demo, sessions
from ctxrelay.cli._demo_frameworks import FRAMEWORKS
from tests.integrations.harness import HARNESSES, installed


def _lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict[str, Any]]:
    assert demo.main(argv) == 0
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines()]


def _course(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the session did, without ids, timing and token estimates."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        kind = e["event"]
        if kind == "dispatch":
            out.append((kind, e["window"], e["decision"], e.get("stage"), e.get("reason")))
        elif kind == "tool":
            out.append((kind, e["window"], e["name"], e["is_error"]))
        elif kind == "rollover":
            out.append((kind, e["from_window"], e["to_window"], e["reason"]))
        elif kind in ("advisory", "response"):
            out.append((kind, e["window"]))
        elif kind == "end":
            out.append((kind, e["status"], e["windows"], e["turns"]))
        else:
            out.append((kind,))
    return out


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_demo_through_the_framework_matches_the_runtime(
    framework: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    harness = next(h for h in HARNESSES if h.name == framework)
    if not installed(harness):
        pytest.skip(f"{framework} is not installed (pip install 'ctxrelay[{framework}]')")
    runtime = _lines(capsys, ["--json", "--db", str(tmp_path / "rt.db")])
    db = str(tmp_path / "fw.db")
    framed = _lines(
        capsys, ["--json", "--framework", framework, "--db", db, "--workspace", str(tmp_path / "w")]
    )
    assert _course(framed) == _course(runtime)
    assert framed[-1]["event"] == "end"
    session_id = framed[-1]["session_id"]
    assert sessions.main(["show", session_id, "--db", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [w["seal_reason"] for w in shown["windows"]] == ["new_context", "forced", None]
    for window in shown["windows"][1:]:
        kinds = [r["kind"] for r in window["rows"]]
        assert kinds[:2] == ["lead_in", "user"]
    assert all(w["rows"][-1]["kind"] == "boundary" for w in shown["windows"][:2])


def test_the_human_demo_through_a_framework_states_the_cost_it_priced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The framework's events carry no price; the end line gives the priced session's cost,
    # the figure the savings call "with handoff", never a claimed $0.
    harness = next(h for h in HARNESSES if h.name == "langchain")
    if not installed(harness):
        pytest.skip("langchain is not installed (pip install 'ctxrelay[langchain]')")
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["--framework", "langchain", "--db", str(tmp_path / "fw.db")]
    assert demo.main([*argv, "--workspace", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    ended = re.search(r"model responses in 3 window\(s\); cost \$(\d+\.\d{4})", out)
    priced = re.search(r"with handoff +\$(\d+\.\d{4})", out)
    assert ended is not None, out
    assert priced is not None, out
    assert ended.group(1) == priced.group(1)
    assert float(ended.group(1)) > 0
