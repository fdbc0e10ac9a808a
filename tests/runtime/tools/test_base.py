"""The tool context's defaults come from their one owner."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import ctxrelay
from ctxrelay.budget import DEFAULT_NOTES_FILE
from ctxrelay.runtime.tools import ToolContext


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
