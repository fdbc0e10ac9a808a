"""``ctxrelay handoff``: the project's handoff files across agents: list them, show one,
drop one, or continue from one in the agent of your choice (the files and records
themselves: :mod:`ctxrelay.hooks.handoff`, :mod:`ctxrelay.hooks.chain`)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ctxrelay.claude.config import project_dir_of
from ctxrelay.claude.setup import binary as claude_binary
from ctxrelay.cli._common import ArgumentParser, console, error, handle_errors, print_json
from ctxrelay.codex.setup import binary as codex_binary
from ctxrelay.gemini.setup import binary as gemini_binary
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as files
from ctxrelay.opencode.setup import binary as opencode_binary

__all__ = ["AGENTS", "Agent", "main"]


class Agent(NamedTuple):
    """An agent ``continue`` can start: where its CLI is and how it takes a first prompt."""

    cli: Callable[[], Path | None]
    interactive: Callable[[str, str], list[str]]
    """The command line of its interactive UI, given the CLI and the first prompt."""
    printed: Callable[[str, str], list[str]]
    """The command line of a headless run that prints the answer (``--print``)."""


AGENTS: dict[str, Agent] = {
    "claude": Agent(
        claude_binary.cli_path,
        lambda cli, prompt: [cli, prompt],
        lambda cli, prompt: [cli, "-p", prompt],
    ),
    "codex": Agent(
        codex_binary.cli_path,
        lambda cli, prompt: [cli, prompt],
        lambda cli, prompt: [cli, "exec", prompt],
    ),
    "gemini": Agent(
        gemini_binary.cli_path,
        lambda cli, prompt: [cli, prompt],
        lambda cli, prompt: [cli, "-p", prompt],
    ),
    "opencode": Agent(
        opencode_binary.cli_path,
        lambda cli, prompt: [cli, "--prompt", prompt],
        lambda cli, prompt: [cli, "run", prompt],
    ),
}
"""The agents by their host's name (the names of :data:`ctxrelay.hooks.chain.AGENTS`);
another host is one entry."""

_DESCRIPTION = """\
The project's handoff files (.ctxrelay/handoff/), whichever agent wrote them: Claude Code,
Codex, the Gemini CLI and OpenCode share one chain of handoffs, recorded beside the files
in chain.json.

  list        each handoff: who wrote it (agent and session), its age, whether a session
              started from it (and which), holds it now, or it is waiting
  show        one handoff (default: the newest) with its records, and its text
  drop        set one aside (default: the newest waiting): no start offers it again
  continue    start an agent with the handoff as its first prompt
              (--in claude|codex|gemini|opencode); its start hook gives it the file and
              records the link, and its first request or response uses it up.
              Interactive, or headless with --print (claude -p, codex exec, gemini -p,
              opencode run). Any handoff no session has started from, yours or not,
              whatever its age.

examples:
  ctxrelay handoff list
  ctxrelay handoff show --json
  ctxrelay handoff continue --in codex
  ctxrelay handoff continue handoff-20261203T101500Z.md --in claude --print
  ctxrelay handoff drop
"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay handoff",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=("list", "show", "drop", "continue"))
    parser.add_argument("name", nargs="?", help="the handoff file's name (default: see above)")
    parser.add_argument("--in", dest="agent", choices=tuple(AGENTS), help="continue in this agent")
    parser.add_argument(
        "--print", action="store_true", help="continue headless and print the answer"
    )
    parser.add_argument("--project-dir", metavar="DIR", help="the project (default: .)")
    parser.add_argument("--json", action="store_true", help="print only JSON (list, show)")
    return parser


def _link(link: chain.ChainLink | None) -> dict[str, str] | None:
    return None if link is None else link.to_json() | {"agent": chain.agent(link.host)}


def _status(info: files.HandoffInfo) -> str:
    if info.dropped:
        return "dropped"
    if info.started is not None:
        return f"used by {chain.describe(info.started)}"
    if info.used:
        return "used"
    if info.holders:
        return f"given to {chain.describe(info.holders[-1])}, not started yet"
    return "waiting"


