"""Builders of synthetic Codex rollout lines, shaped like Codex 0.171.0's
(``docs/codex-facts.md``, "The rollout file"): compact JSON, one object per line with
``timestamp``, ``ordinal``, ``type`` and ``payload``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

THREAD = "01a2331a-2f0a-7350-8f86-edf3e917924a"


def usage(
    input_tokens: int, cached: int = 0, output: int = 40, reasoning: int = 8
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": 0,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": input_tokens + output,
    }


class Rollout:
    """A rollout being written: each method appends one line (its ordinal and a
    timestamp a second after the previous line's)."""

    def __init__(
        self,
        thread: str = THREAD,
        *,
        cwd: str = "/home/u/repo",
        parent: str | None = None,
        start: str = "2026-12-01T19:00:00",
        source: str = "exec",
    ) -> None:
        self.thread = thread
        self.lines: list[dict[str, Any]] = []
        self._start = start
        self.thread_total = [0, 0, 0, 0]
        self.window = 258_400
        meta: dict[str, Any] = {
            "session_id": thread,
            "id": thread,
            "timestamp": f"{start}.000Z",
            "cwd": cwd,
            "originator": "codex_exec" if source == "exec" else "codex_cli_rs",
            "cli_version": "0.171.0",
            "source": source,
            "thread_source": "user",
            "model_provider": "local",
            "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5."},
            "git": {},
        }
        if parent is not None:
            meta["parent_thread_id"] = parent
            meta["thread_source"] = "subagent"
            meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent}}}
        self.add("session_meta", meta)

    def _stamp(self) -> str:
        n = len(self.lines)
        hours, rest = divmod(n, 3600)
        minutes, seconds = divmod(rest, 60)
        day = self._start[:11]
        hour = int(self._start[11:13]) + hours
        return f"{day}{hour:02d}:{minutes:02d}:{seconds:02d}.000Z"

    def add(self, kind: str, payload: dict[str, Any]) -> Rollout:
        self.lines.append(
            {
                "timestamp": self._stamp(),
                "ordinal": len(self.lines),
                "type": kind,
                "payload": payload,
            }
        )
        return self

    def turn(
        self, model: str = "gpt-5.5", turn_id: str = "turn-1", window: int = 258_400
    ) -> Rollout:
        self.window = window
        self.add(
            "event_msg",
            {"type": "task_started", "turn_id": turn_id, "model_context_window": window},
        )
        self.add("turn_context", {"turn_id": turn_id, "cwd": "/home/u/repo", "model": model})
        return self.message("user", "do the thing")

    def message(self, role: str, text: str) -> Rollout:
        kind = "input_text" if role == "user" else "output_text"
        return self.add(
            "response_item",
            {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        )

    def response(
        self,
        response_id: str,
        input_tokens: int,
        cached: int = 0,
        output: int = 40,
        reasoning: int = 8,
        *,
        token_count: bool = True,
    ) -> Rollout:
        used = usage(input_tokens, cached, output, reasoning)
        for k, v in enumerate((input_tokens, cached, output, reasoning)):
            self.thread_total[k] += v
        total = usage(*self.thread_total)
        self.message("assistant", f"reply {response_id}")
        self.add(
            "token_usage_record",
            {
                "thread_id": self.thread,
                "turn_id": "turn-1",
                "response_id": response_id,
                "usage": used,
                "turn_token_usage": used,
                "thread_token_usage": total,
            },
        )
        if token_count:
            self.add(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": total,
                        "last_token_usage": used,
                        "last_usage_includes_reasoning": False,
                        "model_context_window": self.window,
                    },
                },
            )
        return self

    def compaction(self, summary: str = "the summary") -> Rollout:
        """A compaction as the TUI's ``/compact`` writes it: a ``compacted`` line (its
        ``latest_token_usage_record`` names the response before it), then a
        ``token_count`` whose ``last_token_usage`` is zeros."""
        self.add(
            "compacted",
            {
                "message": summary,
                "replacement_history": [{"type": "message", "role": "user", "content": []}],
                "latest_token_usage_record": {"response_id": "x", "usage": usage(1, 0, 1, 0)},
            },
        )
        zeros = usage(0, 0, 0, 0)
        zeros["total_tokens"] = 7190
        return self.add(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage(*self.thread_total),
                    "last_token_usage": zeros,
                    "last_usage_includes_reasoning": True,
                    "model_context_window": self.window,
                },
            },
        )

    def data(self, *, tail: bytes = b"") -> bytes:
        return b"".join(dumps(line) + b"\n" for line in self.lines) + tail

    def write(self, path: Path, *, tail: bytes = b"") -> Path:
        path.write_bytes(self.data(tail=tail))
        return path


