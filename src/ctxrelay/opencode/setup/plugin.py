"""ctxrelay's OpenCode plugin as install writes it: the shipped
``ctxrelay/opencode/plugin/ctxrelay.ts`` with the hook command (its words, absolute: the
plugin runs it without a shell) and the events the host answers filled in."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from importlib import resources

from ctxrelay.errors import ConfigError
from ctxrelay.opencode.host import OPENCODE

__all__ = ["EVENTS_MARK", "HOOK_MARK", "PLUGIN_NAME", "render", "source"]

PLUGIN_NAME = "ctxrelay.ts"
"""The plugin's file name in ``plugin/`` of an OpenCode config folder."""
OPENCODE_VERSION = "1.18.33"
"""The OpenCode the plugin was verified on (``docs/opencode-facts.md``; the pin of
``scripts/opencode/package.json``); install's stub names it when OpenCode's own version
cannot be read."""
HOOK_MARK = "/* ctxrelay:hook */ []"
EVENTS_MARK = "/* ctxrelay:events */ []"


def source() -> str:
    """The shipped plugin, its hook and events still empty (it then forwards nothing)."""
    return (resources.files("ctxrelay.opencode") / "plugin" / PLUGIN_NAME).read_text("utf-8")


def render(command: str, events: Iterable[str] | None = None) -> str:
    """The plugin that runs ``command`` (a shell command line, split into its words) for
    ``events`` (default: every event the host answers)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"the hook command {command!r} cannot be split: {exc}") from None
    if not words:
        raise ConfigError("the hook command is empty")
    names = sorted(OPENCODE.handlers) if events is None else list(events)
    text = source()
    for mark, value in ((HOOK_MARK, words), (EVENTS_MARK, names)):
        if text.count(mark) != 1:
            raise ConfigError(f"the shipped plugin has no single {mark!r}: reinstall ctxrelay")
        text = text.replace(mark, json.dumps(value))
    return text
