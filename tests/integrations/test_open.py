"""The three integrations open a session the same way (``FrameworkRelay.open``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.integrations._relay import FrameworkRelay
from ctxrelay.integrations.langchain import LangChainRelay
from ctxrelay.integrations.openai_agents import AgentsRelay
from ctxrelay.integrations.pydantic_ai import PydanticAIRelay
from ctxrelay.runtime.tools import ReadFile, WriteFile


@pytest.mark.parametrize("cls", [AgentsRelay, PydanticAIRelay, LangChainRelay])
def test_open_offers_the_tools_given_and_reopens_the_session(
    cls: type[FrameworkRelay], tmp_path: Path
) -> None:
    db = tmp_path / "agent.db"
    opened = cls.open(
        db, session_id="ticket-42", model="gpt-4.1", workspace=tmp_path, tools=[ReadFile()]
    )
    names = [t.name for t in opened.tools]  # type: ignore[attr-defined]
    assert names == ["new_context", "session_history", "read_file"]
    assert opened.session_id == "ticket-42"
    assert opened.relay.framework == cls.FRAMEWORK
    again = cls.open(db, session_id="ticket-42", model="gpt-4.1", tools=[WriteFile()])
    assert again.session_id == "ticket-42"
    assert [t.name for t in again.tools][-1] == "write_file"  # type: ignore[attr-defined]
