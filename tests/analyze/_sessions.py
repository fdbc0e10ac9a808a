"""Claude Code transcripts written line by line, as Claude Code writes them: assistant
lines with their usage and tool calls, user lines with the calls' results, compaction
boundaries; for replays whose inputs a test must choose (a file read early and edited
late, a pause, a manual compaction)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2026, 2, 10, 9, 0, tzinfo=UTC)
MODEL = "claude-opus-4-6"


@dataclass
class Session:
    """A main chain being written: each :meth:`request` is one response at ``context``
    tokens (its predecessor read from the cache, the rest written, 1-hour writes)."""

    path: Path
    lines: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    prev: int = 0
    clock: datetime = START
    calls: int = 0
    segment_start: bool = False

    def request(
        self,
        context: int,
        *,
        output: int = 200,
        tools: Sequence[tuple[str, dict[str, Any], str]] = (),
        after: timedelta = timedelta(seconds=20),
        write_all: bool = False,
    ) -> None:
        """One response at ``context`` tokens calling ``tools`` (name, input, result)."""
        self.clock += after
        read = 0 if write_all or self.segment_start else min(self.prev, context - 10)
        written = context - 10 - read
        usage = {
            "input_tokens": 10,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": output,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": written,
            },
        }
        message_id = f"msg_{self.requests:04d}"
        content: list[dict[str, Any]] = [{"type": "text", "text": "working"}]
        results = []
        for name, args, result in tools:
            self.calls += 1
            call = f"toolu_{self.calls:04d}"
            content.append({"type": "tool_use", "id": call, "name": name, "input": args})
            results.append({"type": "tool_result", "tool_use_id": call, "content": result})
        stamp = self.clock.isoformat().replace("+00:00", "Z")
        self.lines.append(
            {
                "type": "assistant",
                "sessionId": "s-ranges",
                "version": "2.1.39",
                "timestamp": stamp,
                "requestId": f"req_{self.requests:04d}",
                "message": {
                    "id": message_id,
                    "model": MODEL,
                    "role": "assistant",
                    "content": content,
                    "usage": usage,
                },
            }
        )
        if results:
            self.lines.append(
                {
                    "type": "user",
                    "sessionId": "s-ranges",
                    "timestamp": stamp,
                    "message": {"role": "user", "content": results},
                }
            )
        self.requests += 1
        self.prev = context
        self.segment_start = False

    def compact(self, pre_tokens: int, trigger: str = "auto") -> None:
        """A compaction boundary and its summary, before the next request."""
        self.lines.append(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "sessionId": "s-ranges",
                "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
                "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
            }
        )
        self.lines.append(
            {
                "type": "user",
                "isCompactSummary": True,
                "sessionId": "s-ranges",
                "message": {"role": "user", "content": "S" * 14_000},
            }
        )
        self.segment_start = True

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # as Claude Code writes its lines (``JSON.stringify``: no spaces)
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)
        self.path.write_text(text)
        return self.path


def file_text(tokens: int) -> str:
    """A Read result of about ``tokens`` tokens (four characters a token)."""
    return "x = 1\n" * (tokens * 4 // 6)
