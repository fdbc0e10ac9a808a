"""``ctxrelay claude doctor``: prove each installed command works (the checks
themselves: :mod:`ctxrelay.claude.setup.doctor`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.claude.setup.doctor import MODS_MIN_VERSION, Report, doctor
from ctxrelay.cli._common import ArgumentParser, add_project_dir, console, handle_errors, print_json
from ctxrelay.cli._wrap import wrapped

__all__ = ["main"]

_DESCRIPTION = """\
Prove that Claude Code can run what ctxrelay installed: each hook command, the
statusline and the handoff skill's command found in this project's and your
settings (and the hooks of an enabled ctxrelay plugin) is started as Claude Code
starts it (sh -c, with a real JSON payload): 'cat' of a big file must come back
denied, and bad input must be ignored. The MCP server 'ctxrelay' (session_history) is
started and must list its tool. It reports the hook's latency against a bare Node
start (what every Node-based hook pays at least), the handoff mode and point, the
Claude Code version, and whether that version loads mods.

It exits 0 when everything works, 1 when something is wrong (each problem is one
sentence saying what to do), or when ctxrelay is not installed at all.

examples:
  ctxrelay claude doctor                          # this project
  ctxrelay claude doctor --project-dir ../app     # another project
  ctxrelay claude doctor --json                   # one JSON object, for scripts"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay claude doctor",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_project_dir(parser, "--dir")
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        metavar="N",
        help="runs of each hook to time, the median is shown (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def _show(report: Report) -> None:
    from rich.markup import escape  # noqa: PLC0415 — rich, only for the table
    from rich.table import Table  # noqa: PLC0415 — rich, only for the table

    out = console()  # its sentences hold paths and commands ("ctxrelay[guard]"): escaped

    def say(text: str) -> None:
        """One sentence, wrapped at the terminal's width at spaces only."""
        out.print(escape(wrapped(text, out.width)), soft_wrap=True)

    minimum = ".".join(map(str, MODS_MIN_VERSION))
    if report.claude_version is None:
        say("Claude Code: not found.")
    else:
        loads = "loads mods" if report.mods else f"cannot load mods (they need {minimum})"
        say(f"Claude Code {report.claude_version} ({report.claude_cli}) {loads}.")
    for found in report.installed:
        kind = "as a plugin in" if found.where == "plugin" else f"in the {found.where} settings"
        say(f"ctxrelay is installed {kind} {found.path}.")
    if report.checks:
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("command")
        table.add_column("works")
        table.add_column("ms", justify="right")
        table.add_column("what happened", overflow="fold")  # wrapped at spaces, never cut
        for check in report.checks:
            table.add_row(
                check.kind,
                "yes" if check.ok else "NO",
                "" if check.ms is None else f"{check.ms:.0f}",
                escape(check.detail),
            )
        out.print(table)
        for check in report.checks:
            what = "MCP server" if check.kind == "mcp" else check.kind
            say(f"The {what} runs: {check.command}")
    hook, ratio = report.hook, report.hook_ratio
    if hook is not None and hook.ms is not None and ratio is not None:
        say(
            f"The hook takes {hook.ms:.0f} ms, {ratio:.2f} times a bare Node start "
            f"({hook.node_ms:.0f} ms, what every Node-based hook pays at least) timed "
            "between its runs."
        )
    elif hook is not None and hook.ms is not None:
        say(f"The hook takes {hook.ms:.0f} ms (no node on PATH to compare with).")
    if report.mode:
        where = "the default" if report.mode_source == "default" else f"{report.mode_source}"
        if report.mode_source == "env":
            where = "set by CTXRELAY_MAIN_HANDOVER"
        elif report.mode_source in ("project", "user"):
            where = f"set in the {report.mode_source} config"
        say(f"The handoff mode is {report.mode} ({where}).")
    if report.slider:
        say(f"{report.slider[0].upper()}{report.slider[1:]}.")
    for note in report.notes:
        say(f"Note: {note}.")
    for problem in report.problems:
        say(f"Problem: {problem}.")
    say("Everything works." if report.ok else "Something is wrong: see the problems above.")


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = _parser().parse_args(list(argv))
    project = (opts.project_dir or Path.cwd()).resolve()
    report = doctor(project, Path.home(), runs=max(opts.runs, 1))
    if opts.json:
        print_json(report.as_json())
    else:
        _show(report)
    return 0 if report.ok else 1
