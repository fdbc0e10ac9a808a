"""Garbage in, nothing out (``docs/contracts.md``): the plugin's handlers never raise on hostile
payloads or corrupt transcripts, and the hook entry never writes anything but hook JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.claude import hook
from ctxrelay.claude._events import post_tool_use, subagent_stop, user_prompt_submit
from tests.claude._session import Session

_scalar = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)
_FIELDS = [
    "session_id",
    "transcript_path",
    "agent_id",
    "agent_type",
    "agent_transcript_path",
    "tool_name",
    "tool_response",
    "prompt",
    "cwd",
]


@st.composite
def payloads(draw: st.DrawFn, session: Session) -> dict[str, Any]:
    good = session.payload("PostToolUse", "a1", "ctxrelay:investigator")
    good["tool_name"] = draw(st.sampled_from(["Bash", "Agent", "Task", "Read"]))
    good["tool_response"] = {"status": "completed", "agentId": "a1"}
    good["prompt"] = "<task-notification><task-id>a1</task-id></task-notification>"
    for key in draw(st.lists(st.sampled_from(_FIELDS), unique=True)):
        good[key] = draw(_json)
    return good


_line = st.one_of(
    st.binary(max_size=200),
    _json.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda mid, usage, content, model: json.dumps(
            {
                "type": "assistant",
                "message": {"id": mid, "model": model, "usage": usage, "content": content},
            }
        ).encode(),
        _json,
        _json,
        _json,
        _json,
    ),
)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    s = Session(tmp_path)
    s.start_agent("a1", "ctxrelay:investigator")
    return s


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_handlers_never_raise_on_hostile_payloads(session: Session, data: st.DataObject) -> None:
    payload = data.draw(payloads(session))
    for module in (post_tool_use, subagent_stop, user_prompt_submit):
        answer = module.handle(payload)
        assert answer is None or set(answer) == {"hookSpecificOutput"}


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_line, max_size=12), tail=st.binary(max_size=50))
def test_handlers_never_raise_on_corrupt_transcripts(
    session: Session, lines: list[bytes], tail: bytes
) -> None:
    path = session.agent_file("a1")
    with path.open("ab") as f:
        for line in lines:
            f.write(line.replace(b"\n", b" ") + b"\n")
        f.write(tail)
    post = session.payload("PostToolUse", "a1", "ctxrelay:investigator", tool_name="Bash")
    stop = session.payload("SubagentStop", "a1", "ctxrelay:investigator")
    main = session.payload(
        "UserPromptSubmit", prompt="<task-notification><task-id>a1</task-id></task-notification>"
    )
    for module, payload in (
        (post_tool_use, post),
        (subagent_stop, stop),
        (user_prompt_submit, main),
    ):
        module.handle(payload)


@pytest.mark.parametrize(
    "stdin",
    ["", "{", "null", "[]", '"x"', "{}", '{"hook_event_name": 3}', "\x00" * 100, "{" * 100_000],
)
def test_the_entry_fails_open_silently(stdin: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert hook.main(io.StringIO(stdin), out) == 0
    assert out.getvalue() == ""
    assert capsys.readouterr().err.count("\n") <= 1


def test_a_transcript_that_is_a_directory_or_a_fifo_is_ignored(session: Session) -> None:
    import os

    path = session.agent_file("a1")
    path.unlink()
    os.mkfifo(path)
    assert session.post_tool("a1", "ctxrelay:investigator") is None
    path.unlink()
    path.mkdir()
    assert session.post_tool("a1", "ctxrelay:investigator") is None


@pytest.mark.parametrize(
    "document",
    ['{"hook_event_name": 5}', '{"session_id": "s"}', "[]", "garbage", ""],
)
def test_malformed_payloads_get_one_stderr_line_and_no_stdout(
    document: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    assert hook.main(io.StringIO(document), out) == 0
    assert out.getvalue() == ""
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("ctxrelay claude hook: ignored")


def test_an_event_ctxrelay_does_not_answer_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert hook.main(io.StringIO('{"hook_event_name": "Notification"}'), out) == 0
    assert out.getvalue() == ""
    assert capsys.readouterr().err == ""
