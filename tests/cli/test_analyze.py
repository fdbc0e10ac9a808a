"""``ctxrelay analyze`` in-process: JSON only with --json, tables, plot, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli import main
from tests.conftest import corpus_path

SPOTTER = "corpora/claude-code-transcripts/spotter"


def test_json_prints_only_json(capsys: pytest.CaptureFixture[str]) -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    assert main(["analyze", str(root), "--json", "--sweep", "30..90:10"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert len(doc["sessions"]) == 6
    assert err == ""
    assert doc["totals"]["sweep"]["recommended_threshold"] in (30, 40, 50, 60, 70, 80, 90)


def test_tables_sweep_and_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_path(f"{SPOTTER}/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    assert main(["analyze", str(path), "--sweep", "40..60:10", "--policy", "none,handoff:50"]) == 0
    out = capsys.readouterr().out
    assert "Sessions as recorded" in out
    assert "handoff:50" in out
    assert "Recommended slider" in out
    assert "Assumptions of the replay" in out
    assert "cold cache" in out


def test_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    path = corpus_path(f"{SPOTTER}/4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    png = tmp_path / "[bold]" / "curves.png"  # a path is text, not rich markup
    png.parent.mkdir()
    assert main(["analyze", str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = " ".join(capsys.readouterr().out.split())
    assert f"Plot written to {png}" in out


def test_prices_file_changes_the_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus_path(f"{SPOTTER}/short.jsonl")
    prices = tmp_path / "p.toml"
    prices.write_text('[models."claude-opus"]\ninput = 0\noutput = 0\n')
    assert main(["analyze", str(path), "--json", "--prices", str(prices)]) == 0
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["cost_usd"] == 0.0


def test_default_path_is_the_claude_projects_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = corpus_path(f"{SPOTTER}/tool_heavy.jsonl")
    project = tmp_path / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    (project / "s.jsonl").write_bytes(source.read_bytes())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "no-opencode.db"))
    assert main(["analyze", "--json"]) == 0
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["requests"] == 4
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing"))
    assert main(["analyze"]) == 1
    assert "no Claude Code projects directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "sometimes"], "unknown policy"),
        (["--sweep", "90..30"], "sweep end"),
        (["--plot", "out.svg"], "ending in .png"),
        (["--prices", "/nonexistent/prices.json"], "cannot read the price file"),
        (["--limit", "0"], "must be above 0"),
        # the report's options
        (["--since", "yesterday-ish"], "a date must look like"),
        (["--since", "2026-03-01", "--until", "2026-02-01"], "is before --since"),
        (["--by", "year"], "invalid choice"),
        (["--top", "0"], "must be above 0"),
    ],
)
def test_bad_input_is_one_sentence(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = corpus_path(f"{SPOTTER}/short.jsonl")
    code = main(["analyze", str(path), *args])
    out, err = capsys.readouterr()
    assert code != 0
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(tmp_path / "gone.jsonl")]) == 1
    assert "no transcript or directory" in capsys.readouterr().err


def test_json_errors_are_the_same_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing on stdout, where a machine expects a document: one sentence on stderr.
    assert main(["analyze", str(tmp_path / "gone.jsonl"), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == f"ctxrelay: error: no transcript or directory at '{tmp_path}/gone.jsonl'"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nothing"))
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "nothing.db"))
    assert main(["analyze", "--json"]) == 1
    assert "no Claude Code projects directory" in capsys.readouterr().err


def test_json_reads_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxrelay.analyze import _parallel
    from ctxrelay.cli.analyze import _run

    started: list[list[str]] = []
    real = _parallel.start_reading

    def counted(paths: list[str]) -> _parallel.Reading:
        started.append(list(paths))
        return real(paths)

    monkeypatch.setattr(_run, "start_reading", counted)
    root = str(corpus_path(SPOTTER))
    assert main(["analyze", root, "--json"]) == 0
    assert started == [[root]]
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 6


def test_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Examples:" in out
    assert "--sweep" in out


def test_a_file_that_vanishes_mid_run_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import ctxrelay.analyze
    import ctxrelay.analyze._parallel

    good = corpus_path(f"{SPOTTER}/tool_heavy.jsonl")
    (tmp_path / "good.jsonl").write_bytes(good.read_bytes())
    pipe = str(tmp_path / "pipe.jsonl")
    os.mkfifo(pipe)  # not a regular file: listed, skipped with a warning, never hangs
    found = ctxrelay.analyze.discover([tmp_path])
    assert found == [str(tmp_path / "good.jsonl"), pipe]
    # A session deleted between the directory listing and its read (Claude Code running).
    gone = str(tmp_path / "gone.jsonl")
    monkeypatch.setattr(ctxrelay.analyze._parallel, "discover", lambda paths: [gone, *found])
    assert main(["analyze", str(tmp_path), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert [s["requests"] for s in doc["sessions"]] == [4]
    assert doc["skipped"] == [
        {"path": gone, "reason": "no such file"},
        {"path": pipe, "reason": "not a regular file (a FIFO)"},
    ]
    assert err.splitlines() == [
        f"ctxrelay: warning: skipped {gone}: no such file",
        f"ctxrelay: warning: skipped {pipe}: not a regular file (a FIFO)",
    ]
    monkeypatch.undo()
    assert main(["analyze", str(tmp_path / "pipe.jsonl")]) == 1
    assert "not a regular file" in capsys.readouterr().err


def test_plot_without_matplotlib_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    path = corpus_path(f"{SPOTTER}/short.jsonl")
    png = tmp_path / "x.png"
    assert main(["analyze", str(path), "--plot", str(png)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "ctxrelay[plot]" in err
    assert not png.exists()


def test_files_that_never_sent_a_request_are_not_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capture = corpus_path("corpora/claude-code-capture")  # holds hook-payloads.jsonl too
    assert main(["analyze", str(capture), "--json"]) == 0
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    assert [s["requests"] for s in sessions] == [4]
    # hook-payloads.jsonl is no session file: in a folder it is skipped with its reason,
    # named it is refused with it
    named = capture / "hook-payloads.jsonl"
    assert main(["analyze", str(named), "--json"]) == 1
    assert "not a Claude Code transcript, a Codex rollout" in capsys.readouterr().err


def test_by_month_with_a_policy_shows_recorded_and_replayed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    assert main(["analyze", str(root), "--by", "month", "--policy", "handoff:45"]) == 0
    out = capsys.readouterr().out
    assert "Cost by month" in out
    assert "2026-02" in out
    assert "handoff:45" in out
    assert "recorded" in out


def test_report_in_json_reconciles_with_the_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    args = ["analyze", str(root), "--json", "--by", "day", "--since", "2026-02-01"]
    assert main([*args, "--sweep", "40..60:10"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = doc["report"]
    assert report["by"] == "day"
    assert [r["key"] for r in report["rows"]] == sorted(r["key"] for r in report["rows"])
    assert sum(r["cost_usd"] for r in report["rows"]) == pytest.approx(
        doc["totals"]["cost_usd"], abs=1e-4
    )
    for row in report["rows"]:
        assert [p["policy"] for p in row["policies"]] == ["none", "compact", "handoff:60"]
        none = row["policies"][0]
        assert none["saved_usd"] == pytest.approx(0, abs=1e-6)
    recommendation = doc["totals"]["recommendation"]
    assert recommendation["threshold"] in (40, 50, 60)
    assert (recommendation["sessions"], recommendation["not_affected"]) == (3, 3)
    # The top 2 sessions, most expensive first; the range leaves out every session.
    assert main(["analyze", str(root), "--json", "--top", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)["report"]["rows"]
    assert len(rows) == 2
    assert rows[0]["cost_usd"] >= rows[1]["cost_usd"]
    assert main(["analyze", str(root), "--json", "--until", "2020-01-01"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["sessions"], doc["report"]["rows"]) == ([], [])


def test_plot_by_day_adds_the_cumulative_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    root = corpus_path("corpora/claude-code-transcripts")
    plain, daily = tmp_path / "plain.png", tmp_path / "daily.png"
    assert main(["analyze", str(root), "--plot", str(plain)]) == 0
    assert main(["analyze", str(root), "--by", "day", "--plot", str(daily)]) == 0
    capsys.readouterr()

    def height(png: Path) -> int:
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        return int.from_bytes(data[20:24], "big")  # IHDR: width, then height

    # One more panel: the cumulative cost by day above the sessions' curves.
    assert height(daily) > height(plain)


def _fresh_python(code: str, cwd: Path) -> tuple[int, str, str]:
    """``code`` run by a fresh interpreter in ``cwd``: its exit code, stdout and stderr."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=cwd
    )
    return done.returncode, done.stdout, done.stderr


