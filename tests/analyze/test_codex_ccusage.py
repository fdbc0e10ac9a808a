"""``ctxrelay analyze`` against ccusage on the same Codex rollouts, file by file: tokens
equal, costs equal, and the one difference ``docs/analyze.md`` explains (ccusage leaves
out a subagent's rollout whose token counts all come within about a second).

ccusage is found as :mod:`tests.analyze._ccusage` says. ``CTXRELAY_CODEX_ROLLOUTS`` names
a Codex home (or its ``sessions``) of real rollouts to compare as well; the rollouts of
the real CLI's own end-to-end runs are compared in ``tests/e2e/test_codex_handoff.py``."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.analyze._ccusage import compare
from tests.transcripts._codex_lines import CCUSAGE_CASES, THREAD, Rollout, write_ccusage_cases

pytestmark = pytest.mark.e2e


def _write(home: Path, rollout: Rollout, name: str) -> Path:
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True, exist_ok=True)
    return rollout.write(day / f"rollout-2026-12-01T19-00-00-{name}.jsonl")


def test_generated_rollouts_agree(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    main = Rollout().turn("gpt-5.5").response("resp_1", 25_000, 24_500)
    main.response("resp_2", 30_000, 29_500, output=300, reasoning=120)
    main.compaction().turn("gpt-5.4", "turn-2").response("resp_3", 9_000, 4_000)
    main.turn("gpt-5.3-codex", "turn-3").response("resp_4", 12_000, 11_000, output=900)
    _write(home, main, THREAD)
    unknown = Rollout("01a2331b-a245-7a61-8072-a8d230c1125c").turn("probe-unknown-model")
    _write(home, unknown.response("resp_1", 15_000, 14_500), unknown.thread)
    # an older rollout, with token_count events and no usage records
    old = Rollout("01a2331b-9cb6-7b73-a7d2-3929955daed0").turn("gpt-5.4")
    old.response("resp_1", 40_000, 30_000).response("resp_2", 45_000, 44_000)
    old.lines = [line for line in old.lines if line["type"] != "token_usage_record"]
    _write(home, old, old.thread)
    theirs, only_ours = compare(home)
    assert len(theirs) == 3
    assert only_ours == []


def test_ccusage_loader_cases_agree(tmp_path: Path) -> None:
    # The shapes of ccusage's own Codex loader tests: no session_meta, no ordinal, a
    # total with no last, no model at all, a 2 MB compacted first line, gpt-5-codex.
    home = tmp_path / "codex"
    write_ccusage_cases(home / "sessions")
    theirs, only_ours = compare(home)
    assert set(theirs) == set(CCUSAGE_CASES)
    assert only_ours == []


def test_ccusage_leaves_out_a_subagent_whose_counts_come_in_one_burst(tmp_path: Path) -> None:
    # The subagent rollout ccusage left out on the real CLI: two responses whose
    # token_count lines were written 93 ms apart. Spread a second apart, it counts them.
    home = tmp_path / "codex"
    child = "01a23321-3468-7a32-a69f-4a86e8c6782d"
    burst = Rollout(child, parent=THREAD).turn().response("resp_3", 25_000, 24_500)
    burst.response("resp_4", 30_000, 29_500)
    counts = [line for line in burst.lines if line["payload"].get("type") == "token_count"]
    counts[0]["timestamp"] = "2026-12-01T19:42:25.559Z"
    counts[1]["timestamp"] = "2026-12-01T19:42:25.652Z"
    _write(home, burst, child)
    _, only_ours = compare(home)
    assert only_ours == [f"rollout-2026-12-01T19-00-00-{child}"]
    counts[1]["timestamp"] = "2026-12-01T19:42:27.000Z"
    _write(home, burst, child)
    assert compare(home)[1] == []


def test_real_rollouts_agree(tmp_path: Path) -> None:
    named = os.environ.get("CTXRELAY_CODEX_ROLLOUTS")
    if not named:
        pytest.skip("no real Codex rollouts: set CTXRELAY_CODEX_ROLLOUTS to a Codex home")
    source = Path(named)
    sessions = source if source.name == "sessions" else source / "sessions"
    home = tmp_path / "codex"
    shutil.copytree(sessions, home / "sessions")  # ccusage and ctxrelay read the same copy
    theirs, only_ours = compare(home)
    assert theirs
    for name in only_ours:  # each left out by ccusage is a subagent's, or sent nothing
        head = (home / "sessions").rglob(f"{name}.jsonl")
        meta = json.loads(next(head).read_bytes().split(b"\n", 1)[0])["payload"]
        assert isinstance(meta.get("source"), dict), name


def test_older_shapes_of_a_rollout_agree(tmp_path: Path) -> None:
    # One rollout in the shapes older Codex builds wrote, each derived from the current
    # shape: no ordinal and no session_meta, token counts with a total only or a last
    # only, no model anywhere, the cached input named cache_read_input_tokens. Every one
    # is read to ccusage's tokens and cost.
    home = tmp_path / "codex"
    base = Rollout().turn("gpt-5.4").response("resp_1", 40_000, 30_000)
    base.response("resp_2", 45_000, 44_000, output=500).compaction()
    base.turn("gpt-5.4", "turn-2").response("resp_3", 12_000, 2_000)

    def variant(name: str, keep: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        rollout = Rollout(base.thread)
        rollout.lines = [line for line in map(keep, copy.deepcopy(base.lines)) if line]
        _write(home, rollout, name)

    def old(line: dict[str, Any]) -> dict[str, Any] | None:
        line.pop("ordinal")
        return None if line["type"] in ("session_meta", "token_usage_record") else line

    def info_without(key: str) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
        def keep(line: dict[str, Any]) -> dict[str, Any] | None:
            line = old(line) or {}
            line.get("payload", {}).get("info", {}).pop(key, None)
            return line or None

        return keep

    def no_model(line: dict[str, Any]) -> dict[str, Any] | None:
        return None if line["type"] == "turn_context" else old(line)

    def read_named_so(line: dict[str, Any]) -> dict[str, Any] | None:
        kept = old(line)
        for usage in (kept or {}).get("payload", {}).get("info", {}).values():
            if isinstance(usage, dict) and "cached_input_tokens" in usage:
                usage["cache_read_input_tokens"] = usage.pop("cached_input_tokens")
        return kept

    names = ("no-meta", "total-only", "last-only", "no-model", "cache-read")
    variant(names[0], old)
    variant(names[1], info_without("last_token_usage"))
    variant(names[2], info_without("total_token_usage"))
    variant(names[3], no_model)
    variant(names[4], read_named_so)
    theirs, only_ours = compare(home)
    assert set(theirs) == {f"rollout-2026-12-01T19-00-00-{n}" for n in names}
    assert only_ours == []
