"""The examples of docs/integrations.md run as printed, against the local servers."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.store import open_store
from ctxrelay.testing import OpenAIServer, Step, ToolUse

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def _example(heading: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, f"no example under {heading}"
    return found.group(1)


@pytest.mark.parametrize(
    ("heading", "module", "extra", "route"),
    [
        ("OpenAI Agents SDK", "agents", "openai-agents", "/v1/responses"),  # its default
        ("pydantic-ai", "pydantic_ai", "pydantic-ai", "/v1/chat/completions"),
        ("LangChain", "langchain", "langchain", "/v1/chat/completions"),
    ],
)
def test_the_example_runs(
    tmp_path: Path, heading: str, module: str, extra: str, route: str
) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{extra} is not installed (pip install 'ctxrelay[{extra}]')")
    code = _example(heading)
    assert len(code.splitlines()) <= 25
    (tmp_path / "README.md").write_text("# todo\n")
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "README.md"})]),
        Step(text="All done."),
    ]
    with OpenAIServer(steps) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
        }
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "All done."
        assert [r.route for r in server.requests] == [route, route]
    store = open_store(str(tmp_path / "agent.db"))
    try:
        kinds = [r.kind for r in store.rows("ticket-42")]
    finally:
        store.close()
    assert kinds == ["user", "assistant", "tool_call", "tool_result", "assistant"]
