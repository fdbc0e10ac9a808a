"""The files every host's settings live in, each host under its own key: the project's
``.ctxrelay/config.json``, then the user's ``$XDG_CONFIG_HOME/ctxrelay/config.json``
(``~/.config/ctxrelay/config.json``), e.g.
``{"claude": {"threshold": 45}, "codex": {"threshold": 60}}``, so one host's setting
never changes another's. What a host reads from its section is the host's
(``ctxrelay.claude.config``, ``ctxrelay.codex.config``, ``ctxrelay.gemini.config``); the
slider's layers (environment, project, user, default) are read once here
(:func:`load_slider`), its values are the policy core's to judge (:func:`parse_threshold`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ctxrelay.budget import OFF_THRESHOLD, BudgetValueError
from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW, DEFAULT_THRESHOLD
from ctxrelay.budget.triggers import main_budget
from ctxrelay.errors import ConfigError

__all__ = [
    "HANDOFF_MODES",
    "HandoffSettings",
    "Scope",
    "Slider",
    "config_path",
    "load_handoff_settings",
    "load_slider",
    "parse_threshold",
    "read_config",
    "set_handoff_settings",
    "slider_text",
    "stored_threshold",
    "write_section",
]

Scope = Literal["project", "user"]


def config_path(scope: Scope, project_dir: str | os.PathLike[str] | None = None) -> Path:
    """The config file of ``scope`` (the project's: of ``project_dir``, else the current
    directory)."""
    if scope == "project":
        return Path(project_dir if project_dir is not None else Path.cwd()) / (
            ".ctxrelay/config.json"
        )
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "ctxrelay" / "config.json"


def read_config(path: Path) -> dict[str, Any]:
    """The whole JSON document; ``{}`` when absent. Raises ConfigError when unparseable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(f"the config file {path} is not valid JSON; fix or remove it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the config file {path} must hold a JSON object")
    return data


def write_section(path: Path, section: str, updates: dict[str, object]) -> Path:
    """Set (``None``: remove) keys of one host's ``section`` of the file at ``path``,
    keeping everything else in it (a section left empty goes); refuses a file it cannot
    parse. Replaces the file atomically; returns ``path``."""
    data = read_config(path)
    found = data.get(section, {})
    if not isinstance(found, dict):
        raise ConfigError(f'{path}: "{section}" must be an object; fix it first')
    for key, stored in updates.items():
        if stored is None:
            found.pop(key, None)
        else:
            found[key] = stored
    if found:
        data[section] = found
    else:
        data.pop(section, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def parse_threshold(value: object) -> float | None:
    """A slider value (a number, or text such as ``45``, ``62.5``, ``45%`` or ``off``) as
    the policy core accepts it, else ``None``. The range is the core's to judge."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().lower().removesuffix("%").strip()
        if text == "off":
            return float(OFF_THRESHOLD)
        try:
            value = float(text)
        except ValueError:
            return None
    if not isinstance(value, int | float):
        return None
    try:
        main_budget(DEFAULT_CONTEXT_WINDOW, value)
    except BudgetValueError:
        return None
    return float(value)


def stored_threshold(value: object) -> int | float:
    """A slider value as a config file stores it (``45``, ``62.5``); raises
    :class:`~ctxrelay.errors.ConfigError` naming the range for anything else."""
    slider = parse_threshold(value)
    if slider is None:
        raise ConfigError(
            f"the threshold must be a percentage from 0 to 100 (100 or off = Off), not {value!r}"
        )
    return int(slider) if slider.is_integer() else slider


class Slider(NamedTuple):
    """A host's effective slider, where it came from, its sections as read (project
    first, then user: what else the host keeps there), and the problems met."""

    threshold: float
    source: Literal["env", "project", "user", "default"]
    sections: tuple[tuple[Scope, dict[str, Any]], ...]
    problems: tuple[str, ...]


def load_slider(section: str, env_name: str, project: Path) -> Slider:
    """A host's slider: ``env_name`` in the environment first, then the ``section`` of
    the project's file, the user's, and the default slider; a bad value or file is
    ignored and named in ``problems``. Never raises."""
    problems: list[str] = []
    layers: list[tuple[Literal["env", "project", "user"], object]] = []
    found: list[tuple[Scope, dict[str, Any]]] = []
    if env_name in os.environ:
        layers.append(("env", os.environ[env_name]))
    scopes: tuple[Scope, ...] = ("project", "user")
    for scope in scopes:
        path = config_path(scope, project if scope == "project" else None)
        try:
            value = read_config(path).get(section, {})
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        if not isinstance(value, dict):
            continue
        found.append((scope, value))
        if "threshold" in value:
            layers.append((scope, value["threshold"]))
    for source, raw in layers:
        slider = parse_threshold(raw)
        if slider is not None:
            return Slider(slider, source, tuple(found), tuple(problems))
        problems.append(
            f"threshold from {source} is {raw!r}; expected a percentage from 0 to 100, or "
            "off (ignored)"
        )
    return Slider(float(DEFAULT_THRESHOLD), "default", tuple(found), tuple(problems))


def slider_text(threshold: float, off: str) -> str:
    """The slider as it is applied, in words: ``45% of the window``, ``5% of the window
    (applied as 10%, the floor)``, or ``off`` with ``off`` saying what Off still does on
    the host; never Off as "100%"."""
    budget = main_budget(DEFAULT_CONTEXT_WINDOW, threshold)
    if budget.off:
        return f"off ({off})"
    shown = f"{threshold:g}% of the window"
    if budget.effective_threshold != threshold:
        shown += f" (applied as {budget.effective_threshold:g}%, the floor)"
    return shown


HANDOFF_MODES = ("manual", "auto")
"""``manual``: the person is told at the slider; ``auto``: the agent writes the handoff
file and the work continues from it in a fresh context by itself."""


class HandoffSettings(NamedTuple):
    """A host's slider and handoff mode, where the slider came from, and the problems
    met (the settings of a host with both: the Gemini CLI, OpenCode)."""

    threshold: float
    threshold_source: Literal["env", "project", "user", "default"]
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


def load_handoff_settings(section: str, env_name: str, project: Path) -> HandoffSettings:
    """The ``section`` host's effective slider (:func:`load_slider`) and mode (the
    project's, else the user's, else ``manual``); never raises (problems are listed)."""
    slider = load_slider(section, env_name, project)
    problems = list(slider.problems)
    mode: str | None = None
    for scope, found in slider.sections:
        raw = found.get("mode")
        if mode is None and raw is not None:
            if raw in HANDOFF_MODES:
                mode = str(raw)
            else:
                problems.append(f"mode from {scope} is {raw!r}; expected manual or auto (ignored)")
    return HandoffSettings(slider.threshold, slider.source, mode or "manual", tuple(problems))


def set_handoff_settings(
    section: str,
    scope: Scope,
    project: Path,
    *,
    threshold: str | None = None,
    mode: str | None = None,
) -> Path:
    """Set the ``section`` host's slider (``default``: remove it, so the next layer
    decides) and/or mode in the ``scope`` file, keeping everything else in it; returns
    the file's path. A bad value is a :class:`ConfigError`."""
    updates: dict[str, object] = {}
    if threshold is not None:
        default = threshold.strip().lower() == "default"
        updates["threshold"] = None if default else stored_threshold(threshold)
    if mode is not None:
        if mode not in HANDOFF_MODES:
            raise ConfigError(f"the mode is manual or auto, not {mode!r}")
        updates["mode"] = mode
    path = config_path(scope, project if scope == "project" else None)
    return write_section(path, section, updates)
