"""The examples of docs/integrations.md and docs/runtime.md run as written, each as a
program of its own (a fresh Python process in an empty directory), against the local
wire servers of ``ctxrelay.testing``, pointed at through the environment as the pages
say (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``). README's runtime example is run by
``tests/cli/test_readme.py``.

The convention of these pages: a block marked `` ```python `` is an example that runs as
written (docs/runtime.md's run in order, as one program: each continues the one before);
`` ```python fragment `` marks a piece that needs what the page only describes (a
PostgreSQL server, your own hooks), and is compiled here, not run; output and synopses
are `` ```text `` or unmarked.

The integrations' model script is a long run with a handoff in it: more model calls than
the Agents SDK's and pydantic-ai's default turn limits allow (which the examples raise),
usage that crosses the handoff target, and then the agent's ``new_context``."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.integrations import budget_for
from ctxrelay.store import open_store
from ctxrelay.testing import AnthropicServer, OpenAIServer, Step, ToolUse

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("docs/integrations.md", "docs/runtime.md")
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.M | re.S)
FRAMEWORKS = {
    "openai-agents": "ctxrelay.integrations.openai_agents",
    "pydantic-ai": "ctxrelay.integrations.pydantic_ai",
    "langchain": "ctxrelay.integrations.langchain",
}
LONG_RUN = 60
"""Model calls before the handoff: over the Agents SDK's 10 and pydantic-ai's 50."""


def blocks(page: str, kind: str = "") -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return [code for info, code in FENCE.findall(text) if info.strip() == kind]


def test_every_python_block_is_an_example_or_a_marked_fragment() -> None:
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert {info.strip() for info, _ in FENCE.findall(text)} <= {"", "fragment"}, page
    assert len(blocks("docs/integrations.md")) == len(FRAMEWORKS)
    assert len(blocks("docs/runtime.md")) == 3


@pytest.mark.parametrize("page", PAGES)
def test_fragments_compile(page: str) -> None:
    for code in blocks(page, "fragment"):
        compile(code, page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _run(code: str, where: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    where.mkdir(parents=True, exist_ok=True)
    (where / "example.py").write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "example.py"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _env(**servers: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(servers, OPENAI_API_KEY="test", ANTHROPIC_API_KEY="test")
    return env


def _long_run_with_a_handoff() -> list[Step]:
    target = budget_for("openai", "gpt-4.1").handoff_target
    assert target is not None  # the slider is not Off
    read = ToolUse("read_file", {"path": "todo.py"})
    steps = [Step(tool_calls=[read], input_tokens=1_000 + i) for i in range(LONG_RUN)]
    steps.append(Step(tool_calls=[read], input_tokens=target + 1_000))  # the handoff is due
    steps.append(Step(tool_calls=[ToolUse("new_context", {})], input_tokens=target + 1_200))
    steps.append(Step(tool_calls=[read], input_tokens=2_000))
    return [*steps, Step(text="All done.", input_tokens=2_500)]


def _example(framework: str) -> str:
    (code,) = [c for c in blocks("docs/integrations.md") if FRAMEWORKS[framework] in c]
    return code


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_integration_example_runs_as_written(framework: str, tmp_path: Path) -> None:
    pytest.importorskip(FRAMEWORKS[framework])
    (tmp_path / "todo.py").write_text("print('todo')\n")
    with OpenAIServer(_long_run_with_a_handoff()) as server:
        env = _env(OPENAI_BASE_URL=server.base_url, OPENAI_AGENTS_DISABLE_TRACING="1")
        done = _run(_example(framework), tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith("All done."), done.stdout
        assert "[non-fatal]" not in done.stderr  # tracing off, as the page says
        assert len(server.requests) == LONG_RUN + 4
    store = open_store(tmp_path / "agent.db")
    try:
        windows = store.windows("ticket-42")
    finally:
        store.close()
    assert [w.seal_reason for w in windows] == ["new_context", None]


def test_the_agents_sdk_traces_fail_offline_as_the_page_says(tmp_path: Path) -> None:
    pytest.importorskip(FRAMEWORKS["openai-agents"])
    (tmp_path / "todo.py").write_text("print('todo')\n")
    with OpenAIServer(_long_run_with_a_handoff()) as server:
        # Offline: the trace ingestion is reached through a proxy that is not there.
        env = _env(OPENAI_BASE_URL=server.base_url, HTTPS_PROXY="http://127.0.0.1:9")
        env["NO_PROXY"] = "127.0.0.1,localhost"
        done = _run(_example("openai-agents"), tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "[non-fatal] Tracing request failed" in done.stderr


def test_the_runtime_pages_examples_run_in_order_as_one_program(tmp_path: Path) -> None:
    program = "\n".join(blocks("docs/runtime.md"))
    with AnthropicServer([Step(text="The test passes now.", input_tokens=1_200)]) as server:
        done = _run(program, tmp_path, _env(ANTHROPIC_BASE_URL=server.base_url))
        assert done.returncode == 0, done.stderr
        assert [r.body["model"] for r in server.requests_to("/v1/messages")] == [
            "claude-sonnet-4-5"
        ]
    assert "EndEvent" in done.stdout  # on_event=print
    store = open_store(tmp_path / "agent.db")
    try:
        (session,) = store.list_sessions()
        windows = store.windows(session.id)
    finally:
        store.close()
    assert [w.seal_reason for w in windows] == ["new_context", None]  # seal_window's
