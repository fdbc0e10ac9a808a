"""The policy core stays pure (no I/O, nothing else of ctxrelay) and the hook's path into
it stays light."""

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
    # only for the DeprecationWarning enum gives on 3.11 for ``"text" in Cls``, which
    # ``_choices`` repeats on that one path (enum itself imports it there)
    "warnings",
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
    assert sorted(ctxrelay.budget.__all__) == dir(ctxrelay.budget)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ctxrelay.budget.nope


def test_hook_path_does_not_load_the_policy() -> None:
    # The hook reads bounds and triggers at every tool call; the policy (its enums),
    # fractions and rich must not come with them.
    code = (
        "import json, sys; import ctxrelay.budget.bounds, ctxrelay.budget.triggers; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    heavy = {"dataclasses", "fractions", "decimal", "inspect", "rich", "ctxrelay.budget._policy"}
    assert not loaded & heavy


def test_the_policy_loads_and_runs_without_heavy_modules() -> None:
    # The analyzer's replay imports the policy in a process that must start about as fast
    # as the bare interpreter: its values are written by hand (no dataclasses), its exact
    # arithmetic on ints and floats is integer ratios (decimal and fractions load only for
    # a Decimal or a Fraction), its annotations are never evaluated (no typing), and its
    # string enums are its own (no enum, nor the functools, collections and operator it
    # pulls in; decision 16).
    code = (
        "import sys\n"
        "import ctxrelay.budget.bounds, ctxrelay.budget._kinds\n"
        "from ctxrelay.budget._policy import Action, Budget, Stage, evaluate\n"
        "budget = Budget(200_000, 32_000, 60.1, warning_lead=7.5)\n"
        "assert evaluate(budget, 120_200).stage is Stage.HANDOFF\n"
        "assert Budget(200_000, 0, 16) == Budget(200_000, 0, 16.0)\n"
        "assert Action('warn') is Action.WARN and f'{Stage.HANDOFF}' == 'handoff'\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(out.split())
    assert {"ctxrelay.budget._policy", "ctxrelay.budget._kinds"} <= loaded
    heavy = {"dataclasses", "decimal", "fractions", "typing", "inspect"}
    heavy |= {"enum", "functools", "collections", "operator", "warnings"}
    assert not loaded & heavy, sorted(loaded & heavy)
