"""``tail -N FILE`` is denied with the exact Read range: the guard counts the file's lines
(any file up to ``COUNT_MAX_BYTES``, so every file under the Read cap), never "the line
count is unknown" for a file it can read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.budget.bounds import READ_MAX_BYTES
from tests.claude._session import Session, run_hook


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return Session(tmp_path)


def _denied(session: Session, command: str, cwd: Path) -> str:
    payload = session.payload(
        "PreToolUse", tool_name="Bash", tool_input={"command": command}, cwd=str(cwd)
    )
    answer = run_hook(payload)
    assert answer is not None
    return str(answer["hookSpecificOutput"]["permissionDecisionReason"])


@pytest.mark.parametrize("command", ["tail -20 {f}", "tail -n 20 {f}", "tail -n20 {f}"])
@pytest.mark.parametrize("lines", [25, 1_000])
def test_tail_n_names_the_exact_range(
    session: Session, tmp_path: Path, command: str, lines: int
) -> None:
    log = tmp_path / "app.log"
    log.write_text("".join(f"entry {i}\n" for i in range(lines)))
    reason = _denied(session, command.format(f="app.log"), tmp_path)
    assert f'Read {{"file_path": "{log}", "offset": {lines - 19}, "limit": 20}}' in reason
    assert "unknown" not in reason


def test_a_file_over_the_read_cap_is_counted_too(session: Session, tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    line = b"x" * 99 + b"\n"
    count = READ_MAX_BYTES // len(line) + 10
    log.write_bytes(line * count)
    reason = _denied(session, f"tail -5 {log}", tmp_path)
    assert f'"offset": {count - 4}, "limit": 5}}' in reason
    assert "unknown" not in reason


def test_a_missing_file_states_the_formula(session: Session, tmp_path: Path) -> None:
    reason = _denied(session, "tail -5 gone.log", tmp_path)
    assert "offset = line count - 4, limit 5; the line count is unknown" in reason
