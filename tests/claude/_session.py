"""A Claude Code session laid out on disk as 2.1.x writes it (main transcript, and
``<session>/subagents/agent-<id>.jsonl`` beside it), with lines shaped like the real
capture in the shared ``corpora/claude-code-capture``, and hook payloads to match."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

from ctxrelay.claude import hook

SESSION_ID = "505a7478-0c09-4225-8c2e-eb227889cf62"


def run_hook(payload: dict[str, Any] | str) -> dict[str, Any] | None:
    """Run the real hook entry in-process; its parsed stdout (None when empty)."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    out = io.StringIO()
    assert hook.main(io.StringIO(text), out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def note_of(answer: dict[str, Any] | None) -> str | None:
    if answer is None:
        return None
    return str(answer["hookSpecificOutput"]["additionalContext"])


class Session:
    def __init__(self, root: Path, session_id: str = SESSION_ID) -> None:
        self.session_id = session_id
        self.dir = root / "projects" / "-home-user-project"
        self.dir.mkdir(parents=True)
        self.transcript = self.dir / f"{session_id}.jsonl"
        self.transcript.write_text("")

    def agent_file(self, agent_id: str) -> Path:
        return self.dir / self.session_id / "subagents" / f"agent-{agent_id}.jsonl"

    def start_agent(self, agent_id: str, agent_type: str, prompt: str = "look") -> Path:
        path = self.agent_file(agent_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        first = {
            "parentUuid": None,
            "isSidechain": True,
            "agentId": agent_id,
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "uuid": str(uuid.uuid4()),
            "sessionId": self.session_id,
            "version": "2.1.332",
        }
        path.write_text(json.dumps(first) + "\n")
        meta = path.with_name(f"agent-{agent_id}.meta.json")
        meta.write_text(json.dumps({"agentType": agent_type, "description": "job"}))
        return path

    def respond(
        self,
        agent_id: str,
        context: int,
        *,
        tool: str | None = "Bash",
        model: str = "claude-opus-4-8",
        blocks: int = 1,
        call: str = "toolu_0",
    ) -> str:
        """Append one model response (one line per content block, as Claude Code writes
        them) and, for a tool call, its result. Returns the message id."""
        message_id = f"msg_{uuid.uuid4().hex[:16]}"
        lines = []
        for i in range(blocks):
            if tool is not None:
                block_id = call if i == 0 else f"toolu_{i}"
                content = [{"type": "tool_use", "id": block_id, "name": tool, "input": {}}]
            else:
                content = [{"type": "text", "text": "Subagent report: done."}]
            lines.append(
                {
                    "isSidechain": True,
                    "agentId": agent_id,
                    "type": "assistant",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": content,
                        "stop_reason": "tool_use" if tool else "end_turn",
                        "usage": {
                            "input_tokens": 5,
                            "cache_creation_input_tokens": 500,
                            "cache_read_input_tokens": context - 505,
                            "output_tokens": 5 + i,
                        },
                    },
                    "uuid": str(uuid.uuid4()),
                    "sessionId": self.session_id,
                }
            )
        if tool is not None:
            lines.append(
                {
                    "isSidechain": True,
                    "agentId": agent_id,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"tool_use_id": call, "type": "tool_result", "content": "ok"}],
                    },
                }
            )
        with self.agent_file(agent_id).open("a") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        return message_id

    def payload(
        self, event: str, agent_id: str | None = None, agent_type: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        p: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": "/home/user/project",
            "prompt_id": "6c94c9d2-58bc-4a4b-ba05-624663cd4799",
            "permission_mode": "bypassPermissions",
            "hook_event_name": event,
        }
        if agent_id is not None:
            p["agent_id"] = agent_id
            p["agent_type"] = agent_type
        p.update(extra)
        return p

    def post_tool(self, agent_id: str, agent_type: str) -> dict[str, Any] | None:
        return run_hook(
            self.payload(
                "PostToolUse",
                agent_id,
                agent_type,
                tool_name="Bash",
                tool_input={"command": "ls", "description": "list"},
                tool_response={"stdout": "a", "stderr": "", "interrupted": False},
                tool_use_id="toolu_0",
            )
        )
