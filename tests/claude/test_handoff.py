"""Handoff files: unique names, never handed out twice, safe paths, resume bookkeeping,
the prompts, and the skill's copy of the layout."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from ctxrelay.claude import handoff
from ctxrelay.claude.handoff import resume_prompt, write_prompt
from ctxrelay.hooks.handoff import (
    LAYOUT,
    MAX_RESUME_AGE_S,
    SECTIONS,
    is_handoff_path,
    latest_unconsumed,
    list_handoffs,
    mark_consumed,
    new_handoff_path,
    read_handoff,
)
from tests.claude._handoff import isolate

SKILL = Path(handoff.__file__).parent / "plugin" / "skills" / "handoff" / "SKILL.md"
NOW = 1_780_000_000.0


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def test_names_are_utc_time_and_unique_within_one_second(project: Path) -> None:
    paths = [new_handoff_path(project, now=NOW) for _ in range(12)]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(NOW))
    assert paths[0].name == f"handoff-{stamp}.md"
    assert paths[1].name == f"handoff-{stamp}-2.md"
    assert len({p.name for p in paths}) == 12
    assert all(p.parent == project / ".ctxrelay" / "handoff" for p in paths)
    assert not any(p.exists() for p in paths)  # reserved, not created


def test_an_existing_file_is_never_handed_out(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = new_handoff_path(project, now=NOW)
    first.write_text("x")
    # Even with the reservations forgotten (state dir wiped), the file itself blocks it.
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(project.parent / "other-state"))
    again = new_handoff_path(project, now=NOW)
    assert again != first


def _reserve(project: str) -> str:
    return new_handoff_path(Path(project), now=NOW).name


def test_concurrent_reservations_never_collide(project: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        names = pool.map(_reserve, [str(project)] * 16)
    assert len(set(names)) == 16


def test_listing_orders_by_time_then_counter(project: Path) -> None:
    folder = project / ".ctxrelay" / "handoff"
    folder.mkdir(parents=True)
    for name in (
        "handoff-20260101T000001Z.md",
        "handoff-20260101T000000Z-10.md",
        "handoff-20260101T000000Z-2.md",
        "handoff-20260101T000000Z.md",
        "notes.md",
        "handoff-bad.md",
    ):
        (folder / name).write_text("x")
    assert [p.name for p in list_handoffs(project)] == [
        "handoff-20260101T000000Z.md",
        "handoff-20260101T000000Z-2.md",
        "handoff-20260101T000000Z-10.md",
        "handoff-20260101T000001Z.md",
    ]


def test_is_handoff_path_cannot_be_escaped(project: Path, tmp_path: Path) -> None:
    folder = project / ".ctxrelay" / "handoff"
    folder.mkdir(parents=True)
    good = folder / "handoff-20260101T000000Z.md"
    assert is_handoff_path(project, good)
    assert is_handoff_path(project, ".ctxrelay/handoff/handoff-20260101T000000Z.md")
    assert not is_handoff_path(project, folder / "notes.md")
    assert not is_handoff_path(project, folder / ".." / "handoff-20260101T000000Z.md")
    assert not is_handoff_path(project, tmp_path / "handoff-20260101T000000Z.md")
    (folder / "handoff-20260101T000009Z.md").symlink_to(tmp_path / "elsewhere.md")
    assert not is_handoff_path(project, folder / "handoff-20260101T000009Z.md")


def test_latest_unconsumed_and_each_resumed_once(project: Path) -> None:
    assert latest_unconsumed(project) is None
    a = new_handoff_path(project, now=NOW)
    a.write_text("# Handoff\n")
    b = new_handoff_path(project, now=NOW + 1)
    b.write_text("")  # not written yet (empty): skipped
    assert latest_unconsumed(project, now=NOW + 2) == a
    assert mark_consumed(project, a)
    assert not mark_consumed(project, a)
    assert latest_unconsumed(project, now=NOW + 2) is None
    c = new_handoff_path(project, now=NOW + 3)
    c.write_text("# Handoff\n")
    assert latest_unconsumed(project) == c


def test_an_old_handoff_is_not_resumed(project: Path) -> None:
    a = new_handoff_path(project, now=NOW)
    a.write_text("# Handoff\n")
    os.utime(a, (NOW, NOW))
    assert latest_unconsumed(project, now=NOW + MAX_RESUME_AGE_S - 1) == a
    assert latest_unconsumed(project, now=NOW + MAX_RESUME_AGE_S + 1) is None


def test_read_handoff_finds_the_next_step_and_caps(project: Path) -> None:
    path = project / "h.md"
    path.write_text("# Handoff\n## Goal\nship it\n## Next step:\nRun `make test` and fix x.\n")
    found = read_handoff(path)
    assert found is not None
    assert found.next_step == "Run `make test` and fix x."
    assert not found.truncated
    path.write_text("# Handoff\n" + "y" * 100)
    capped = read_handoff(path, max_bytes=20)
    assert capped is not None
    assert capped.truncated
    assert len(capped.text) == 20
    assert capped.next_step is None
    path.write_text("  \n")
    assert read_handoff(path) is None
    assert read_handoff(project / "missing.md") is None


def test_prompts_name_the_file_and_the_next_step(project: Path) -> None:
    path = project / ".ctxrelay" / "handoff" / "handoff-20260101T000000Z.md"
    prompt = write_prompt(path, reason="the context is 61%")
    assert str(path) in prompt
    assert "the context is 61%" in prompt
    assert LAYOUT in prompt
    assert "has not appeared" in write_prompt(path, reason="r", retry=True)
    resume = resume_prompt(path, next_step="run make test", project_dir=project)
    assert ".ctxrelay/handoff/handoff-20260101T000000Z.md" in resume
    assert "run make test" in resume
    assert "next step it names" in resume_prompt(path, next_step=None, project_dir=project)


def test_the_layout_has_every_section_in_order() -> None:
    positions = [LAYOUT.index(f"## {title}\n") for title in SECTIONS]
    assert positions == sorted(positions)
    assert SECTIONS == (
        "Goal",
        "State",
        "Decisions",
        "Files touched",
        "Commands that matter",
        "Next step",
    )


def test_the_skill_carries_the_layout_and_asks_for_the_path() -> None:
    text = SKILL.read_text(encoding="utf-8")
    assert text.startswith("---\nname: handoff\n")
    # The skill's copy of the layout is the module's, line for line.
    assert LAYOUT.strip() in text
    # Its path comes from the command Claude Code runs when the skill loads.
    assert "!`ctxrelay claude handoff new-path`" in text
    assert "$ARGUMENTS" in text


def test_cli_new_path_list_latest(project: Path) -> None:
    from ctxrelay.cli import claude as cli

    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["handoff", "new-path", "--project-dir", str(project)]) == 0
    first = Path(out.getvalue().strip())
    assert first.is_absolute()
    assert first.parent == (project / ".ctxrelay" / "handoff").resolve()
    first.write_text("# Handoff\n")
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["handoff", "list", "--json", "--project-dir", str(project)]) == 0
    assert json.loads(out.getvalue()) == [{"path": str(first), "bytes": 10}]
    empty = project / "sub"
    empty.mkdir()
    assert cli.main(["handoff", "latest", "--project-dir", str(empty)]) == 1


def test_cli_drop_sets_the_waiting_handoff_aside(project: Path) -> None:
    from ctxrelay.cli import claude as cli

    assert cli.main(["handoff", "drop", "--project-dir", str(project)]) == 1  # none waits
    path = new_handoff_path(project.resolve())
    path.write_text("# Handoff\n")
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["handoff", "drop", "--json", "--project-dir", str(project)]) == 0
    assert json.loads(out.getvalue()) == {"dropped": str(path)}
    assert path.is_file()  # the file stays
    assert latest_unconsumed(project) is None
    assert cli.main(["handoff", "drop", "--project-dir", str(project)]) == 1
