"""Imports run one way: ``cli/`` imports the hosts, and no module outside ``cli/``
imports ``ctxrelay.cli`` — not by an import statement, a relative import, or a
module name handed to ``importlib.import_module``/``__import__`` (the hidden kind of
cycle that no import graph shows). Parsed with ``ast``, so a comment or a docstring
that names the package is no import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ctxrelay"
CLI = "ctxrelay.cli"

# The package's ``python -m ctxrelay`` entry point sits above every layer.
ENTRY_POINTS = {"ctxrelay.__main__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _names_cli(name: str) -> bool:
    return name == CLI or name.startswith(CLI + ".")


def cli_imports(path: Path) -> list[str]:
    """Each place ``path`` imports ``ctxrelay.cli``, as ``line: what``."""
    module = module_name(path)
    # A relative import counts from the package: a module's own, or an __init__ itself.
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = [target, *(f"{target}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                called in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                names = [first.value]
        hits = [n for n in names if _names_cli(n)]
        if hits:
            found.append(f"{getattr(node, 'lineno', 0)}: {hits[0]}")
    return found


def _modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] != "cli" and module_name(p) not in ENTRY_POINTS
    )


@pytest.mark.parametrize("path", _modules(), ids=module_name)
def test_no_module_outside_cli_imports_the_cli(path: Path) -> None:
    assert cli_imports(path) == [], f"{module_name(path)} imports {CLI}"


def test_the_checker_sees_every_kind_of_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check itself, against a module that imports the CLI in each way it can.
    fake_src = tmp_path / "src"
    pkg = fake_src / "ctxrelay" / "claude"
    pkg.mkdir(parents=True)
    bad = pkg / "bad.py"
    bad.write_text(
        "import ctxrelay.cli._common\n"
        "from ctxrelay.cli import main\n"
        "from .. import cli\n"
        "from ..cli._common import error\n"
        "import importlib\n"
        "importlib.import_module('ctxrelay.cli.claude')\n"
        "__import__('ctxrelay.cli')\n"
        "'''ctxrelay.cli in a docstring is no import'''\n"
        "from ctxrelay.claude import hook\n"
    )
    monkeypatch.setattr(f"{__name__}.SRC", fake_src)
    assert [hit.split(":")[0] for hit in cli_imports(bad)] == ["1", "2", "3", "4", "6", "7"]


def test_the_real_tree_is_scanned() -> None:
    names = {module_name(p) for p in _modules()}
    assert {"ctxrelay.claude.setup.install", "ctxrelay.claude.hook", "ctxrelay.budget"} <= names
    assert not any(_names_cli(n) for n in names)
