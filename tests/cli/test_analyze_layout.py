"""``ctxrelay analyze``'s text report at 80 columns: no figure, date or model name cut
(tables wrap, leave out optional columns, split their policies), every unreadable file
counted, one count of sessions, rows that share an id told apart, and each session's
assumptions shown for that session."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from rich.cells import cell_len

from ctxrelay.cli import main
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, user, write

if TYPE_CHECKING:
    from pathlib import Path

WIDTH = 80
_MONEY = re.compile(r"\$[\d,]+\.\d\d")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert main(["analyze", *args]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    out, _ = _run(capsys, *args, "--json")
    doc: dict[str, Any] = json.loads(out)
    return doc


def _fits(out: str) -> None:
    assert "…" not in out
    for line in out.splitlines():
        assert cell_len(line) <= WIDTH, line


def _money(value: float) -> str:
    return f"${value:,.2f}"


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def _session(path: Path, sid: str, model: str, reads: list[int], day: str = "10") -> Path:
    lines: list[dict[str, Any]] = [user("go")]
    for i, read in enumerate(reads):
        line = assistant(f"{path.stem}-{sid}-m{i}", read=read, created=900, output=300, model=model)
        line["sessionId"] = sid
        line["timestamp"] = f"2026-02-{day}T10:{i:02d}:00.000Z"
        line["requestId"] = f"req-{path.stem}-{sid}-{i}"
        lines.append(line)
    return write(path, lines)


POLICIES = "none,compact,handoff:60,handoff:45,handoff:30"


def _projects(tmp_path: Path) -> Path:
    """Two projects, one with a long folder name, sessions on long model ids and costs of
    four figures before the point."""
    root = tmp_path / "projects"
    long_ = root / "-home-someone-src-github.com-example-organisation-a-long-repository"
    short = root / "-home-u-app"
    for folder in (long_, short):
        folder.mkdir(parents=True)
    reads = [20_000 * k for k in range(1, 9)] * 40
    # each session starts at its own size: its own base, its own assumptions
    sessions = [
        (long_ / "a.jsonl", "aaaaaaaa", "claude-opus-4-1-20250805", [11_000, *reads], "10"),
        (long_ / "b.jsonl", "bbbbbbbb", "claude-sonnet-4-5-20250929", [12_000, *reads], "11"),
        (short / "c.jsonl", "cccccccc", "claude-haiku-4-5-20251001", reads[:30], "14"),
    ]
    for path, head, model, session_reads, day in sessions:
        sid = f"{head}-1111-4111-8111-111111111111"
        _session(path, sid, model, session_reads, day)
    return root


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--sweep", "30..90"],
        ["--by", "project"],
        ["--by", "day"],
        ["--by", "session"],
        ["--by", "week", "--top", "2"],
    ],
)
def test_no_figure_date_or_model_is_cut_at_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    root = _projects(tmp_path)
    doc = _json(capsys, str(root), "--policy", POLICIES, *extra)
    out, _ = _run(capsys, str(root), "--policy", POLICIES, *extra)
    _fits(out)
    words = set(out.split())
    rows = doc.get("report", {}).get("rows")
    if rows:
        for row in rows:
            if extra[1] != "project":  # a folder's name may be folded; a date never is
                assert row["key"][:10] in words or row["key"][:8] in words, row["key"]
            assert _money(row["cost_usd"]) in words
            for policy in row["policies"]:
                if policy["policy"] != "none":
                    assert _money(policy["cost_usd"]) in words, policy
    else:
        for s in doc["sessions"]:
            assert s["model"] in words
            assert _money(s["cost_usd"]) in words
            for p in s["whatif"]["policies"]:
                assert _money(p["cost_usd"]) in words, p
    assert all(len(m) > 3 for m in _MONEY.findall(out))


def test_the_real_corpus_at_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    roots = [
        str(corpus_path("corpora/claude-code-transcripts")),
        str(corpus_path("corpora/claude-code-capture/projects")),
    ]
    for extra in (["--sweep", "30..90"], ["--by", "project"], ["--by", "day"]):
        out, _ = _run(capsys, *roots, "--policy", "none,compact,handoff:60,handoff:45", *extra)
        _fits(out)


def test_each_session_has_its_own_assumptions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _projects(tmp_path)
    doc = _json(capsys, str(root))
    out, _ = _run(capsys, str(root))
    flat = " ".join(out.split())
    bases = {s["name"][:8]: s["whatif"]["assumptions"]["base_tokens"] for s in doc["sessions"]}
    for name, base in list(bases.items())[:2]:  # the first two spelled out, each its own
        assert f"{name}: A fresh chain starts at the session's first request ({base:,}" in flat
    assert len(set(bases.values())) == 3
    assert "Measured per session" in out


def test_unreadable_files_are_listed_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    sid = "dddddddd-4444-4444-8444-444444444444"
    _session(root / "good.jsonl", sid, "claude-opus-4-6", [30_000, 40_000])
    (root / "empty.jsonl").write_bytes(b"")
    (root / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 100)
    (root / "hooks.jsonl").write_bytes(b'{"session_id": "x", "hook_event_name": "Stop"}\n')
    cut = _session(
        root / "cut.jsonl", "eeeeeeee-5555-4555-8555-555555555555", "claude-opus-4-6", [9]
    )
    cut_line = b'{"type":"assistant","message":{"usage":{"output_tokens":'
    cut.write_bytes(cut.read_bytes() + cut_line)
    doc = _json(capsys, str(tmp_path / "projects"))
    reasons = {e["path"].rsplit("/", 1)[-1]: e for e in doc["skipped"]}
    assert set(reasons) == {"empty.jsonl", "binary.jsonl", "hooks.jsonl", "cut.jsonl"}
    assert reasons["empty.jsonl"]["reason"] == "empty"
    assert "binary" in reasons["binary.jsonl"]["reason"]
    assert "not a Claude Code transcript, a Codex rollout" in reasons["hooks.jsonl"]["reason"]
    assert reasons["cut.jsonl"]["lines"] == 1
    assert doc["totals"]["sessions"] == 2
    out, err = _run(capsys, str(tmp_path / "projects"))
    assert "Skipped: 3 files not read and 1 line of the files read" in " ".join(out.split())
    assert err.count("ctxrelay: warning: skipped") == 4
    # Nothing readable: not "No transcripts found", which is for a folder with none.
    for name in ("good.jsonl", "cut.jsonl"):
        (root / name).unlink()
    out, _ = _run(capsys, str(tmp_path / "projects"))
    assert "No session could be read." in out
    assert "Skipped: 3 files not read" in out
    for name in ("empty.jsonl", "binary.jsonl", "hooks.jsonl"):
        (root / name).unlink()
    out, _ = _run(capsys, str(tmp_path / "projects"))
    assert out.startswith("No transcripts found.")


def test_rows_that_share_an_id_are_told_apart_and_counted_once_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old Claude Code wrote a subagent to <project>/agent-<id>.jsonl with its parent's
    # session id: three files, three rows, three names, one count everywhere.
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    sid = "ffffffff-6666-4666-8666-666666666666"
    _session(root / f"{sid}.jsonl", sid, "claude-opus-4-6", [30_000, 50_000])
    _session(root / "agent-1a2b3c4d.jsonl", sid, "claude-sonnet-4-5", [10_000], "11")
    _session(root / "agent-5e6f7a8b.jsonl", sid, "claude-sonnet-4-5", [12_000], "12")
    doc = _json(capsys, str(root), "--by", "session")
    names = [s["name"] for s in doc["sessions"]]
    assert sorted(names) == sorted([sid, "agent-1a2b3c4d", "agent-5e6f7a8b"])
    assert [s["session_id"] for s in doc["sessions"]] == [sid] * 3
    assert doc["totals"]["sessions"] == 3
    rows = doc["report"]["rows"]
    assert len(rows) == 3
    assert sum(r["sessions"] for r in rows) == 3
    out, _ = _run(capsys, str(root), "--by", "session")
    total = next(line for line in out.splitlines() if "total" in line)
    assert total.split("│")[2].strip() == "3"
    out, _ = _run(capsys, str(root), "--sweep", "40..60:10")
    for name in ("ffffffff", "agent-1a2b3c4d", "agent-5e6f7a8b"):
        assert name in out
    assert "3 sessions," in out
