"""The handoff's texts shown in ``docs/claude-code.md`` are the ones the code produces, and
``docs/claude-handoff.md`` names the real commands and bounds."""

from __future__ import annotations

from pathlib import Path

from ctxrelay.budget.bounds import (
    CONTEXT_PERCENT,
    DEFAULT_MAIN_HANDOVER,
    HANDOFF_RETRY_MAX,
    HANDOFF_WAIT_TURNS,
)
from ctxrelay.budget.bounds import MAIN_OUTPUT_RESERVE as OUTPUT_RESERVE
from ctxrelay.budget.triggers import MainTrigger
from ctxrelay.claude._events.session_start import injection
from ctxrelay.claude._events.stop import (
    failed_text,
    hint_text,
    ready_text,
    reason_text,
    still_ready_text,
)
from ctxrelay.claude._limit import limit_text, usable_limit
from ctxrelay.claude.handoff import INSTALLED_SKILL, Handoff, resume_prompt, write_prompt
from ctxrelay.cli.claude import SUBCOMMANDS

DOCS = Path(__file__).resolve().parents[2] / "docs"
SURFACE = (DOCS / "claude-code.md").read_text()
GUIDE = (DOCS / "claude-handoff.md").read_text()

PROJECT = Path("/home/user/project")
PATH = PROJECT / ".ctxrelay/handoff/handoff-20261130T081500Z.md"
SKILL = f"/{INSTALLED_SKILL}"  # the docs show the settings install's name
STEP = "Run `make test` and fix the failing parser test in tests/test_parse.py."
BODY = (
    "# Handoff\n\n## Goal\nAdd the CSV export (issue 12); done when `make test` passes.\n\n"
    "## Next step\n" + STEP + "\n"
)


def test_every_handoff_text_is_shown_as_produced() -> None:
    reason = reason_text(MainTrigger.CONTEXT, 121_000, 200_000)
    texts = [
        hint_text([MainTrigger.CONTEXT], 121_000, 200_000, SKILL),
        hint_text([MainTrigger.TASK_DONE], 50_000, 200_000, SKILL),
        write_prompt(PATH, reason=reason),
        write_prompt(PATH, reason=reason, retry=True).split(" Finish")[0],
        ready_text(PATH),
        still_ready_text(PATH),
        failed_text(HANDOFF_RETRY_MAX + 1, SKILL),
        resume_prompt(PATH, next_step=STEP, project_dir=PROJECT),
        injection(Handoff(PATH, BODY, False, STEP), PROJECT),
        limit_text(167_500, usable_limit(200_000), 200_000, PATH),
        limit_text(160_000, usable_limit(200_000), 200_000, PATH, 10_000).split("\n\n")[0],
    ]
    for text in texts:
        assert f"```text\n{text}\n```" in SURFACE, text[:80]


def test_the_guide_names_the_real_commands_and_numbers() -> None:
    for sub in ("install", "config", "statusline", "run", "handoff"):
        assert sub in SUBCOMMANDS
        assert f"ctxrelay claude {sub}" in GUIDE
    assert f"{CONTEXT_PERCENT}%" in GUIDE
    assert f"default: `{DEFAULT_MAIN_HANDOVER}`" in GUIDE
    assert f"{OUTPUT_RESERVE:,}" in GUIDE
    assert f"`HANDOFF_WAIT_TURNS` ({HANDOFF_WAIT_TURNS})" in GUIDE
    assert f"`HANDOFF_RETRY_MAX` ({HANDOFF_RETRY_MAX})" in GUIDE
    for name in ("CTXRELAY_MAIN_HANDOVER", "CTXRELAY_CONTEXT_WINDOW", SKILL, "/ctxrelay:handoff"):
        assert name in GUIDE
