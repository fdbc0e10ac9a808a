"""An OpenCode database a test writes itself: the ``session`` and ``message`` tables as
OpenCode 1.18.33 creates them (their DDL, taken from a database it wrote), in WAL mode as
OpenCode keeps it, and rows the test chooses."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = """
CREATE TABLE `session` (
  `id` text PRIMARY KEY,
  `project_id` text NOT NULL,
  `workspace_id` text,
  `parent_id` text,
  `slug` text NOT NULL,
  `directory` text NOT NULL,
  `path` text,
  `title` text NOT NULL,
  `version` text NOT NULL,
  `share_url` text,
  `summary_additions` integer,
  `summary_deletions` integer,
  `summary_files` integer,
  `summary_diffs` text,
  `metadata` text,
  `cost` real DEFAULT 0 NOT NULL,
  `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text,
  `permission` text,
  `agent` text,
  `model` text,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `time_compacting` integer,
  `time_archived` integer
);
CREATE TABLE `message` (
  `id` text PRIMARY KEY,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE TABLE `part` (
  `id` text PRIMARY KEY,
  `message_id` text NOT NULL,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`)
    REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""


def tokens(
    input: int, output: int, *, read: int = 0, write: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    """An assistant message's ``tokens`` as OpenCode writes them."""
    return {
        "total": input + output + reasoning + read + write,
        "input": input,
        "output": output,
        "reasoning": reasoning,
        "cache": {"write": write, "read": read},
    }


def assistant(
    created_ms: int,
    usage: dict[str, Any],
    *,
    model: str = "claude-sonnet-4-5",
    cost: float = 0.0,
    summary: bool = False,
) -> dict[str, Any]:
    """An assistant message's ``data``, with the keys OpenCode 1.18.33 writes."""
    data: dict[str, Any] = {
        "role": "assistant",
        "mode": "compaction" if summary else "build",
        "agent": "compaction" if summary else "build",
        "cost": cost,
        "tokens": usage,
        "modelID": model,
        "providerID": "anthropic",
        "time": {"created": created_ms, "completed": created_ms + 500},
        "finish": "stop",
    }
    if summary:
        data["summary"] = True
    return data


def user(created_ms: int) -> dict[str, Any]:
    return {"role": "user", "time": {"created": created_ms}, "summary": {"diffs": []}}


def create(path: Path) -> sqlite3.Connection:
    """A new database at ``path`` with OpenCode's tables, in WAL mode; the caller closes it."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(SCHEMA)
    return connection


def add_session(
    connection: sqlite3.Connection,
    session_id: str,
    directory: str,
    created_ms: int,
    *,
    parent: str | None = None,
) -> None:
    connection.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
        " time_created, time_updated) VALUES (?, 'global', ?, 'slug', ?, 'A title', '1.18.33',"
        " ?, ?)",
        (session_id, parent, directory, created_ms, created_ms),
    )


def add_message(
    connection: sqlite3.Connection,
    message_id: str,
    session_id: str,
    data: dict[str, Any] | str,
    created_ms: int,
) -> None:
    text = data if isinstance(data, str) else json.dumps(data)
    connection.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data)"
        " VALUES (?, ?, ?, ?, ?)",
        (message_id, session_id, created_ms, created_ms, text),
    )


def add_part(
    connection: sqlite3.Connection,
    part_id: str,
    message_id: str,
    session_id: str,
    data: dict[str, Any],
    *,
    created_ms: int,
) -> None:
    """One ``part`` row: a piece of a message (``text``, ``tool``, ``step-finish``, …)."""
    connection.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (part_id, message_id, session_id, created_ms, created_ms, json.dumps(data)),
    )
