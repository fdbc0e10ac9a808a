"""The tool context's defaults come from their one owner; the tools' schemas are what the
models are sent."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import ctxrelay
from ctxrelay.budget import DEFAULT_NOTES_FILE
from ctxrelay.runtime.tools import ToolContext, ToolSet, builtin_tools
from ctxrelay.runtime.tools.coding import coding_tools


def test_the_notes_file_default_is_the_budget_constant() -> None:
    (notes,) = (f for f in dataclasses.fields(ToolContext) if f.name == "notes_file")
    assert notes.default == DEFAULT_NOTES_FILE


def test_no_module_spells_the_notes_file_name_itself() -> None:
    # One owner (ctxrelay.budget); the demo's scripted model writes the file by name, as
    # a real model would after reading the wording.
    package = Path(ctxrelay.__file__).parent
    owners = {package / "budget" / "_wording.py", package / "cli" / "_demo_session.py"}
    spelled = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path not in owners and f'"{DEFAULT_NOTES_FILE}"' in path.read_text("utf-8")
    ]
    assert spelled == []


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


# What every built-in tool's input schema is on the wire, key order included: the
# schemas are built by one helper (``object_schema``), and a change to it must not
# change what the models are sent.
WIRE_SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": {
        "type": "object",
        "properties": {"path": _string("file to read")},
        "required": ["path"],
        "additionalProperties": False,
    },
    "write_file": {
        "type": "object",
        "properties": {
            "path": _string("file to write"),
            "content": _string("the whole new content"),
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "new_context": {"type": "object", "properties": {}, "additionalProperties": False},
    "session_history": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "search", "read"]},
            "query": _string("text to find (search)"),
            "window": {"type": "integer", "description": "window index (read)"},
            "offset": {"type": "integer", "description": "first row, 0-based (read)"},
            "limit": {"type": "integer", "description": "rows to return"},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    "edit_file": {
        "type": "object",
        "properties": {
            "path": _string("file to edit"),
            "old_string": _string("exact text to replace"),
            "new_string": _string("replacement text"),
            "replace_all": {"type": "boolean", "description": "replace every occurrence"},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    "list_files": {
        "type": "object",
        "properties": {
            "path": _string("directory (default: workspace)"),
            "pattern": _string("glob filter"),
        },
        "additionalProperties": False,
    },
    "grep": {
        "type": "object",
        "properties": {
            "pattern": _string("regular expression"),
            "path": _string("file or directory to search"),
            "glob": _string("file name filter, e.g. '*.py'"),
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    "bash": {
        "type": "object",
        "properties": {
            "command": _string("the command line"),
            "timeout_s": {"type": "number", "description": "seconds before it is killed"},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
}


def test_the_tool_schemas_are_what_the_models_are_sent() -> None:
    tools = ToolSet([*builtin_tools(), *coding_tools()])
    assert list(tools.names) == list(WIRE_SCHEMAS)
    for spec in tools.specs():
        assert json.dumps(spec.input_schema) == json.dumps(WIRE_SCHEMAS[spec.name]), spec.name
