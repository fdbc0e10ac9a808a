"""The PreToolUse handler: Bash to the Bash guard, Read to the Read guard, in-process."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.claude._events.pre_tool_use import handle as _handle
from ctxrelay.claude.host import CLAUDE
from ctxrelay.errors import HookPayloadError
from ctxrelay.hooks.host import Answer, Event
from tests.claude.guard._payloads import bash, pre_tool_use, read
from tests.conftest import corpus_path

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import PreToolUsePayload


def handle(payload: dict[str, Any]) -> Mapping[str, Any] | None:
    """The handler on a payload built as a plain dict (as the hook gets it off stdin),
    its answer as Claude Code gets it."""
    answer = _handle(cast("PreToolUsePayload", payload))
    return None if answer is None else CLAUDE.encode(Event.TOOL_CALL, "PreToolUse", answer)


def reason_of(answer: Mapping[str, Any] | None) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    reason = out["permissionDecisionReason"]
    assert isinstance(reason, str)
    return reason


def test_deny_is_claude_codes_answer() -> None:
    assert CLAUDE.encode(Event.TOOL_CALL, "PreToolUse", Answer(deny="why")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "why",
        }
    }


def test_bash_printing_a_big_file_is_denied_with_a_read_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BASH_MAX_OUTPUT_LENGTH", raising=False)
    (tmp_path / "big.txt").write_text("a line of text\n" * 1_500)  # 22 KB
    reason = reason_of(handle(bash("cat big.txt", str(tmp_path))))
    assert f'Read {{"file_path": "{tmp_path / "big.txt"}", "limit": ' in reason


def test_bash_into_a_pipe_is_allowed(tmp_path: Path) -> None:
    assert handle(bash("cat big.txt | wc -l", str(tmp_path))) is None
    assert handle(bash("ls -la", str(tmp_path))) is None
    assert handle(bash("", str(tmp_path))) is None


def test_other_tools_pass(tmp_path: Path) -> None:
    agent = {"description": "x", "prompt": "cat big.txt", "subagent_type": "general-purpose"}
    assert handle(pre_tool_use("Agent", agent, str(tmp_path))) is None
    assert handle(pre_tool_use("Grep", {"pattern": "x"}, str(tmp_path))) is None


def test_a_missing_cwd_is_the_hooks_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BASH_MAX_OUTPUT_LENGTH", raising=False)
    (tmp_path / "f").write_text("a line of text\n" * 1_500)
    payload = bash("cat f", "unused")
    del payload["cwd"]
    assert str(tmp_path / "f") in reason_of(handle(payload))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tool_name": None}, "tool_name"),
        ({"tool_name": 3}, "tool_name"),
        ({"tool_input": "cat f"}, "tool_input"),
        ({"tool_input": None}, "tool_input"),
        ({"tool_input": {"description": "no command"}}, "tool_input.command"),
        ({"tool_input": {"command": ["cat", "f"]}}, "tool_input.command"),
        ({"cwd": 7}, "cwd"),
        ({"cwd": ""}, "cwd"),
        ({"cwd": "/w\x00"}, "cwd"),
    ],
)
def test_a_malformed_payload_names_its_bad_field(change: dict[str, Any], field: str) -> None:
    payload = bash("cat f", "/w")
    payload.update(change)
    with pytest.raises(HookPayloadError, match=field.replace(".", r"\.")):
        handle(payload)


def test_a_read_without_a_string_file_path_is_malformed() -> None:
    with pytest.raises(HookPayloadError, match="file_path"):
        handle(pre_tool_use("Read", {"file_path": 3}, "/w"))


def test_the_captured_pre_tool_use_payloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's own payloads: the subagent's ``cat big.txt | head -3`` and its
    ``Read`` with a limit pass; the same call as ``cat big.txt`` is denied."""
    lines = corpus_path("corpora/claude-code-capture/hook-payloads.jsonl").read_text()
    payloads = [json.loads(line) for line in lines.splitlines() if line.strip()]
    captured = [p for p in payloads if p["hook_event_name"] == "PreToolUse"]
    assert {p["tool_name"] for p in captured} >= {"Bash", "Read"}
    for payload in captured:
        assert handle(payload) is None, payload["tool_input"]
    (bash_call,) = [p for p in captured if p["tool_name"] == "Bash"]
    monkeypatch.delenv("BASH_MAX_OUTPUT_LENGTH", raising=False)
    (tmp_path / "big.txt").write_text("a line of text\n" * 1_500)
    bash_call["tool_input"]["command"] = "cat big.txt"
    bash_call["cwd"] = str(tmp_path)
    reason = reason_of(handle(bash_call))
    assert f'"file_path": "{tmp_path / "big.txt"}"' in reason


@given(
    command=st.text(max_size=60).map(lambda t: "cat " + t),
    cwd=st.text(min_size=1, max_size=20).filter(lambda c: "\x00" not in c),
)
@settings(max_examples=300, deadline=None)
def test_any_well_formed_bash_payload_is_answered(command: str, cwd: str) -> None:
    answer = handle(bash(command, cwd))
    assert answer is None or answer["hookSpecificOutput"]["permissionDecision"] == "deny"


@given(file_path=st.text(max_size=40), cwd=st.text(min_size=1, max_size=20))
@settings(max_examples=200, deadline=None)
def test_any_well_formed_read_payload_is_answered(file_path: str, cwd: str) -> None:
    if "\x00" in cwd:
        return
    answer = handle(read(file_path, cwd))
    assert answer is None or answer["hookSpecificOutput"]["permissionDecision"] == "deny"
