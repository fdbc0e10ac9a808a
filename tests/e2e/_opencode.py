"""Driving the real OpenCode CLI offline (``docs/opencode-facts.md``): a throwaway HOME and
XDG folders, a project whose ``opencode.json`` sends every request to
``ctxrelay.testing``'s OpenAI server, the config folders pre-filled so that OpenCode does
not npm-install its plugin package at start, and ``opencode run`` with stdin closed. It
writes a real ``opencode.db`` under the throwaway data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxrelay.testing import OpenAIServer, Step
from tests.conftest import PROJECT, need

PACKAGE_JSON = PROJECT / "scripts" / "opencode" / "package.json"
PROVIDER = "local"
MODEL = "test-model"
TITLE = "You are a title generator"
"""The start of the system prompt of OpenCode's title request (sent once per session, to
``small_model``; its usage is recorded nowhere)."""


def pinned_version() -> str:
    """The version ``scripts/opencode/package.json`` pins (the one owner of it)."""
    data = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    version: str = data["dependencies"]["opencode-ai"]
    return version


def opencode_cli() -> Path:
    """The OpenCode CLI ``make setup`` installed into ``<venv>/opencode``; skips (fails when
    ``CTXRELAY_REQUIRE_OPENCODE=1``) when it is absent."""
    cli = Path(sys.prefix) / "opencode" / "node_modules" / ".bin" / "opencode"
    if not cli.exists():
        need(
            "OPENCODE", "the pinned OpenCode CLI is not installed (make setup installs it with npm)"
        )
    return cli


def is_title_request(body: Mapping[str, Any]) -> bool:
    """Whether a Chat Completions body is OpenCode's title request."""
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    content = first.get("content") if isinstance(first, dict) else None
    text = content if isinstance(content, str) else json.dumps(content)
    return first.get("role") == "system" and TITLE in text


def title_router(body: Mapping[str, Any]) -> Step | None:
    """Answers the title requests (outside the script); every other request takes the
    script's next step."""
    return (
        Step(text="A title", input_tokens=50, output_tokens=3) if is_title_request(body) else None
    )


def provider_config(server: OpenAIServer) -> dict[str, Any]:
    """A project ``opencode.json`` whose one model is ``server``'s, priced so that OpenCode
    records a cost (per million tokens)."""
    return {
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Local",
                "options": {"baseURL": server.base_url, "apiKey": "test"},
                "models": {
                    MODEL: {
                        "name": "Test Model",
                        "tool_call": True,
                        "limit": {"context": 100_000, "output": 4096},
                        "cost": {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.25},
                    }
                },
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


def prefill(config_dir: Path) -> None:
    """What OpenCode checks before it npm-installs ``@opencode-ai/plugin`` into a config
    folder: ``node_modules/`` and a lock naming every dependency. Offline that install
    fails after a long stall, and a plugin that imports the package is not loaded."""
    dependencies = {"@opencode-ai/plugin": pinned_version()}
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    (config_dir / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


@dataclass(frozen=True)
class OpenCodeHome:
    """A throwaway home for OpenCode and the project it runs in."""

    root: Path
    project: Path
    env: dict[str, str]

    @property
    def database(self) -> Path:
        return Path(self.env["XDG_DATA_HOME"]) / "opencode" / "opencode.db"

    def run(self, prompt: str) -> subprocess.CompletedProcess[str]:
        """``opencode run PROMPT`` in the project, however it ends."""
        return subprocess.run(
            [str(opencode_cli()), "run", prompt],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )


def opencode_home(tmp_path: Path, server: OpenAIServer) -> OpenCodeHome:
    """HOME and the XDG folders under ``tmp_path``, the config folders pre-filled, and a
    project whose ``opencode.json`` points at ``server``."""
    home = tmp_path / "home"
    xdg = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for folder in xdg.values():
        folder.mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "opencode.json").write_text(json.dumps(provider_config(server), indent=2))
    prefill(xdg["XDG_CONFIG_HOME"] / "opencode")
    prefill(project / ".opencode")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        **{key: str(value) for key, value in xdg.items()},
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "TERM": "dumb",
    }
    return OpenCodeHome(tmp_path, project, env)
