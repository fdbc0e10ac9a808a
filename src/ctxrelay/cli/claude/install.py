"""``ctxrelay claude install``: merge the hooks and settings into ``settings.json``
(what is merged and copied: :mod:`ctxrelay.claude.setup.install`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxrelay.claude.setup.install import (
    MCP_JSON,
    InstallResult,
    choose_commands,
    install,
    settings_path,
)
from ctxrelay.cli._common import (
    ArgumentParser,
    add_hook_command,
    add_project_dir,
    handle_errors,
    print_json,
)
from ctxrelay.cli._wrap import wrapped

__all__ = ["main", "print_result", "scope_parser", "settings_of"]

_DESCRIPTION = """\
Merge ctxrelay's hooks and settings snippet into Claude Code's settings.json.

examples:
  ctxrelay claude install                          # this project: .claude/settings.json
  ctxrelay claude install --project-dir ../app     # another project
  ctxrelay claude install --user                   # every project: ~/.claude/settings.json

Idempotent; keeps one backup (settings.json.ctxrelay-backup-<time>) of the file as it
found it; refuses a settings file it cannot parse; lists what it changed (a statusline
of yours it replaced, the environment it set). Also copies the plugin's agents and
skills into .claude/agents/ and .claude/skills/ (a file of yours with the same name is
kept); the handoff skill is then /ctxrelay-handoff. A project install names the MCP
server 'ctxrelay' (session_history) in the project's .mcp.json, approved and allowed in
the settings; a user install prints the one command that registers it.

The hooks, the statusline and the skill run the ctxrelay of the environment that runs
install, by absolute path, so they work whatever PATH Claude Code sees; the hook is its
ctxrelay-hook console script (else python -I -m ctxrelay.claude.hook). Install runs each
command on real payloads first (for the hook, one only the guard's shell parser can
judge: the guard extra must be installed here) and fails, changing nothing, when one
does not work. --command and --ctxrelay override them
(e.g. --command ctxrelay-hook --ctxrelay ctxrelay for a settings file shared by people
who each have ctxrelay on PATH)."""


def scope_parser(name: str, description: str) -> ArgumentParser:
    """The options install, uninstall and doctor share: which settings, which project."""
    parser = ArgumentParser(
        prog=f"ctxrelay claude {name}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--project", action="store_true", help="this project (the default)")
    scope.add_argument("--user", action="store_true", help="the user's settings")
    add_project_dir(parser, "--dir")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def settings_of(opts: argparse.Namespace) -> tuple[Path, Path]:
    """The project directory and the settings file the options name."""
    project = (opts.project_dir or Path.cwd()).resolve()
    return project, settings_path("user" if opts.user else "project", project, Path.home())


def print_result(
    result: InstallResult, verb: str, as_json: bool, extra: dict[str, Any] | None = None
) -> None:
    """What install or uninstall changed, in sentences (or one JSON object, with
    ``extra``'s keys)."""
    if as_json:
        print_json({**result.as_json(), **(extra or {})})
        return
    path = result.settings
    lines = [
        f"nothing to do: {path} is already as it should be"
        if not result.changed
        else f"ctxrelay {verb} {path}"
    ]
    if result.backup:
        lines.append(f"backup: {result.backup}")
    lines += [f"added: {path.parent / rel}" for rel in result.files_added]
    lines += [f"removed: {path.parent / rel}" for rel in result.files_removed]
    lines += [f"changed: {line}" for line in result.changes]
    kept = "kept (not ctxrelay's, or changed since install)"
    lines += [f"{kept}: {rel}" for rel in result.files_kept]
    lines += [f"to do: {line}" for line in result.todo]
    sys.stdout.write(wrapped("\n".join(lines)) + "\n")


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = scope_parser("install", _DESCRIPTION)
    add_hook_command(parser)
    parser.add_argument(
        "--ctxrelay",
        metavar="CMD",
        help="the ctxrelay command of the statusline and the handoff skill (default: this "
        "environment's)",
    )
    opts = parser.parse_args(list(argv))
    project, path = settings_of(opts)
    commands = choose_commands(opts.command, opts.ctxrelay)
    result = install(path, commands, mcp_json=None if opts.user else project / MCP_JSON)
    chosen = {"hook": commands.hook, "ctxrelay": commands.ctxrelay}
    print_result(result, "installed into", opts.json, {"commands": chosen})
    if not opts.json:
        sys.stdout.write(wrapped(f"hooks run: {commands.hook}") + "\n")
    return 0
