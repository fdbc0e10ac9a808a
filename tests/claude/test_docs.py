"""``docs/claude-code.md`` shows every text the plugin adds to a prompt: the texts it
shows are the ones the code produces, and the agents' shared sections are verbatim."""

from __future__ import annotations

from pathlib import Path

from ctxrelay.budget.triggers import report_now
from ctxrelay.claude._notices import StoppedShort, render
from ctxrelay.claude.setup._snippet import plugin_dir

DOC = (Path(__file__).resolve().parents[2] / "docs" / "claude-code.md").read_text()


def test_the_report_now_notes_are_shown_as_produced() -> None:
    over = report_now(120_000, model="claude-opus-4-8", turns_used=3, max_turns=None)
    near = report_now(20_000, model="claude-opus-4-8", turns_used=27, max_turns=31)
    assert over is not None
    assert near is not None
    assert over.note() in DOC
    assert near.note() in DOC


def test_the_stopped_short_notice_is_shown_as_produced() -> None:
    path = (
        "/home/user/.claude/projects/-home-user-project/"
        "505a7478-0c09-4225-8c2e-eb227889cf62/subagents/agent-a0ccb5802f157f5c2.jsonl"
    )
    notice = render([StoppedShort("a0ccb5802f157f5c2", "investigator", 31, 31, path)])
    assert notice is not None
    assert notice in DOC


def test_the_agents_shared_sections_are_shown_verbatim() -> None:
    for agent in sorted((plugin_dir() / "agents").glob("*.md")):
        tail = agent.read_text()[agent.read_text().index("## Your report") :].strip()
        assert tail in DOC, agent.name
