"""Whether the Gemini CLI trusts a folder: its own rule, read, never written (ctxrelay
never trusts a folder for the user). In an untrusted folder the CLI runs no hooks at
all, the user's included, and ignores the project's ``.gemini/settings.json``
(``docs/gemini-facts.md``, "Folder trust").

The CLI's rule (0.61.0): folder trust is on unless the user settings say
``security.folderTrust.enabled: false``; ``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts the
workspace; otherwise the longest rule of ``~/.gemini/trustedFolders.json`` (or
``$GEMINI_CLI_TRUSTED_FOLDERS_PATH``) whose folder holds the project decides:
``TRUST_FOLDER`` (that folder), ``TRUST_PARENT`` (the folder above the rule's path), or
``DO_NOT_TRUST``. No rule: the CLI asks in its trust dialog, and a headless run stops.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from ctxrelay.gemini._state import gemini_dir

__all__ = ["Trust", "folder_trust", "trust_advice", "trusted_folders_path"]

Trust = Literal["trusted", "untrusted", "unknown"]


def trusted_folders_path(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's ``trustedFolders.json``."""
    value = (os.environ if env is None else env).get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return Path(value) if value else gemini_dir(env) / "trustedFolders.json"


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _within(folder: str, project: str) -> bool:
    return project == folder or project.startswith(folder.rstrip(os.sep) + os.sep)


def folder_trust(project: Path, env: Mapping[str, str] | None = None) -> Trust:
    """``trusted``, ``untrusted`` (a ``DO_NOT_TRUST`` rule), or ``unknown`` (no rule:
    the CLI would ask) for ``project``, as the CLI decides it."""
    environ = os.environ if env is None else env
    settings = _json(gemini_dir(env) / "settings.json")
    security = settings.get("security") if isinstance(settings, dict) else None
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return "trusted"
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return "trusted"
    rules = _json(trusted_folders_path(env))
    if not isinstance(rules, dict):
        return "unknown"
    where = os.path.realpath(project)
    best, level = -1, None
    for rule, value in rules.items():
        if not isinstance(rule, str) or value not in (
            "TRUST_FOLDER",
            "TRUST_PARENT",
            "DO_NOT_TRUST",
        ):
            continue
        folder = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        if _within(os.path.realpath(folder), where) and len(rule) > best:
            best, level = len(rule), value
    if level is None:
        return "unknown"
    return "untrusted" if level == "DO_NOT_TRUST" else "trusted"


def trust_advice(project: Path) -> str:
    """The one sentence for a folder the CLI does not trust."""
    return (
        f"the Gemini CLI does not trust {project}, and runs no hooks there (not even the "
        f"user's): start gemini in {project} and choose 'Trust folder' in its trust "
        f"dialog (or /permissions), then run 'ctxrelay gemini install --project-dir "
        f"{project}' again; ctxrelay never trusts a folder for you"
    )
