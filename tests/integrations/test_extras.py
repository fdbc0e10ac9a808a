"""Each integration imports its framework only when used, and names its extra when the
framework is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.budget import Budget
from ctxrelay.errors import MissingExtraError
from ctxrelay.store import open_store

# (integration module, the framework's import name, the extra, the entry class)
INTEGRATIONS = [
    ("ctxrelay.integrations.openai_agents", "agents", "openai-agents", "AgentsRelay"),
    ("ctxrelay.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai", "PydanticAIRelay"),
    ("ctxrelay.integrations.langchain", "langchain", "langchain", "LangChainRelay"),
]


@pytest.mark.parametrize(("module", "framework", "extra", "entry"), INTEGRATIONS)
def test_importing_the_module_does_not_import_the_framework(
    module: str, framework: str, extra: str, entry: str
) -> None:
    code = f"import sys, {module}; print({framework!r} in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(("module", "framework", "extra", "entry"), INTEGRATIONS)
def test_a_missing_framework_names_the_extra(
    module: str,
    framework: str,
    extra: str,
    entry: str,
    *,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import importlib

    mod = importlib.import_module(module)
    # "import agents" (and any of its submodules) raises ImportError
    for name in [n for n in sys.modules if n == framework or n.startswith(framework + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, framework, None)
    store = open_store(str(tmp_path / "x.db"))
    try:
        with pytest.raises(MissingExtraError, match=rf"pip install 'ctxrelay\[{extra}\]'"):
            getattr(mod, entry).open(store, budget=Budget(limit=200_000, output_reserve=32_000))
    finally:
        store.close()
