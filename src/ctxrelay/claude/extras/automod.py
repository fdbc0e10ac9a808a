"""Putting the auto-handoff mod where Claude Code loads it, for the settings install.

The mod is ``plugin/hooks/automod.js``: the hooks module that runs ``/clear`` and submits
the resume prompt when ctxrelay's Stop hook says a handoff is ready
(:mod:`ctxrelay.claude._mod_channel` owns what it is told). The plugin route loads it from
the plugin's own ``hooks/hooks.json``. A settings install has no plugin, so
``ctxrelay claude install`` lays the module out as a plugin of its own in the scope's
skills folder, ``.claude/skills/ctxrelay-automod/`` (or ``~/.claude/skills/`` with
``--user``), which Claude Code loads as a plugin because it holds a
``.claude-plugin/plugin.json``: no marketplace, no flag, no setting.

:func:`files` is what install copies there (install records each file and uninstall
removes it while unchanged, as for the skills and agents it copies), and :func:`status`
says whether it is in place, for ``doctor``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ctxrelay import __version__
from ctxrelay.claude._mod_channel import MIN_VERSION
from ctxrelay.claude.setup._snippet import plugin_dir

__all__ = ["MODULE", "NAME", "AutomodStatus", "files", "module_source", "status"]

NAME = "ctxrelay-automod"
"""The mod's plugin name and its folder under the scope's ``.claude/skills/``."""

MODULE = "automod.js"
"""The hooks module, in the plugin's ``hooks/`` and in the installed mod's."""


def module_source() -> bytes:
    """The hooks module as the package ships it."""
    return (plugin_dir() / "hooks" / MODULE).read_bytes()


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def files() -> list[tuple[str, bytes]]:
    """Each file of the installed mod: its path under the scope's ``.claude/``, its
    content."""
    base = f"skills/{NAME}"
    manifest = {
        "name": NAME,
        "version": __version__,
        "description": (
            "ctxrelay's auto handoff: runs /clear and the resume prompt when ctxrelay's "
            "Stop hook says a handoff file is written (auto mode)"
        ),
        "author": {"name": "The ctxrelay developers"},
        "license": "MIT",
    }
    return [
        (f"{base}/.claude-plugin/plugin.json", _json(manifest)),
        (f"{base}/hooks/hooks.json", _json({"modules": [f"./{MODULE}"]})),
        (f"{base}/hooks/{MODULE}", module_source()),
    ]


@dataclass(frozen=True)
class AutomodStatus:
    """Whether the mod is installed in one ``.claude/`` directory, and as shipped."""

    directory: Path
    installed: bool
    current: bool

    @property
    def sentence(self) -> str:
        if not self.installed:
            return (
                f"The auto-handoff mod is not in {self.directory}: in auto mode you run "
                "/clear yourself ('ctxrelay claude install' puts it there)."
            )
        if not self.current:
            return (
                f"The auto-handoff mod in {self.directory} differs from this ctxrelay's: "
                "run 'ctxrelay claude install' again."
            )
        return (
            f"The auto-handoff mod is in {self.directory}; Claude Code {MIN_VERSION} or "
            "later loads it in a trusted workspace."
        )


def status(claude_dir: Path) -> AutomodStatus:
    """The mod's state under ``claude_dir`` (a project's or the user's ``.claude/``)."""
    shipped = files()
    present = [(claude_dir / rel, content) for rel, content in shipped]
    installed = all(path.is_file() for path, _ in present)
    current = installed and all(path.read_bytes() == content for path, content in present)
    return AutomodStatus(claude_dir / "skills" / NAME, installed, current)