def test_json_imports_no_tables_sdks_or_store_drivers(tmp_path: Path) -> None:
    """``ctxrelay analyze PATH --json`` in a fresh interpreter: the JSON document, without
    the table library, the plot library, the provider SDKs or the store and its drivers,
    none of which a machine's read of transcripts needs, nor the Claude Code host (only
    --apply writes its config). (The plot's own module is light: it imports matplotlib
    only to draw.)"""
    root = corpus_path("corpora/claude-code-transcripts")
    code, out, err = _fresh_python(
        "import sys\n"
        "from ctxrelay.cli import main\n"
        f"code = main(['analyze', {str(root)!r}, '--json'])\n"
        "sys.stderr.write(' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n",
        tmp_path,
    )
    assert code == 0, err
    assert len(json.loads(out)["sessions"]) == 6
    loaded = set(err.split())
    heavy = {"rich", "matplotlib", "anthropic", "openai", "psycopg", "sqlite3"}
    assert {m for m in loaded if m.split(".")[0] in heavy} == set()
    assert {m for m in loaded if m.startswith(("ctxrelay.store", "ctxrelay.claude"))} == set()


def _entry_point(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """``ctxrelay ARGV`` as the console script runs it (``main()`` with no argv), with an
    ``atexit`` handler that writes "teardown" when the interpreter's teardown runs."""
    return _fresh_python(
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('teardown'))\n"
        f"sys.argv = ['ctxrelay', *{argv!r}]\n"
        "from ctxrelay.cli import main\n"
        "sys.exit(main())\n",
        cwd,
    )


