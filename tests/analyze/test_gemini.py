"""``ctxrelay analyze``'s ``compact`` baseline for a Gemini CLI session file: the CLI's
own compression (at half of the 1,048,576-token window, keeping the newest 30% of the
conversation), not Claude Code's threshold."""

from __future__ import annotations

from pathlib import Path

from ctxrelay.analyze import analyze_paths, analyze_session
from ctxrelay.budget.bounds import GEMINI_COMPRESSION_KEEP, GEMINI_DEFAULT_COMPRESSION_THRESHOLD
from tests.gemini._session import SessionFile

WINDOW = 1_048_576
BASE = 10_000
STEP = 25_000


def session(tmp_path: Path, requests: int) -> Path:
    """A Gemini session whose context grows by :data:`STEP` tokens a request, every
    request reading its predecessor from the cache."""
    chat = SessionFile().user("port the parser")
    prev = 0
    for i in range(requests):
        tokens = BASE + i * STEP
        chat.gemini(tokens, cached=prev, output=200)
        prev = tokens
    return chat.write(tmp_path / "session-2026-12-03T06-02-4a274728.jsonl")


def test_compact_is_the_clis_compression_at_half_the_window(tmp_path: Path) -> None:
    report = analyze_session(session(tmp_path, 40))  # up to 985,000 tokens
    a = report.assumptions
    assert report.transcript.format == "gemini"
    assert a.limit == WINDOW
    assert a.compact_at == int(WINDOW * GEMINI_DEFAULT_COMPRESSION_THRESHOLD) == 524_288
    compact = next(r for r in report.replays if r.policy.kind == "compact")
    rows = compact.requests
    first = next(i for i, r in enumerate(rows) if r.kind == "summary")
    before, after = rows[first - 1], rows[first + 1]
    # The CLI compresses before the request after the one that reached half the window
    # (the prompt alone counts, not the output) ...
    assert before.tokens >= a.compact_at > rows[first - 2].tokens
    # ... and the fresh context is the base, the summary, and the newest 30% kept.
    kept = round(GEMINI_COMPRESSION_KEEP * (before.tokens - BASE))
    assert after.tokens == BASE + a.summary_tokens + kept + STEP
    assert compact.compactions == 2
    assert compact.peak_context_tokens < a.compact_at + STEP
    assert any("own compression at 50% of the window" in s for s in a.sentences())
    assert not any("Claude Code" in s for s in a.sentences())  # a Gemini session's own


def test_a_gemini_session_under_half_the_window_never_compresses(tmp_path: Path) -> None:
    # 20 requests reach 485,000 tokens: Claude Code's rule would compact near the
    # 1,048,576-token window's end, the CLI's at 524,288; neither is reached.
    report = analyze_session(session(tmp_path, 20))
    compact = next(r for r in report.replays if r.policy.kind == "compact")
    none = next(r for r in report.replays if r.policy.kind == "none")
    assert compact.compactions == 0
    assert [r.tokens for r in compact.requests] == [r.tokens for r in none.requests]


def test_gemini_sessions_on_workers_are_what_one_process_gives(tmp_path: Path) -> None:
    # Read and analysed in the process that takes each, sent back whole. The three files
    # are one made-up chat at three lengths, its responses' ids alike: the earliest (by
    # time, then path) holds them all, and the others, analysed alone on the workers,
    # are analysed again without them and left empty.
    for n, requests in enumerate((40, 20, 5)):
        (tmp_path / str(n)).mkdir()
        session(tmp_path / str(n), requests)
    serial = analyze_paths([tmp_path], workers=1)
    assert [(r.transcript.format, r.transcript.requests) for r in serial] == [("gemini", 40)]
    assert analyze_paths([tmp_path], workers=3) == serial
