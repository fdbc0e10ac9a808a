"""Rows to provider messages, rendered incrementally.

A window's rows render to an alternating conversation: ``user``, ``lead_in``,
``warning`` and legacy ``flush`` rows are user text; an ``assistant`` row and the
``tool_call`` rows after it are one assistant message; ``tool_result`` rows are tool
results in the next user message (results first, in call order, then text, as the
Anthropic API requires). ``boundary`` rows close a sealed window and are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ctxrelay.runtime.estimate import message_bytes
from ctxrelay.runtime.model import Message, TextBlock, ToolCall, ToolResultBlock
from ctxrelay.runtime.windows import lead_in_text
from ctxrelay.store import Row

__all__ = ["WindowView", "dump", "render_rows", "render_with_starts", "unseen_rows"]

_TEXT_KINDS = frozenset({"user", "lead_in", "warning", "flush"})


def render_rows(rows: Sequence[Row]) -> list[Message]:
    """The messages of a window, in order."""
    return [message for message, _ in render_with_starts(rows)]


def render_with_starts(rows: Sequence[Row]) -> list[tuple[Message, int]]:
    """The messages of ``rows`` with the index of the first row of each."""
    messages: list[tuple[Message, int]] = []
    results: list[tuple[int, ToolResultBlock]] = []
    texts: list[TextBlock] = []
    order: dict[str, int] = {}
    asst_text: str | None = None
    calls: list[ToolCall] = []
    in_assistant = False
    user_start = -1
    asst_start = -1

    def flush_user() -> None:
        if results or texts:
            blocks = [b for _, b in sorted(results, key=lambda item: item[0])]
            messages.append((Message("user", (*blocks, *texts)), user_start))
            results.clear()
            texts.clear()

    def flush_assistant() -> None:
        nonlocal in_assistant, asst_text
        if in_assistant:
            content = (TextBlock(asst_text),) if asst_text else ()
            messages.append((Message("assistant", content, tuple(calls)), asst_start))
            calls.clear()
            asst_text = None
            in_assistant = False

    for i, row in enumerate(rows):
        kind = row.kind
        if kind == "assistant":
            flush_user()
            flush_assistant()
            in_assistant = True
            asst_start = i
            asst_text = row.text or ""
            order = {}
        elif kind == "tool_call":
            if not in_assistant:  # a torn history: a call without its response row
                flush_user()
                in_assistant = True
                asst_start = i
                asst_text = ""
            call_id = str(row.metadata.get("id", f"row{row.id}"))
            args = row.metadata.get("input")
            if not isinstance(args, dict):
                args = {}
            order[call_id] = len(calls)
            calls.append(ToolCall(call_id, str(row.metadata.get("name", "?")), args))
        elif kind == "tool_result" or kind in _TEXT_KINDS:
            flush_assistant()
            if not results and not texts:
                user_start = i
            if kind == "tool_result":
                call_id = str(row.metadata.get("tool_call_id", ""))
                block = ToolResultBlock(call_id, row.text or "", bool(row.metadata.get("is_error")))
                results.append((order.get(call_id, len(order) + len(results)), block))
            else:
                text = row.text or ""
                if kind == "lead_in":
                    text = lead_in_text(row)
                texts.append(TextBlock(text))
        # boundary rows are not sent
    flush_assistant()
    flush_user()
    return messages


class WindowView:
    """The open window's rows as this process appended or read them, indexed and
    rendered incrementally.

    Only the process holding the session's dispatch lock writes the window, so these
    rows are exactly the durable ones. Rows are append-only, so every message but the
    newest is final: it is rendered and measured once (the newest assistant message is
    re-rendered with the results that follow it, whose order depends on its calls).
    """

    def __init__(self, rows: Sequence[Row] = ()) -> None:
        self.rows: list[Row] = []
        self.last_assistant = -1
        self.flush_at: int | None = None
        self.boundary: Row | None = None
        self.max_context = 0
        self.claims: set[str] = set()
        self._stable: list[Message] = []
        self._stable_bytes = 0
        self._stable_rows = 0
        self.extend(rows)

    def extend(self, rows: Sequence[Row]) -> None:
        for row in rows:
            i = len(self.rows)
            self.rows.append(row)
            kind = row.kind
            if kind == "assistant":
                self.last_assistant = i
                ctx = row.metadata.get("context_tokens")
                if isinstance(ctx, int) and ctx > self.max_context:
                    self.max_context = ctx
            elif kind == "warning":
                stage = row.metadata.get("stage")
                if isinstance(stage, str):
                    self.claims.add(stage)
            elif kind == "flush" and self.flush_at is None:
                self.flush_at = i
            elif kind == "boundary" and self.boundary is None:
                self.boundary = row

    def after_reply(self) -> list[Row]:
        """Rows after the last model response (tool calls, results, input, advisories)."""
        return self.rows[self.last_assistant + 1 :]

    def messages(self, *, without_pending_advisories: bool = False) -> tuple[list[Message], int]:
        """The window's messages and their total size in bytes (``message_bytes``).

        ``without_pending_advisories`` leaves out advisories published after the last
        model response: the request as it was before this dispatch's evaluation."""
        tail_rows: Sequence[Row] = self.rows[self._stable_rows :]
        if without_pending_advisories:
            cut = self.last_assistant + 1 - self._stable_rows
            tail_rows = [r for j, r in enumerate(tail_rows) if j < cut or r.kind != "warning"]
        tail = render_with_starts(tail_rows)
        keep = len(tail) - 1
        if keep >= 1 and tail[keep][0].role == "user" and tail[keep - 1][0].role == "assistant":
            keep -= 1
        if keep > 0 and not without_pending_advisories:
            for message, _ in tail[:keep]:
                self._stable.append(message)
                self._stable_bytes += message_bytes(message)
            self._stable_rows += tail[keep][1]
            tail = tail[keep:]
        messages = [*self._stable, *(m for m, _ in tail)]
        size = self._stable_bytes + sum(message_bytes(m) for m, _ in tail)
        return messages, size


def unseen_rows(rows: Sequence[Row]) -> list[Row]:
    """Rows after the window's last model response: input the model has not seen yet."""
    last = max((i for i, r in enumerate(rows) if r.kind == "assistant"), default=-1)
    return list(rows[last + 1 :])


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
