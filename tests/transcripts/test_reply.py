"""``reply_written``: the Stop hook's wait for the turn's last reply, by its start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.transcripts._hot import _reply_needle, reply_written


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ("Part one of the widget is done.\nMore.", b"Part one of the widget is done."),
        ("  The quick brown fox jumps over the lazy dog and keeps running far", None),
        ('He said "hello there" to me', None),  # cut at the quote: too short
        ("Résumé of the work", None),  # cut before the first non-ASCII character
        ("short", None),
    ],
)
def test_the_needle_is_the_start_json_leaves_as_it_is(reply: str, needle: bytes | None) -> None:
    found = _reply_needle(reply)
    if reply.startswith("  The quick"):
        assert found == b"The quick brown fox jumps over the lazy dog and keeps running far"[:60]
    else:
        assert found == needle


def test_a_written_reply_is_found_and_a_missing_one_is_not(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "All done here now."}]},
    }
    path.write_text(json.dumps(line, separators=(",", ":")) + "\n")
    assert reply_written(str(path), "All done here now.") is True
    assert reply_written(str(path), "Something else entirely.", wait_s=0.05) is False
    assert (
        reply_written(str(tmp_path / "missing.jsonl"), "All done here now.", wait_s=0.05) is False
    )
    assert reply_written(str(path), "ok") is True  # nothing to look for: no wait
