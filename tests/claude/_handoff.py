"""Helpers of the main-session handoff tests: an isolated environment, and transcripts
written line by line the way Claude Code 2.1.x writes them."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude import hook

SESSION = "5f0c7a2e-1111-4222-8333-944455556666"


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """State, config and project in ``tmp_path``; no ctxrelay settings from outside.
    Returns the project directory."""
    for var in (
        "CTXRELAY_MAIN_HANDOVER",
        "CTXRELAY_THRESHOLD",
        "CTXRELAY_CONTEXT_WINDOW",
        "CLAUDE_PROJECT_DIR",
        "XDG_STATE_HOME",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    return project


class Transcript:
    """A main-session transcript file built turn by turn."""

    def __init__(self, path: Path, model: str = "claude-sonnet-4-5") -> None:
        self.path = path
        self.model = model
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _write(self, record: dict[str, Any]) -> None:
        record.setdefault("uuid", str(uuid.uuid4()))
        record.setdefault("sessionId", SESSION)
        record.setdefault("isSidechain", False)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")

    def prompt(self, text: str) -> None:
        self._write({"type": "user", "message": {"role": "user", "content": text}})

    def context(self, text: str) -> None:
        """The line Claude Code 2.1.332 writes when a Stop hook answers
        ``additionalContext`` (the turn goes on; no user message)."""
        self._write(
            {
                "type": "attachment",
                "attachment": {
                    "type": "hook_additional_context",
                    "content": [text],
                    "hookName": "Stop",
                    "hookEvent": "Stop",
                },
            }
        )

    def feedback(self, text: str) -> None:
        """The user message Claude Code adds when a Stop hook blocks."""
        self._write(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": f"Stop hook feedback:\n{text}"}],
                },
            }
        )

    def assistant(
        self,
        *,
        context: int,
        text: str | None = None,
        tools: list[tuple[str, dict[str, Any]]] | None = None,
        errors: frozenset[int] = frozenset(),
        sidechain: bool = False,
    ) -> None:
        """One response (written, like Claude Code does, as one line per block sharing the
        message id) and the tool results of its calls (``errors``: indexes that failed)."""
        message_id = f"msg_{uuid.uuid4().hex[:20]}"
        usage = {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": context - 10,
            "output_tokens": 5,
        }
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        ids = []
        for name, payload in tools or []:
            call_id = f"toolu_{uuid.uuid4().hex[:20]}"
            ids.append(call_id)
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": payload})
        for block in blocks:
            self._write(
                {
                    "type": "assistant",
                    "isSidechain": sidechain,
                    "message": {
                        "id": message_id,
                        "role": "assistant",
                        "model": self.model,
                        "content": [block],
                        "usage": usage,
                    },
                }
            )
        for i, call_id in enumerate(ids):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": "ok",
            }
            if i in errors:
                result["is_error"] = True
                result["content"] = "<tool_use_error>Error</tool_use_error>"
            self._write(
                {
                    "type": "user",
                    "isSidechain": sidechain,
                    "message": {"role": "user", "content": [result]},
                }
            )


def continued(answer: Mapping[str, Any] | None) -> str | None:
    """The text a Stop answer makes the turn go on with (its ``additionalContext``), or
    ``None`` when the turn ends; never the old ``decision: block``."""
    if answer is None:
        return None
    assert "decision" not in answer  # drawn as a problem, with the command line
    extra = answer.get("hookSpecificOutput")
    if not isinstance(extra, dict):
        return None
    assert extra["hookEventName"] == "Stop"
    text = extra.get("additionalContext")
    return text if isinstance(text, str) else None


def run_hook(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Answer one payload through the real hook entry; ``None`` when it prints nothing."""
    out = io.StringIO()
    code = hook.main(io.StringIO(json.dumps(payload)), out)
    assert code == 0
    text = out.getvalue()
    return json.loads(text) if text else None


def stop_payload(transcript: Transcript, project: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript.path),
        "cwd": str(project),
        "permission_mode": "bypassPermissions",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "done",
        **extra,
    }
