"""Gemini CLI session files for tests, line for line as the CLI 0.61.0 writes them
(``docs/gemini-facts.md``, "Session file"): a header, ``$set`` patches, user and gemini
records (a gemini record written again once its tool calls finish), and a clear (a new
header and ``$set.messages``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "4a274728-f4ba-4722-8229-a73037545fc4"
MODEL = "gemini-2.5-pro"

TOOL_CALL = {
    "id": "read_file_1764741855559_0",
    "name": "read_file",
    "args": {"file_path": "a.txt"},
    "result": [
        {
            "functionResponse": {
                "id": "read_file_1764741855559_0",
                "name": "read_file",
                "response": {"output": "A-TXT-CONTENT"},
            }
        }
    ],
    "status": "success",
    "timestamp": "2026-12-03T06:04:16.000Z",
    "resultDisplay": "",
    "displayName": "ReadFile",
    "description": "Reads a file",
    "renderOutputAsMarkdown": True,
}
"""A finished tool call as the CLI records it (``recordCompletedToolCalls``, 0.61.0)."""


class SessionFile:
    """A session file built record by record."""

    def __init__(self, session: str = SESSION) -> None:
        self.session = session
        self.lines: list[dict[str, Any]] = []
        self.n = 0
        self.header()

    def _id(self) -> str:
        self.n += 1
        return f"00000000-0000-4000-8000-{self.n:012d}"

    def header(self) -> SessionFile:
        self.lines.append(
            {
                "sessionId": self.session,
                "projectHash": "1c201f59" * 8,
                "startTime": "2026-12-03T06:02:50.458Z",
                "lastUpdated": "2026-12-03T06:02:50.458Z",
                "kind": "main",
            }
        )
        context = {"id": self._id(), "type": "user", "content": [{"text": "<session_context>"}]}
        self.lines.append({"$set": {"messages": [context]}})
        return self

    def user(self, text: str) -> SessionFile:
        record = {"id": self._id(), "timestamp": "2026-12-03T06:03:00.000Z", "type": "user"}
        self.lines.append(record | {"content": [{"text": text}]})
        self.lines.append({"$set": {"lastUpdated": "2026-12-03T06:03:00.000Z"}})
        return self

    def gemini(
        self,
        tokens: int,
        *,
        output: int = 30,
        cached: int = 0,
        thoughts: int = 0,
        model: str = MODEL,
        twice: bool = False,
        said: str = "",
    ) -> SessionFile:
        record = {
            "id": self._id(),
            "timestamp": "2026-12-03T06:04:15.559Z",
            "type": "gemini",
            "content": said,
            "thoughts": [],
            "tokens": {
                "input": tokens,
                "output": output,
                "cached": cached,
                "thoughts": thoughts,
                "tool": 0,
                "total": tokens + output + thoughts,
            },
            "model": model,
        }
        self.lines.append(record)
        if twice:  # written again once its tool calls finished
            self.lines.append(record | {"toolCalls": [TOOL_CALL]})
        return self

    def clear(self) -> SessionFile:
        return self.header()

    def write(self, path: Path) -> Path:
        # compact, as the CLI writes it
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)
        path.write_text(text)
        return path
