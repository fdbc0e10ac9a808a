"""The plugin's settings: the main-session handoff mode, the slider and the context
window (``ctxrelay claude config`` shows and sets them, :mod:`ctxrelay.cli.claude.config`).

Three settings, each from the first place that sets it:

1. the environment: ``CTXRELAY_MAIN_HANDOVER`` (``manual``/``auto``/``off``),
   ``CTXRELAY_THRESHOLD`` (percent of the window) and ``CTXRELAY_CONTEXT_WINDOW`` (tokens);
2. the project's ``.ctxrelay/config.json``;
3. the user's ``$XDG_CONFIG_HOME/ctxrelay/config.json`` (``~/.config/ctxrelay/config.json``);
4. the default: mode ``DEFAULT_MAIN_HANDOVER`` and slider ``DEFAULT_THRESHOLD`` from
   :mod:`ctxrelay.budget.bounds`; the window from what the statusline recorded, then the
   model id.

The slider is the policy core's (:func:`ctxrelay.budget.triggers.main_budget`): decimals
allowed, never applied below the 10% floor, 100 = Off (no hint and no handoff; the
usable-limit deny still holds). ``ctxrelay analyze --sweep --apply`` writes it with the
evidence it rests on beside it, under ``"threshold_evidence"``.

The files are JSON with the plugin's settings under ``"claude"``:
``{"claude": {"main_handover": "auto", "threshold": 45, "context_window": 1000000}}``.
The files are every host's (:mod:`ctxrelay.hooks.config`). A bad value
never breaks a hook: it is ignored (the default applies) and ``ctxrelay claude config``
names it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from ctxrelay.budget.bounds import (
    DEFAULT_MAIN_HANDOVER,
    DEFAULT_THRESHOLD,
    MAIN_HANDOVERS,
    MainHandover,
)
from ctxrelay.budget.triggers import main_budget
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.config import (
    Scope,
    config_path,
    parse_threshold,
    read_config,
    slider_text,
    stored_threshold,
    write_section,
)

if TYPE_CHECKING:
    from ctxrelay.budget import Budget

__all__ = [
    "ENV_CONTEXT_WINDOW",
    "ENV_MAIN_HANDOVER",
    "ENV_THRESHOLD",
    "EVIDENCE_KEY",
    "ClaudeConfig",
    "Scope",
    "config_path",
    "load",
    "parse_threshold",
    "project_dir_of",
    "set_threshold",
    "set_value",
]

ENV_MAIN_HANDOVER = "CTXRELAY_MAIN_HANDOVER"
ENV_THRESHOLD = "CTXRELAY_THRESHOLD"
ENV_CONTEXT_WINDOW = "CTXRELAY_CONTEXT_WINDOW"
EVIDENCE_KEY = "threshold_evidence"
"""Beside ``threshold``: what ``ctxrelay analyze --apply`` based it on (a JSON object)."""
_SECTION = "claude"
_KEYS = ("main_handover", "threshold", "context_window")

Source = Literal["env", "project", "user", "default"]


class ClaudeConfig(NamedTuple):
    """The effective settings and where each came from."""

    main_handover: MainHandover
    main_handover_source: Source
    context_window: int | None
    context_window_source: Source
    problems: tuple[str, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    """The slider, percent of the window, as set (the floor applies when it is used)."""
    threshold_source: Source = "default"
    threshold_evidence: dict[str, Any] | None = None
    """What ``ctxrelay analyze --apply`` based the slider on, when it set it."""

    def budget(self, window: int) -> Budget:
        """The main session's budget over ``window`` at this slider: its
        ``handoff_target`` is where the Stop hook hints or hands off (``None`` when Off)."""
        return main_budget(window, self.threshold)

    def slider_text(self) -> str:
        """The slider in words: ``45% of the window``, ``5% of the window (applied as
        10%, the floor)``, or Off and what it still does."""

        return slider_text(
            self.threshold, "100%: no hint, no handoff; tool calls still denied at the usable limit"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "main_handover": self.main_handover,
            "main_handover_source": self.main_handover_source,
            "threshold": self.threshold,
            "threshold_source": self.threshold_source,
            "threshold_evidence": self.threshold_evidence,
            "context_window": self.context_window,
            "context_window_source": self.context_window_source,
            "problems": list(self.problems),
        }


def project_dir_of(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project directory: ``CLAUDE_PROJECT_DIR`` (Claude Code sets it for hooks; a
    ``cd`` inside the session does not move it), else ``cwd``, else the current directory."""
    explicit = os.environ.get("CLAUDE_PROJECT_DIR")
    if explicit and os.path.isabs(explicit):
        return Path(explicit)
    if cwd:
        return Path(cwd)
    return Path.cwd()


def _mode(value: object) -> MainHandover | None:
    if isinstance(value, str) and value.strip().lower() in MAIN_HANDOVERS:
        return cast(MainHandover, value.strip().lower())
    return None