def _record(info: files.HandoffInfo, now: float) -> dict[str, Any]:
    return {
        "name": info.path.name,
        "path": str(info.path),
        "bytes": info.bytes,
        "age_s": max(0, round(now - info.mtime)),
        "writer": _link(info.writer),
        "started": _link(info.started),
        "status": _status(info),
        "used": info.used,
        "dropped": info.dropped,
        "holders": [_link(x) for x in info.holders],
        "yours": info.mine,
    }


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 129_600:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86_400:.0f} days"


def _writer(info: files.HandoffInfo) -> str:
    return "unknown" if info.writer is None else chain.describe(info.writer)


def _pick(
    infos: list[files.HandoffInfo], name: str | None, *, waiting: bool
) -> files.HandoffInfo | None:
    """The handoff named (by file name or path), else the newest (``waiting``: the newest
    no session has started from or holds)."""
    if name is not None:
        wanted = os.path.basename(name)
        for info in infos:
            if info.path.name == wanted:
                return info
        return None
    pool = [x for x in infos if not x.used and not x.holders] if waiting else infos
    return pool[-1] if pool else None


def _continue(project: Path, info: files.HandoffInfo, agent_name: str, printed: bool) -> int:
    if info.used:
        return error(f"{info.path.name} is {_status(info)}: no session continues from it again")
    if info.holders:
        return error(f"{info.path.name} is {_status(info)}, which still runs; it continues from it")
    agent = AGENTS[agent_name]
    cli = agent.cli()
    if cli is None:
        return error(f"{chain.agent(agent_name)} is not installed (no {agent_name} on PATH)")
    prompt = files.continue_text(info.path)
    argv = (agent.printed if printed else agent.interactive)(str(cli), prompt)
    env = {**os.environ, files.RESUME_ENV: str(info.path)}
    done = subprocess.run(argv, cwd=project, env=env, check=False)
    return done.returncode


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    project = (Path(args.project_dir) if args.project_dir else project_dir_of()).resolve()
    infos = files.describe(project)
    now = time.time()
    if args.action == "list":
        if args.json:
            print_json([_record(x, now) for x in infos])
            return 0
        if not infos:
            sys.stdout.write(f"No handoff files in {files.handoff_dir(project)}.\n")
            return 0
        from rich.table import Table  # noqa: PLC0415 — rich: --json never draws

        table = Table(box=None, pad_edge=False)
        for column in ("handoff", "written by", "age", "status"):
            table.add_column(column, overflow="fold")
        for row in infos:
            table.add_row(row.path.name, _writer(row), _age(now - row.mtime), _status(row))
        console().print(table)
        return 0
    if args.action == "continue" and args.agent is None:
        return error("continue needs --in " + "|".join(AGENTS))
    picked = _pick(infos, args.name, waiting=args.action != "show")
    if picked is None:
        if args.name is not None:
            what = f"handoff {os.path.basename(args.name)}"
        elif args.action == "show":
            what = "handoff file"
        else:
            what = "handoff that no session has started from or holds"
        return error(f"no {what} in {files.handoff_dir(project)}")
    info = picked
    if args.action == "show":
        found = files.read_handoff(info.path, max_bytes=1 << 20)
        text = "" if found is None else found.text
        if args.json:
            print_json(_record(info, now) | {"text": text})
            return 0
        sys.stdout.write(
            f"{info.path}\nwritten by {_writer(info)}, {_age(now - info.mtime)} ago; "
            f"{_status(info)}\n\n{text.rstrip()}\n"
        )
        return 0
    if args.action == "drop":
        if not files.drop(project, info.path):
            return error(f"{info.path.name} is {_status(info)} already")
        if args.json:
            print_json({"dropped": str(info.path)})
        else:
            sys.stdout.write(f"Dropped {info.path.name}: no session will be offered it.\n")
        return 0
    return _continue(project, info, args.agent, args.print)
