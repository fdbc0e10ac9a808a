"""The coding-agent hosts are adapters of one core (``ctxrelay.hooks``): each imports the
core, never another host, and nothing below ``cli/`` imports a host except that host.
A host named here that does not exist, or that imports nothing of the core, fails: the
test would otherwise pin nothing."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import PROJECT

PACKAGE = PROJECT / "src" / "ctxrelay"
HOSTS = ("claude", "codex", "gemini", "opencode")
"""Every coding-agent host package; a new host is added here."""
CORE = "ctxrelay.hooks"


def imported(path: Path) -> set[str]:
    """Every module name ``path`` imports, or names as a string argument of a call
    (``import_module("...")``, a handler table's value)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("ctxrelay.")
            and " " not in node.value
        ):
            names.add(node.value)
    return names


def _hosts_in(names: set[str]) -> set[str]:
    return {
        host
        for host in HOSTS
        for n in names
        if n == f"ctxrelay.{host}" or n.startswith(f"ctxrelay.{host}.")
    }


def test_no_host_imports_another_and_only_the_cli_imports_a_host() -> None:
    offenders: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        top = path.relative_to(PACKAGE).parts[0]
        if top == "cli":
            continue
        found = _hosts_in(imported(path)) - {top}
        if found:
            offenders[str(path.relative_to(PACKAGE))] = sorted(found)
    assert offenders == {}


def test_the_core_imports_no_host() -> None:
    for path in sorted((PACKAGE / "hooks").rglob("*.py")):
        assert _hosts_in(imported(path)) == set(), path


def test_every_host_is_built_on_the_core() -> None:
    for host in HOSTS:
        files = sorted((PACKAGE / host).rglob("*.py"))
        assert files, f"no host package {host}"
        names = set().union(*(imported(p) for p in files))
        assert any(n.startswith(CORE + ".") for n in names), host
