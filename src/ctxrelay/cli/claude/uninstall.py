"""``ctxrelay claude uninstall``: remove exactly what install added."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.claude.handoff import HANDOFF_DIR
from ctxrelay.claude.setup.install import uninstall
from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._wrap import wrapped
from ctxrelay.cli.claude.config import OPTION_OF_KEY
from ctxrelay.cli.claude.install import print_result, scope_parser, settings_of
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.config import config_path, read_config

__all__ = ["main"]

_DESCRIPTION = """\
Remove exactly what 'ctxrelay claude install' added, restoring what the
snippet replaced (a value changed since install is kept).

examples:
  ctxrelay claude uninstall                        # this project
  ctxrelay claude uninstall --project-dir ../app   # another project
  ctxrelay claude uninstall --user                 # ~/.claude/settings.json

Settings files you changed after install keep your values; a copied agent or skill you
edited is kept and listed. What ctxrelay keeps besides (the project's .ctxrelay/ with its
handoff files and settings, your own ctxrelay settings) is listed as left."""


def left_behind(project: Path, user: bool) -> list[str]:
    """What uninstall leaves in place, one sentence each: the project's ``.ctxrelay/``
    (handoff files, the settings ``ctxrelay claude config`` wrote) and the user's ctxrelay
    settings for Claude Code, with the settings they hold."""
    out: list[str] = []
    places = [("user", config_path("user"))]
    if not user:
        places.insert(0, ("project", config_path("project", project)))
    for scope, path in places:
        try:
            section = read_config(path).get("claude")
        except ConfigError:
            section = None
        if isinstance(section, dict) and section:
            held = ", ".join(
                f"{OPTION_OF_KEY.get(k, k)} {json.dumps(v)}" for k, v in sorted(section.items())
            )
            out.append(f"{path}: the {scope}'s ctxrelay settings for Claude Code ({held})")
    folder = project / HANDOFF_DIR
    if not user and folder.is_dir():
        count = len(list(folder.glob("handoff-*.md")))
        out.append(f"{folder}: {count} handoff file(s) and their records")
    return out


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("uninstall", _DESCRIPTION).parse_args(list(argv))
    project, path = settings_of(opts)
    left = left_behind(project, opts.user)
    print_result(uninstall(path), "removed from", opts.json, {"left": left})
    if not opts.json:
        lines = [f"left: {line}" for line in left]
        if left:
            lines.append("(ctxrelay's own files: remove them yourself if you want them gone)")
            sys.stdout.write(wrapped("\n".join(lines)) + "\n")
    return 0
