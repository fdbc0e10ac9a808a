"""The hooks ``ctxrelay claude install`` and ``ctxrelay codex install`` write from a fresh
venv of this clone, installed the two ways users install it (editable, ``pip install -e
'.[guard]'`` as ``make setup`` does, and from a wheel), judge the commands only the
guard's shell parser can judge: ``cd sub && cat big.txt``, ``cat "big.txt"``. An earlier
start (``python -I -S``) left the venv's ``site-packages``, and so tree-sitter, out, and
those commands printed the whole file. Without the parser, install refuses, loudly.

Each venv is built with pip from this clone (about 15 s each); nothing of the test's own
environment (``PYTHONPATH``, ``PATH``) reaches the commands under test."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import PRINT_BIG_BYTES
from tests.conftest import PROJECT, need

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PARSED = ["cd sub && cat big.txt", 'cat "big.txt"', "cat big.txt; echo done"]
"""Commands the guard judges only with its parser (a ``cd`` and a list, quotes, a list)."""


def _pip_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)


def _build(kind: str, where: Path) -> Path:
    """A venv at ``where`` with ctxrelay and its ``guard`` extra installed ``kind``-wise."""
    venv = where / f"venv-{kind}"
    done = _run([sys.executable, "-m", "venv", str(venv)], timeout=120)
    assert done.returncode == 0, done.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    if kind == "editable":
        argv = [*pip, "-e", f"{PROJECT}[guard]"]
    else:
        wheels = where / "wheels"
        built = _run(
            [*pip[:3], "wheel", "-q", "--no-deps", "-w", str(wheels), str(PROJECT)],
            env=_pip_env(),
            timeout=600,
        )
        if built.returncode != 0:
            need("VENVS", f"pip could not build ctxrelay's wheel: {built.stderr[-500:]}")
        (wheel,) = wheels.glob("ctxrelay-*.whl")
        argv = [*pip, f"{wheel}[guard]"]
    done = _run(argv, env=_pip_env(), timeout=600)
    if done.returncode != 0:
        need("VENVS", f"pip could not install ctxrelay[guard] ({kind}): {done.stderr[-500:]}")
    return venv


@pytest.fixture(scope="module", params=["editable", "wheel"])
def venv(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    kind: str = request.param
    return _build(kind, tmp_path_factory.mktemp(f"venv-{kind}"))


def _env(root: Path) -> dict[str, str]:
    """What a host's hook sees: no venv on PATH, no PYTHONPATH, a home of its own."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root / "home"),
        "CODEX_HOME": str(root / "codex-home"),
        "XDG_CONFIG_HOME": str(root / "xdg"),
        "CTXRELAY_STATE_DIR": str(root / "state"),
    }


def _project(root: Path, size: int) -> Path:
    project = root / "project"
    (project / "sub").mkdir(parents=True)
    big = "".join(f"line {i:05d}\n" for i in range(size // 10 + 1))
    for path in (project / "big.txt", project / "sub" / "big.txt"):
        path.write_text(big, encoding="utf-8")
    (root / "home").mkdir()
    (root / "codex-home").mkdir()
    return project


def _payload(project: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": "01a2331a-0000-7000-8000-0000000e2e01",
            "turn_id": "01a2331a-0000-7000-8000-0000000e2e02",
            "transcript_path": str(project / "none.jsonl"),
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "model": "gpt-5.5",
            "permission_mode": "bypassPermissions",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "show"},
            "tool_use_id": "call_e2e",
        }
    )


def _denied(hook: str, project: Path, env: dict[str, str], command: str) -> bool:
    """``hook`` started as both hosts start one: ``sh -c`` in the project, payload on stdin."""
    done = _run(
        ["/bin/sh", "-c", hook],
        input=_payload(project, command),
        cwd=project,
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, ""), (hook, command)
    answer = json.loads(done.stdout) if done.stdout.strip() else {}
    return bool(answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny")


def _commands(path: Path) -> set[str]:
    hooks = json.loads(path.read_text(encoding="utf-8"))["hooks"]
    return {h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]}


def test_the_installed_hooks_judge_shell_syntax(venv: Path, tmp_path: Path) -> None:
    project = _project(tmp_path, 2 * PRINT_BIG_BYTES)
    env = _env(tmp_path)
    ctxrelay = str(venv / "bin" / "ctxrelay")

    done = _run([ctxrelay, "claude", "install", "--project-dir", str(project)], env=env)
    assert done.returncode == 0, done.stderr
    (claude_hook,) = _commands(project / ".claude" / "settings.json")
    # Codex's trust needs its CLI (tests/e2e/test_codex_install.py): here the hooks are
    # written and the exit is 1 when no codex is found.
    done = _run([ctxrelay, "codex", "install", "--user"], env=env, cwd=project)
    assert done.returncode in (0, 1), done.stderr
    (codex_hook,) = _commands(tmp_path / "codex-home" / "hooks.json")

    for hook in (claude_hook, codex_hook):
        for command in ["cat big.txt", *PARSED]:
            assert _denied(hook, project, env, command), (hook, command)
        words = shlex.split(hook)
        assert Path(words[0]).parent == venv / "bin", hook
        assert "-S" not in words, hook
        assert "sys.path" not in hook
    assert shlex.split(claude_hook) == [str(venv / "bin" / "ctxrelay-hook")]
    assert shlex.split(codex_hook)[1:] == ["-I", "-m", "ctxrelay.codex.hook"]


def test_without_the_parser_install_refuses_and_names_the_interpreter(
    venv: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path, 2 * PRINT_BIG_BYTES)
    env = _env(tmp_path)
    ctxrelay = str(venv / "bin" / "ctxrelay")
    python = str(venv / "bin" / "python")
    done = _run([python, "-m", "pip", "uninstall", "-q", "-y", "tree-sitter-bash"], env=_pip_env())
    assert done.returncode == 0, done.stderr
    try:
        for argv in (
            [ctxrelay, "claude", "install", "--project-dir", str(project)],
            [ctxrelay, "codex", "install", "--user"],
        ):
            done = _run(argv, env=env, cwd=project)
            assert done.returncode == 1, done.stdout
            assert done.stderr.count("\n") == 1, done.stderr
            assert "works only in part, nothing was written" in done.stderr
            assert "the guard cannot parse shell syntax in this environment" in done.stderr
            assert "cd sub && cat big.txt" in done.stderr
            assert " -m pip install " in done.stderr
            assert "tree-sitter-bash" in done.stderr
            assert str(venv / "bin" / "python") in done.stderr  # the interpreter to fix
        assert not (project / ".claude" / "settings.json").exists()
        assert not (tmp_path / "codex-home" / "hooks.json").exists()
    finally:
        done = _run(
            [python, "-m", "pip", "install", "-q", "tree-sitter-bash>=0.23"], env=_pip_env()
        )
        assert done.returncode == 0, done.stderr
