"""The Gemini CLI's session files as the analyzer reads them: a response written twice
counts once, ``$set.messages`` restarts the chain (the responses before it stay: they
were billed), ``$rewindTo`` changes no bill, the older one-object ``.json`` form, a
subagent's file naming its parent, and the >200k prompt tier of the Pro prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.pricing import DEFAULT_PRICES, cost
from ctxrelay.transcripts import scan_file
from ctxrelay.transcripts._records import Usage
from tests.gemini._session import SESSION, SessionFile


def test_a_response_written_twice_counts_once_and_a_clear_restarts_the_chain(
    tmp_path: Path,
) -> None:
    chat = SessionFile().user("a").gemini(6_000, cached=5_000, thoughts=42, output=12, twice=True)
    chat.lines.append({"$rewindTo": chat.lines[-1]["id"]})
    chat.clear().user("resume").gemini(900, output=4)
    t = scan_file(chat.write(tmp_path / "s.jsonl"))
    assert t.format == "gemini"
    assert t.session_id == SESSION
    assert [r.usage for r in t.responses] == [Usage(1_000, 0, 5_000, 54), Usage(900, 0, 0, 4)]
    assert [r.segment for r in t.responses] == [0, 1]
    (clear,) = t.compactions
    assert (clear.pre_tokens, clear.after_requests) == (6_000, 1)
    assert t.models == ("gemini-2.5-pro",)


def test_the_older_json_form_and_a_subagents_file(tmp_path: Path) -> None:
    chat = SessionFile().user("a").gemini(2_000)
    record = chat.lines[0] | {"messages": [line for line in chat.lines[2:] if "type" in line]}
    old = tmp_path / "session-2025-10-01T10-00-4a274728.json"
    old.write_text(json.dumps(record))
    assert [r.usage.input_tokens for r in scan_file(old).responses] == [2_000]
    folder = tmp_path / SESSION
    folder.mkdir()
    sub = SessionFile("agent-1")
    sub.lines[0]["kind"] = "subagent"
    t = scan_file(sub.user("look").gemini(700).write(folder / "agent-1.jsonl"))
    assert t.parent_id == SESSION


@pytest.mark.parametrize(("prompt", "rate"), [(200_000, 1.25), (200_001, 2.5)])
def test_the_pro_prices_have_the_long_prompt_tier(prompt: int, rate: float) -> None:
    prices = DEFAULT_PRICES["gemini-2.5-pro"]
    assert cost(Usage(prompt, 0, 0, 0), prices) == pytest.approx(prompt * rate / 1_000_000)
