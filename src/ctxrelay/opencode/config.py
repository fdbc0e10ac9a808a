"""The OpenCode host's settings: the slider (``ctxrelay opencode config --threshold``) and
the handoff mode (``--mode manual|auto``).

They live in the same files as the other hosts' (:mod:`ctxrelay.hooks.config`: the
project's ``.ctxrelay/config.json``, then the user's), under their own ``"opencode"`` key:
``{"opencode": {"threshold": 45, "mode": "auto"}}``. The environment's
``CTXRELAY_OPENCODE_THRESHOLD`` comes first, then the project, the user, and the default
slider ``DEFAULT_THRESHOLD``; the mode is ``manual`` unless a file says ``auto``. A bad
value is ignored and named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.config import Scope, config_path, load_slider, stored_threshold, write_section

__all__ = ["ENV_THRESHOLD", "MODES", "SECTION", "OpenCodeConfig", "load", "set_values"]

ENV_THRESHOLD = "CTXRELAY_OPENCODE_THRESHOLD"
SECTION = "opencode"
MODES = ("manual", "auto")
"""``manual``: the person is told at the slider; ``auto``: the agent writes the handoff
file and the work continues from it in a fresh session."""

Source = Literal["env", "project", "user", "default"]


class OpenCodeConfig(NamedTuple):
    threshold: float
    threshold_source: Source
    mode: str
    problems: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        value = int(self.threshold) if self.threshold.is_integer() else self.threshold
        return {
            "threshold": value,
            "threshold_source": self.threshold_source,
            "mode": self.mode,
            "problems": list(self.problems),
        }


def load(project: Path) -> OpenCodeConfig:
    """The effective settings for ``project``; never raises (problems are listed)."""
    slider = load_slider(SECTION, ENV_THRESHOLD, project)
    problems = list(slider.problems)
    mode: str | None = None
    for scope, section in slider.sections:
        raw = section.get("mode")
        if mode is None and raw is not None:
            if raw in MODES:
                mode = str(raw)
            else:
                problems.append(f"mode from {scope} is {raw!r}; expected manual or auto (ignored)")
    return OpenCodeConfig(slider.threshold, slider.source, mode or "manual", tuple(problems))


def set_values(
    scope: Scope, project: Path, *, threshold: str | None = None, mode: str | None = None
) -> Path:
    """Set the slider (``default``: remove it) and/or the mode in the ``scope`` file,
    keeping everything else in it; returns the file's path.
    A bad value is a :class:`ConfigError`."""
    updates: dict[str, object] = {}
    if threshold is not None:  # "default": removed, so the next layer decides
        default = threshold.strip().lower() == "default"
        updates["threshold"] = None if default else stored_threshold(threshold)
    if mode is not None:
        if mode not in MODES:
            raise ConfigError(f"the mode is manual or auto, not {mode!r}")
        updates["mode"] = mode
    path = config_path(scope, project if scope == "project" else None)
    return write_section(path, SECTION, updates)
