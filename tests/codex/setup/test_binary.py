"""``ctxrelay.codex.setup.binary.cli_path``: the one lookup of the Codex CLI."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ctxrelay.codex.setup.binary import cli_path
from ctxrelay.codex.setup.doctor import codex_version
from tests.codex._cli import codex_cli, pinned_version
from tests.conftest import PROJECT
from tests.hooks.install._launchers import fake_cli


def test_the_pinned_cli_runs_and_is_the_pinned_version() -> None:
    out = subprocess.run(
        [codex_cli(), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["codex-cli", pinned_version()]


def test_the_pin_is_exact_and_the_facts_page_names_it() -> None:
    version = pinned_version()
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version), "pin an exact version"
    facts = (PROJECT / "docs" / "codex-facts.md").read_text(encoding="utf-8")
    assert f"`@openai/codex` **{version}**" in facts


def test_codex_on_path_comes_first_unless_the_pinned_one_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = codex_cli()
    mine = fake_cli(tmp_path, "codex", "codex-cli 9.9.9")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert (cli_path(), cli_path(pinned=True)) == (mine, pinned)
    assert codex_version(mine) == "9.9.9"
