"""The hook payload types are the payloads Claude Code really sends (the capture)."""

from __future__ import annotations

import json
from typing import get_type_hints

import pytest

from ctxrelay.claude._events import _payloads
from ctxrelay.claude.host import CLAUDE
from tests.conftest import corpus_path

TYPES: dict[str, type] = {
    "PreToolUse": _payloads.PreToolUsePayload,
    "PostToolUse": _payloads.PostToolUsePayload,
    "Stop": _payloads.StopPayload,
    "SubagentStop": _payloads.SubagentStopPayload,
    "SessionStart": _payloads.SessionStartPayload,
    "UserPromptSubmit": _payloads.UserPromptSubmitPayload,
}


def test_every_handled_event_has_a_payload_type() -> None:
    assert set(TYPES) == set(CLAUDE.handlers)


@pytest.mark.parametrize("event", sorted(TYPES))
def test_the_captured_payloads_fit_their_types(event: str) -> None:
    capture = corpus_path("corpora/claude-code-capture") / "hook-payloads.jsonl"
    payloads = [json.loads(line) for line in capture.read_text().splitlines()]
    seen = [p for p in payloads if p["hook_event_name"] == event]
    assert seen, f"the capture holds no {event} payload"
    kind = TYPES[event]
    declared = set(get_type_hints(kind))
    required: frozenset[str] = kind.__required_keys__  # type: ignore[attr-defined]
    for payload in seen:
        fields = set(payload) - {"_argv"}  # the capture's own note of the hook's argv
        assert required <= fields, f"{event}: Claude Code left out {sorted(required - fields)}"
        assert fields <= declared, f"{event}: not declared: {sorted(fields - declared)}"