def _window(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip().replace("_", "").replace(",", "")
        if not value.isdigit():
            return None
        value = int(value)
    if isinstance(value, int) and value > 0:
        return value
    return None


def load(project_dir: str | os.PathLike[str] | None = None) -> ClaudeConfig:
    """The effective settings for ``project_dir`` (default: :func:`project_dir_of`);
    never raises (problems are listed)."""
    proj = Path(project_dir) if project_dir is not None else project_dir_of()
    problems: list[str] = []
    layers: list[tuple[Source, dict[str, Any]]] = []
    env: dict[str, Any] = {}
    if ENV_MAIN_HANDOVER in os.environ:
        env["main_handover"] = os.environ[ENV_MAIN_HANDOVER]
    if ENV_THRESHOLD in os.environ:
        env["threshold"] = os.environ[ENV_THRESHOLD]
    if ENV_CONTEXT_WINDOW in os.environ:
        env["context_window"] = os.environ[ENV_CONTEXT_WINDOW]
    layers.append(("env", env))
    for scope in ("project", "user"):
        path = config_path(scope, proj if scope == "project" else None)
        try:
            section = read_config(path).get(_SECTION, {})
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        if not isinstance(section, dict):
            problems.append(f'{path}: "{_SECTION}" must be an object')
            continue
        layers.append((scope, section))

    mode: MainHandover = DEFAULT_MAIN_HANDOVER
    mode_source: Source = "default"
    window: int | None = None
    window_source: Source = "default"
    threshold: float = DEFAULT_THRESHOLD
    threshold_source: Source = "default"
    evidence: dict[str, Any] | None = None
    for source, values in reversed(layers):  # lowest precedence first, later ones win
        if "main_handover" in values:
            found = _mode(values["main_handover"])
            if found is None:
                problems.append(
                    f"main_handover from {source} is {values['main_handover']!r}; "
                    f"expected one of {', '.join(MAIN_HANDOVERS)} (ignored)"
                )
            else:
                mode, mode_source = found, source
        if "threshold" in values:
            slider = parse_threshold(values["threshold"])
            if slider is None:
                problems.append(
                    f"threshold from {source} is {values['threshold']!r}; expected a "
                    "percentage from 0 to 100, or off (ignored)"
                )
            else:
                threshold, threshold_source = slider, source
                found_evidence = values.get(EVIDENCE_KEY)
                evidence = found_evidence if isinstance(found_evidence, dict) else None
        if "context_window" in values:
            found_window = _window(values["context_window"])
            if found_window is None:
                problems.append(
                    f"context_window from {source} is {values['context_window']!r}; "
                    "expected a positive number of tokens (ignored)"
                )
            else:
                window, window_source = found_window, source
    return ClaudeConfig(
        mode,
        mode_source,
        window,
        window_source,
        tuple(problems),
        threshold=threshold,
        threshold_source=threshold_source,
        threshold_evidence=evidence,
    )


def set_value(
    key: str,
    value: str | float | None,
    *,
    scope: Scope = "project",
    project_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Set (or with ``None`` remove) one setting in the ``scope`` file, keeping everything
    else in it; refuses a file it cannot parse. Returns the file's path."""
    if key not in _KEYS:
        raise ConfigError(f"unknown setting {key!r}; one of {', '.join(_KEYS)}")
    stored: object = None
    if value is not None:
        if key == "main_handover":
            stored = _mode(value)
            if stored is None:
                raise ConfigError(
                    f"the mode must be one of {', '.join(MAIN_HANDOVERS)}, not {value!r}"
                )
        elif key == "threshold":
            stored = stored_threshold(value)
        else:
            stored = _window(value)
            if stored is None:
                raise ConfigError(f"the window must be a positive number of tokens, not {value!r}")
    updates: dict[str, object] = {key: stored}
    if key == "threshold":
        updates[EVIDENCE_KEY] = None  # set by hand: the analyzer's evidence no longer holds
    return _write(updates, scope, project_dir)


def set_threshold(
    value: float,
    evidence: dict[str, Any],
    *,
    scope: Scope = "project",
    project_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Set the slider with the ``evidence`` it rests on (``ctxrelay analyze --apply``)."""
    stored = parse_threshold(value)
    if stored is None:
        raise ConfigError(f"the threshold must be a percentage from 0 to 100, not {value!r}")
    number = int(stored) if stored.is_integer() else stored
    return _write({"threshold": number, EVIDENCE_KEY: evidence}, scope, project_dir)


def _write(
    updates: dict[str, object], scope: Scope, project_dir: str | os.PathLike[str] | None
) -> Path:
    """Set (``None``: remove) keys of the ``scope`` file's section, keeping the rest."""
    return write_section(config_path(scope, project_dir), _SECTION, updates)