def dumps(record: Any) -> bytes:
    """One line as Codex writes it (serde_json: no spaces, UTF-8)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def _count(stamp: str, **info: Any) -> dict[str, Any]:
    return {
        "timestamp": stamp,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info},
    }


def _line(stamp: str, kind: str, **payload: Any) -> dict[str, Any]:
    return {"timestamp": f"2025-09-{stamp}Z", "type": kind, "payload": payload}


def _usage5(fresh: int, cached: int, output: int, reasoning: int = 0) -> dict[str, int]:
    return {
        "input_tokens": fresh,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": fresh + output,
    }


CCUSAGE_CASES: dict[str, tuple[str, tuple[int, int, int]]] = {
    "project-1": ("gpt-5", (1_700, 300, 800)),
    "legacy": ("gpt-5", (5_000, 0, 1_000)),
    "compacted": ("gpt-5.4", (40, 2, 8)),
    "codex-alias": ("gpt-5-codex", (40_000, 60_000, 3_000)),
}
"""Each file of :func:`write_ccusage_cases`: its model and its (uncached input, cache
reads, output) as ccusage counts them."""


def write_ccusage_cases(sessions: Path) -> None:
    """The rollouts of ccusage's own Codex loader tests (its ``data-loader.ts``), written
    as its tests write them (``JSON.stringify``: no ``ordinal``, no ``session_meta``, no
    final newline), and the ``gpt-5-codex`` alias its docs name: a first line that is a
    ``turn_context``, a ``token_count`` with a total and no last (what it added counts),
    a legacy rollout that names no model (priced as gpt-5), a 2 MB ``compacted`` first
    line, and a file outside the ``YYYY/MM/DD`` folders."""
    day = sessions / "2025" / "09" / "11"
    day.mkdir(parents=True, exist_ok=True)

    def put(path: Path, *records: dict[str, Any]) -> None:
        path.write_bytes(b"\n".join(dumps(r) for r in records))

    first = _usage5(1_200, 200, 500)
    put(
        sessions / "project-1.jsonl",
        _line("11T18:25:30.000", "turn_context", model="gpt-5"),
        _count(
            "2025-09-11T18:25:40.670Z",
            total_token_usage=first,
            last_token_usage=first,
            model="gpt-5",
        ),
        _line("11T18:40:00.000", "turn_context", model="gpt-5"),
        _count("2025-09-12T00:00:00.000Z", total_token_usage=_usage5(2_000, 300, 800)),
    )
    legacy = _usage5(5_000, 0, 1_000)
    put(day / "legacy.jsonl", _count("2025-09-15T13:00:00.000Z", total_token_usage=legacy))
    put(
        day / "compacted.jsonl",
        _line("15T13:00:00.000", "compacted", replacement_history="x" * 2_000_000),
        _line("15T13:00:10.000", "turn_context", model="gpt-5.4"),
        _count("2025-09-15T13:00:11.000Z", last_token_usage=_usage5(42, 2, 8, 1)),
    )
    alias = _usage5(100_000, 60_000, 3_000, 1_000)
    put(
        day / "codex-alias.jsonl",
        _line("20T10:00:00.000", "turn_context", model="gpt-5-codex"),
        _count("2025-09-20T10:00:05.000Z", total_token_usage=alias, last_token_usage=alias),
    )
