"""Gemini CLI session files for tests, line for line as the CLI 0.61.0 writes them
(``docs/gemini-facts.md``, "Session file"): a header, ``$set`` patches, user and gemini
records (a gemini record written again once its tool calls finish, then a user record of
their ``functionResponse`` parts), a clear (a new header and ``$set.messages``), a
``/rewind`` (``$rewindTo``, then ``$set.messages`` with what is left) and the CLI's
compression (``$set.messages``: the context, the summary and its answer, the kept
messages by their ids)."""

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
        self.after_tool = 0
        """The file's length when the newest :meth:`call`'s ``AfterTool`` hook ran."""
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

    def call(self, name: str, args: dict[str, Any], output: str, tokens: int = 4_000) -> str:
        """A model turn that calls ``name`` and its result, as the CLI writes them: the
        gemini record, then (after the call's ``AfterTool`` hook: :attr:`after_tool` is
        the file's length then) the record again with the finished call and the user
        record of the result. Returns that user record's id."""
        self.gemini(tokens)
        call_id = f"{name}__{name}_{1796317036041 + self.n}_0"
        response = {
            "functionResponse": {"id": call_id, "name": name, "response": {"output": output}}
        }
        call = TOOL_CALL | {"id": call_id, "name": name, "args": args, "result": [response]}
        self.after_tool = self.size()
        self.lines.append(self.lines[-1] | {"toolCalls": [call]})
        record = {"id": self._id(), "timestamp": "2026-12-03T06:04:16.957Z", "type": "user"}
        self.lines.append(record | {"content": [response]})
        self.lines.append({"$set": {"lastUpdated": "2026-12-03T06:04:16.957Z"}})
        return str(record["id"])

    def messages(self) -> list[dict[str, Any]]:
        """The conversation now, by the CLI's rules (by id, in first-seen order)."""
        found: dict[str, dict[str, Any]] = {}
        for line in self.lines:
            if "sessionId" in line:
                found.clear()
            elif "$rewindTo" in line:
                ids = list(found)
                for rid in ids[ids.index(line["$rewindTo"]) :] if line["$rewindTo"] in ids else ids:
                    del found[rid]
            elif "messages" in line.get("$set", {}):
                found = {m["id"]: m for m in line["$set"]["messages"]}
            elif "id" in line:
                found[line["id"]] = line
        return list(found.values())

    def rewind(self, to: str) -> SessionFile:
        """``/rewind`` to the user message ``to``: it and every later message go."""
        self.lines.append({"$rewindTo": to})
        kept = [m for m in self.messages() if m["content"] != [{"text": "<session_context>"}]]
        self.lines.append({"$set": {"messages": kept, "lastUpdated": "2026-12-03T06:05:00.000Z"}})
        return self

    def compress(self, keep: int = 0) -> SessionFile:
        """The CLI's compression: the context, the summary and its answer, then the newest
        ``keep`` messages as they were (their ids kept)."""
        now = self.messages()
        kept = now[len(now) - keep :] if keep else []
        summary = {
            "id": self._id(),
            "type": "user",
            "content": [{"text": "<state_snapshot>s</state_snapshot>"}],
        }
        answer = {
            "id": self._id(),
            "type": "gemini",
            "content": [{"text": "Got it. Thanks for the additional context!"}],
        }
        self.lines.append({"$set": {"sessionId": self.session}})
        self.lines.append({"$set": {"messages": [now[0], summary, answer, *kept]}})
        return self

    def size(self) -> int:
        """The file's length in bytes as :meth:`write` writes it now."""
        return len(self.text().encode())

    def text(self) -> str:
        # compact, as the CLI writes it
        return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.write_text(self.text())
        return path
