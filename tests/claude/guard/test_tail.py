"""``tail -N FILE`` translates to the exact Read range: the guard counts the file's lines
(any file up to ``COUNT_MAX_BYTES``), never "the line count is unknown" for a file it
can read. The deny reason starts its page there."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.claude.guard._reads import read_calls
from ctxrelay.hooks.guard.prints import classify


def _denied(command: str, cwd: Path) -> str:
    found = classify(command, str(cwd))
    assert found
    return "\n".join(str(call) for printed in found for call in read_calls(printed)[0])


@pytest.mark.parametrize("command", ["tail -20 {f}", "tail -n 20 {f}", "tail -n20 {f}"])
@pytest.mark.parametrize("lines", [25, 1_000])
def test_tail_n_names_the_exact_range(tmp_path: Path, command: str, lines: int) -> None:
    log = tmp_path / "app.log"
    log.write_text("".join(f"entry {i}\n" for i in range(lines)))
    reason = _denied(command.format(f="app.log"), tmp_path)
    assert f'Read {{"file_path": "{log}", "offset": {lines - 19}, "limit": 20}}' in reason
    assert "unknown" not in reason


def test_a_file_of_megabytes_is_counted_too(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    line = b"x" * 99 + b"\n"
    count = 5 * 1024 * 1024 // len(line)
    log.write_bytes(line * count)
    reason = _denied(f"tail -5 {log}", tmp_path)
    assert f'"offset": {count - 4}, "limit": 5}}' in reason
    assert "unknown" not in reason


def test_a_missing_file_states_the_formula(tmp_path: Path) -> None:
    reason = _denied("tail -5 gone.log", tmp_path)
    assert "offset = line count - 4, limit 5; the line count is unknown" in reason
