"""The Codex host's settings: the slider (``ctxrelay codex config --threshold``).

They live in the same files as the Claude Code plugin's
(:mod:`ctxrelay.hooks.config`: the project's ``.ctxrelay/config.json``, then the
user's), under their own ``"codex"`` key, so one host's setting never changes
another's: ``{"codex": {"threshold": 45}}``. The environment's
``CTXRELAY_CODEX_THRESHOLD`` comes first, then the project, the user, and the default
slider ``DEFAULT_THRESHOLD``. A value is judged by the policy core
(:func:`ctxrelay.hooks.config.parse_threshold`); a bad one is ignored and named.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxrelay.hooks.config import Scope, config_path, load_slider, stored_threshold, write_section

__all__ = [
    "ENV_THRESHOLD",
    "SECTION",
    "CodexConfig",
    "codex_home",
    "load",
    "project_root",
    "set_threshold",
]

ENV_THRESHOLD = "CTXRELAY_CODEX_THRESHOLD"
SECTION = "codex"

Source = Literal["env", "project", "user", "default"]


@dataclass(frozen=True, slots=True)
class CodexConfig:
    threshold: float
    threshold_source: Source
    problems: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        value = int(self.threshold) if self.threshold.is_integer() else self.threshold
        return {
            "threshold": value,
            "threshold_source": self.threshold_source,
            "problems": list(self.problems),
        }


def project_root(cwd: str | os.PathLike[str]) -> Path:
    """The project a Codex session started in ``cwd`` works in: the nearest folder up
    from ``cwd`` holding ``.git`` (Codex's own project marker: its trust and its project
    layer are the repository root's), else ``cwd``. The slider and the handoff folder
    are that root's, wherever in it Codex was started."""
    start = Path(cwd)
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``: where Codex keeps the user layer."""
    value = (os.environ if env is None else env).get("CODEX_HOME")
    return Path(value) if value else Path.home() / ".codex"


def load(project: Path) -> CodexConfig:
    """The effective slider for ``project``; never raises (problems are listed)."""
    slider = load_slider(SECTION, ENV_THRESHOLD, project)
    return CodexConfig(slider.threshold, slider.source, slider.problems)


def set_threshold(value: str | None, scope: Scope, project: Path) -> Path:
    """Set (``None``: remove) the slider in the ``scope`` file, keeping everything else
    in it; returns the file's path."""
    path = config_path(scope, project if scope == "project" else None)
    stored = None if value is None else stored_threshold(value)
    return write_section(path, SECTION, {"threshold": stored})
