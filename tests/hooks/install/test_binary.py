"""A host's CLI (``ctxrelay.hooks.install.binary``): the one on ``PATH`` first, else
where the host says, and its version as ``--version`` prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.hooks.install.binary import cli_path, cli_version
from tests.hooks.install._launchers import fake_cli


def test_the_cli_on_path_comes_first_unless_elsewhere_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = fake_cli(tmp_path / "bin", "tool", "tool 1.0")
    pinned = fake_cli(tmp_path / "pinned", "tool", "tool 2.0")
    monkeypatch.setenv("PATH", str(mine.parent))
    assert cli_path("tool", lambda: pinned) == mine
    assert cli_path("tool", lambda: pinned, skip_path=True) == pinned
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert cli_path("tool", lambda: pinned) == pinned
    assert cli_path("tool", lambda: None) is None


@pytest.mark.parametrize(
    ("says", "version"),
    [
        ("2.1.287 (Claude Code)", "2.1.287"),
        ("codex-cli 0.171.0", "0.171.0"),
        ("tool v3.2 (build 7)", None),
        ("no version here", None),
    ],
)
def test_the_version_is_the_number_the_cli_prints(
    tmp_path: Path, says: str, version: str | None
) -> None:
    assert cli_version(fake_cli(tmp_path, "tool", says)) == version


def test_a_cli_that_does_not_run_has_no_version(tmp_path: Path) -> None:
    assert cli_version(tmp_path / "gone") is None
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 1.2.3; exit 1\n")
    broken.chmod(0o755)
    assert cli_version(broken) is None
