"""Driving the real Codex CLI offline: a throwaway ``CODEX_HOME`` whose provider is the
Responses route of ``ctxrelay.testing``'s OpenAI server, a ``git init`` project, and
``codex exec --json`` with stdin closed (the facts: ``docs/codex-facts.md``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import OpenAIServer
from tests.codex._cli import codex_cli

MODEL = "gpt-5.5"
API_KEY_VARIABLE = "CTXRELAY_TEST_CODEX_KEY"


def provider_config(server: OpenAIServer) -> str:
    """A user ``config.toml`` that sends every request to ``server`` (no login needed)."""
    return (
        "# the test's own settings: install and uninstall must leave them as they are\n"
        f'model = "{MODEL}"\n'
        'model_provider = "local"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "\n"
        "[model_providers.local]\n"
        'name = "local"\n'
        f'base_url = "{server.base_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{API_KEY_VARIABLE}"\n'
    )


def codex_home(
    tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """A fresh ``CODEX_HOME`` (set in this process too, for ``ctxrelay codex …``) and a
    git project beside it; ctxrelay's own config and state go under ``tmp_path``."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(provider_config(server), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "ctxrelay-state"))
    monkeypatch.setenv(API_KEY_VARIABLE, "test")
    return home, project


def run_exec(project: Path, prompt: str, *args: str) -> list[dict[str, Any]]:
    """``codex exec --json PROMPT`` in ``project``: its JSON events (it must exit 0)."""
    done = subprocess.run(
        [str(codex_cli()), "exec", "--json", *args, prompt],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def tool_outputs(server: OpenAIServer) -> list[str]:
    """Every ``function_call_output`` the model was sent, in order, once each."""
    seen: dict[str, str] = {}
    for request in server.requests_to("/v1/responses"):
        body = request.body if isinstance(request.body, dict) else {}
        for item in body.get("input") or ():
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item.get("output")
                seen.setdefault(
                    str(item.get("call_id")),
                    output if isinstance(output, str) else json.dumps(output),
                )
    return list(seen.values())
