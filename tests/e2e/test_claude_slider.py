"""The configured slider against the real Claude Code CLI (bundled by
``claude-agent-sdk``) and the project's scripted Anthropic-compatible server: with
``ctxrelay claude config --threshold 45`` the hint comes at 45% of the window, not at
40%, and names 45% (the harness: ``tests/e2e/test_claude_handoff.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli.claude import main as claude_main
from ctxrelay.testing import AnthropicServer, Step
from tests.e2e._claude import bodies
from tests.e2e._usage import usage
from tests.e2e.test_claude_handoff import (
    INSTALLED,
    WINDOW,
    by_turn,
    claude_env,
    resumed_turns,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = ["claude_env"]  # the fixture, used by name below

AT_45 = WINDOW * 45 // 100
AT_40 = WINDOW * 40 // 100


def test_the_hint_comes_at_the_configured_slider(
    claude_env: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, project, env = claude_env
    monkeypatch.delenv("CTXRELAY_THRESHOLD", raising=False)
    env.pop("CTXRELAY_THRESHOLD", None)
    assert claude_main(["config", "--project-dir", str(project), "--threshold", "45"]) == 0
    plan: dict[str, list[Step]] = {
        "TURN-1": [Step(text="Read the code.", **usage(AT_40))],
        "TURN-2": [Step(text="Still reading.", **usage(AT_45 - 1))],
        "TURN-3": [Step(text="Read more.", **usage(AT_45))],
    }

    with AnthropicServer(by_turn(plan)) as server:
        shown = resumed_turns(env, project, server, len(plan))
        sent = json.dumps(bodies(server))

    # 40% and one token short of 45%: no hint (the default 60 would not hint either,
    # the next turn shows the point moved down to 45).
    assert shown[0] == []
    assert shown[1] == []
    (hint,) = shown[2]
    assert f"{AT_45:,} tokens, 45% of the {WINDOW:,}-token window" in hint
    assert "(the handoff point is 45%)" in hint
    assert f"Run {INSTALLED} to" in hint
    assert f"Run {INSTALLED}" not in sent
