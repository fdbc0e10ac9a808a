"""The guard's byte benchmark (``bench/guard_bytes.py``) as a test: on every host, with
the guard the model never receives more on any case of the corpus, and less in total."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "guard_bytes.py"


def test_with_the_guard_never_more_and_less_in_total(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    spec = importlib.util.spec_from_file_location("guard_bytes", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    code = bench.main(["--json"])
    report = json.loads(capsys.readouterr().out)
    hosts = {k: v for k, v in report.items() if k != "meets_target"}
    # Claude Code at two caps, Codex for two models, the Gemini CLI, OpenCode
    assert len(hosts) == 6
    for name, data in hosts.items():
        assert data["cases_with_more"] == [], name
        assert data["total_with"] < data["total_without"], name
        cases = {c["case"]: c for c in data["cases"]}
        repeat = cases.get("Read notes.md again") or cases["cat README.md again"]
        assert repeat["with"] < repeat["without"], name  # a repeat is denied
    ranged = {c["case"]: c for c in hosts["Gemini CLI"]["cases"]}["a range inside it again"]
    assert ranged["with"] < ranged["without"]  # a range already read is a repeat
    assert report["meets_target"] is True
    assert code == 0
