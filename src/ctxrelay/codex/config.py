"""The Codex host's settings: the slider (``ctxrelay codex config --threshold``).

They live in the same files as the Claude Code plugin's
(:func:`ctxrelay.claude.config.config_path`: the project's ``.ctxrelay/config.json``,
then the user's), under their own ``"codex"`` key, so one host's setting never changes
the other's: ``{"codex": {"threshold": 45}}``. The environment's
``CTXRELAY_CODEX_THRESHOLD`` comes first, then the project, the user, and the default
slider ``DEFAULT_THRESHOLD``. A value is judged by the policy core
(:func:`ctxrelay.claude.config.parse_threshold`); a bad one is ignored and named.
Stdlib only: the handoff hooks read it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD
from ctxrelay.claude.config import Scope, config_path, parse_threshold
from ctxrelay.errors import ConfigError

__all__ = ["ENV_THRESHOLD", "SECTION", "CodexConfig", "codex_home", "load", "set_threshold"]

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


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``: where Codex keeps the user layer."""
    value = (os.environ if env is None else env).get("CODEX_HOME")
    return Path(value) if value else Path.home() / ".codex"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        raise ConfigError(f"the config file {path} is not valid JSON; fix or remove it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the config file {path} must hold a JSON object")
    return data


def load(project: Path) -> CodexConfig:
    """The effective slider for ``project``; never raises (problems are listed)."""
    problems: list[str] = []
    layers: list[tuple[Source, object]] = []
    if ENV_THRESHOLD in os.environ:
        layers.append(("env", os.environ[ENV_THRESHOLD]))
    for scope in ("project", "user"):
        path = config_path(scope, project if scope == "project" else None)
        try:
            section = _read(path).get(SECTION, {})
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        if isinstance(section, dict) and "threshold" in section:
            layers.append((scope, section["threshold"]))
    for source, raw in layers:
        slider = parse_threshold(raw)
        if slider is not None:
            return CodexConfig(slider, source, tuple(problems))
        problems.append(
            f"threshold from {source} is {raw!r}; expected a percentage from 0 to 100, or "
            "off (ignored)"
        )
    return CodexConfig(float(DEFAULT_THRESHOLD), "default", tuple(problems))


def set_threshold(value: str | None, scope: Scope, project: Path) -> Path:
    """Set (``None``: remove) the slider in the ``scope`` file, keeping everything else
    in it; returns the file's path."""
    path = config_path(scope, project if scope == "project" else None)
    data = _read(path)
    section = data.get(SECTION)
    section = dict(section) if isinstance(section, dict) else {}
    if value is None:
        section.pop("threshold", None)
    else:
        slider = parse_threshold(value)
        if slider is None:
            raise ConfigError(
                "the threshold must be a percentage from 0 to 100 (100 or off = Off), "
                f"not {value!r}"
            )
        section["threshold"] = int(slider) if slider.is_integer() else slider
    if section:
        data[SECTION] = section
    else:
        data.pop(SECTION, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