def test_the_console_script_exits_as_usual_with_its_code_and_all_its_output(
    tmp_path: Path,
) -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    code, out, err = _entry_point(["analyze", str(root), "--json"], tmp_path)
    assert (code, err) == (0, "teardown")  # the whole document, then the usual exit
    assert len(json.loads(out)["sessions"]) == 6
    code, out, err = _entry_point(["analyze", str(tmp_path / "nothing"), "--json"], tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith("ctxrelay: error: no transcript or directory at")
    assert err.endswith("teardown")


def test_each_policy_shows_its_range_and_the_sweep_its_region(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    argv = ["analyze", str(root), "--sweep", "30..90:10", "--policy", "none,handoff:40"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for s in doc["sessions"]:
        none, handoff = s["whatif"]["policies"]
        assert none["range_usd"] == [none["cost_usd"], none["cost_usd"]]
        low, high = handoff["range_usd"]
        assert low == handoff["cost_usd"] <= high
    total = next(p for p in doc["totals"]["policies"] if p["policy"] == "handoff:40")
    assert total["range_usd"][0] < total["range_usd"][1]  # some long session re-reads
    found = doc["totals"]["recommendation"]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    low, high = total["range_usd"]
    assert f"${low:,.2f}–{high:,.2f}" in out
    region = "–".join(f"{t:g}" for t in found["region"])
    assert f"the middle of the flat region {region}%" in out
    assert "3 sessions reached no slider: not affected" in out
    assert "55604662 not affected" in out
