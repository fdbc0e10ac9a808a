"""The policy core stays pure: no I/O, nothing else of ctxrelay, only value modules of the
standard library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ctxrelay.budget

BUDGET_DIR = Path(ctxrelay.budget.__file__).parent
MODULES = sorted(BUDGET_DIR.glob("*.py"))

# Standard-library modules the core may use: values and arithmetic, nothing that reaches
# the outside world (files, clocks, randomness, processes, the network, the environment).
ALLOWED_STDLIB = {
    "__future__",
    "collections",
    "dataclasses",
    "decimal",
    "enum",
    "fractions",
    "importlib",
    "math",
    "typing",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_core_imports_only_values_and_itself(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        if top == "ctxrelay":
            assert name.startswith("ctxrelay.budget"), f"{path.name} imports {name}"
        else:
            assert top in ALLOWED_STDLIB, f"{path.name} imports {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_core_calls_no_io_builtins(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS, path.name


def test_every_exported_name_resolves() -> None:
    for name in ctxrelay.budget.__all__:
        assert getattr(ctxrelay.budget, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ctxrelay.budget.nope  # type: ignore[attr-defined]


def test_the_core_loads_nothing_of_ctxrelay_outside_it_nor_a_heavy_package() -> None:
    # Run in a fresh interpreter: what importing and running the core brings in.
    code = (
        "import json, sys\n"
        "import ctxrelay.budget, ctxrelay.budget.bounds, ctxrelay.budget.models\n"
        "from ctxrelay.budget import Action, Budget, Stage, evaluate\n"
        "from ctxrelay.budget.triggers import main_triggers, report_now\n"
        "budget = Budget(200_000, 32_000, 60.1, warning_lead=7.5)\n"
        "assert evaluate(budget, 120_200).stage is Stage.HANDOFF\n"
        "assert report_now(0, model=None, turns_used=1, max_turns=2) is not None\n"
        "assert Action('warn') is Action.WARN and f'{Stage.HANDOFF}' == 'handoff'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    ours = {m for m in loaded if m.startswith("ctxrelay.") and not m.startswith("ctxrelay.budget")}
    assert ours <= {"ctxrelay.errors"}, sorted(ours)  # the package __init__ names the root error
    heavy = {"rich", "anthropic", "openai", "sqlite3", "asyncio", "socket", "subprocess"}
    assert not loaded & heavy, sorted(loaded & heavy)
