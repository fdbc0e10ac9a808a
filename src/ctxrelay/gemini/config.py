"""The Gemini host's settings: the slider (``ctxrelay gemini config --threshold``) and
the handoff mode (``--mode manual|auto``).

They live in the same files as the other hosts' (:mod:`ctxrelay.hooks.config`: the
project's ``.ctxrelay/config.json``, then the user's), under their own ``"gemini"`` key:
``{"gemini": {"threshold": 45, "mode": "auto"}}``. The environment's
``CTXRELAY_GEMINI_THRESHOLD`` comes first, then the project, the user, and the default
slider ``DEFAULT_THRESHOLD``; the mode is ``manual`` unless a file says ``auto`` (auto:
the agent writes the handoff file and the ``AfterAgent`` hook clears the context and
continues from it). A bad value is ignored and named.
"""

from __future__ import annotations

from pathlib import Path

from ctxrelay.hooks.config import (
    HANDOFF_MODES,
    HandoffSettings,
    Scope,
    load_handoff_settings,
    set_handoff_settings,
)

__all__ = ["ENV_THRESHOLD", "MODES", "SECTION", "GeminiConfig", "load", "set_values"]

ENV_THRESHOLD = "CTXRELAY_GEMINI_THRESHOLD"
SECTION = "gemini"
MODES = HANDOFF_MODES
GeminiConfig = HandoffSettings


def load(project: Path) -> HandoffSettings:
    """The effective settings for ``project``; never raises (problems are listed)."""
    return load_handoff_settings(SECTION, ENV_THRESHOLD, project)


def set_values(
    scope: Scope, project: Path, *, threshold: str | None = None, mode: str | None = None
) -> Path:
    """Set the slider (``default``: remove it) and/or the mode in the ``scope`` file,
    keeping everything else in it; returns the file's path.
    A bad value is a :class:`~ctxrelay.errors.ConfigError`."""
    return set_handoff_settings(SECTION, scope, project, threshold=threshold, mode=mode)
