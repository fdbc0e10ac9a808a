"""``ctxrelay analyze``'s options: the parser, and the checks that turn its arguments into
what the run needs (one sentence for each mistake, before anything is read)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ctxrelay.analyze._discover import default_codex_sessions_dir, default_projects_dir
from ctxrelay.analyze._groups import parse_when
from ctxrelay.analyze._plot import _pyplot
from ctxrelay.analyze._policies import (
    DEFAULT_POLICIES,
    Policy,
    Sweep,
    parse_policies,
    parse_sweep,
)
from ctxrelay.analyze._report import SWEEP_MARGIN
from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.cli._parser import ArgumentParser
from ctxrelay.errors import ConfigError
from ctxrelay.pricing import DEFAULT_PRICES, PriceTable, load_prices
from ctxrelay.transcripts import default_opencode_db

__all__ = ["Options", "parse", "parser"]

_DESCRIPTION = """\
Measure Claude Code and Codex sessions from their transcripts and rollouts and replay
them under other context policies.

For each session (and each of its subagents): requests (unique message ids), peak and
final context, compactions, usage by category and cost. Then a what-if replay of the
main chain under each --policy:

  none        the session as recorded (its own compactions included)
  compact     Claude Code's auto-compaction: a summary request near the limit, then
              the chain continues from base + summary
  handoff:P   ctxrelay with the slider at P percent: a rollover to base + notes at the
              handoff target, decided by the policy core at every request
  mask:N      observation masking: tool results older than the newest N requests
              replaced by a placeholder, in batches every N requests (with Claude
              Code's compaction); handoff:P+mask:N combines it with the slider

A replayed policy's cost is a range: files read before a restart and edited after it
are read again (low end), or any file touched again (high end).

--sweep A..B[:STEP] replays handoff:P for every P in the range and recommends the
middle of the flat region: every slider whose high estimate is within {margin:.0%} of the best.
The replay's assumptions are printed with the results (and are in --json).

Every response is priced at its own model (main chain, subagents, compaction
summaries); a response found in several files counts once; a model without a price
is named and its session's cost left blank (add it with --prices).

Reports: --by session|day|week|month|project totals the requests of each row (each
request in the row of its own time, local time zone), --since/--until keep the
requests of a date range (2026-02-10, 20260210, or 7d / 4w ago), --top N keeps the N
most expensive rows. Each row shows the recorded cost and beside it what every
--policy would have cost; with --plot and a time --by, the plot adds the cumulative
cost by day.

PATH is a transcript or a directory searched recursively (default: Claude Code's
projects directory, $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects, and Codex's
sessions, $CODEX_HOME/sessions or ~/.codex/sessions, and OpenCode's database,
~/.local/share/opencode/opencode.db, whichever exist). Each file is read as what it is:
a Claude Code transcript, a Codex rollout (one session per rollout file, as ccusage
counts them; a Codex subagent's rollout names its parent), or an OpenCode database (a
file named *.db, read-only, even while OpenCode runs: one session per OpenCode session,
its own recorded cost beside ctxrelay's). --db reads
ctxrelay's own sessions from a store instead (a file path, sqlite:/// or postgresql://
URL; add PATHs to read both).

--apply (with --sweep) writes the recommended slider into the Claude Code plugin's
config, with the evidence beside it (the sessions and dates analysed, the cost as
recorded and at the slider): the project's .ctxrelay/config.json (of --project-dir,
default the current directory), or with --user your own. 'ctxrelay claude config' shows
it. It refuses, writing nothing, when no session ever reached any slider's target.

Examples:
  ctxrelay analyze
  ctxrelay analyze ~/.claude/projects/-home-me-src-app --sweep 30..90
  ctxrelay analyze ~/.codex/sessions --by project
  ctxrelay analyze ~/.local/share/opencode/opencode.db --json
  ctxrelay analyze ~/.claude/projects/-home-me-src-app --sweep 30..90 --apply
  ctxrelay analyze session.jsonl --policy none,compact,handoff:50 --plot curves.png
  ctxrelay analyze --json --sweep 30..90:1 > report.json
  ctxrelay analyze --by month --policy handoff:45
  ctxrelay analyze --since 4w --by week --plot weeks.png
  ctxrelay analyze --top 10
  ctxrelay analyze --prices my-prices.toml
  ctxrelay analyze --db ~/.local/share/ctxrelay/ctxrelay.db --session 3f2a...
"""


def _whole(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


def parser() -> ArgumentParser:
    """The command's argparse parser: every flag, its help, and the description."""
    parser = ArgumentParser(
        prog="ctxrelay analyze",
        description=_DESCRIPTION.format(margin=SWEEP_MARGIN),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="transcripts or directories")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="POLICY",
        help="none, compact, handoff:P, mask:N, handoff:P+mask:N; repeat or separate "
        "with commas "
        f"(default: none,compact,handoff:{CONTEXT_PERCENT})",
    )
    parser.add_argument(
        "--sweep", metavar="A..B[:STEP]", help="replay handoff:P for each P and recommend one"
    )
    parser.add_argument(
        "--prices", metavar="FILE", help="JSON or TOML prices laid over the built-in table"
    )
    parser.add_argument(
        "--limit",
        type=_whole,
        metavar="TOKENS",
        help="the context window (default: from each session's model, 200,000 for Claude)",
    )
    parser.add_argument(
        "--warm-prefix",
        action="store_true",
        help="after a restart the shared prefix (system prompt, tools) stays cached, as "
        "recorded compactions show (default: a cold cache)",
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the context curves (needs the plot extra)"
    )
    parser.add_argument(
        "--db", metavar="DB", help="also read ctxrelay sessions from this store (path or URL)"
    )
    parser.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="ID",
        help="with --db: only this stored session (repeatable)",
    )
    parser.add_argument(
        "--by",
        choices=("session", "day", "week", "month", "project"),
        help="one report row per session, day, week, month or project",
    )
    parser.add_argument(
        "--since", metavar="WHEN", help="only requests from this day on (2026-02-10, 7d, 4w)"
    )
    parser.add_argument(
        "--until", metavar="WHEN", help="only requests up to the end of this day (or time)"
    )
    parser.add_argument(
        "--top", type=_whole, metavar="N", help="only the N most expensive report rows"
    )
    apply = parser.add_argument_group("setting the slider (with --sweep)")
    apply.add_argument(
        "--apply",
        action="store_true",
        help="write the recommended slider, with its evidence, into the Claude Code config",
    )
    apply.add_argument(
        "--project-dir", metavar="DIR", help="the project whose config --apply writes (default: .)"
    )
    apply.add_argument(
        "--user", action="store_true", help="--apply writes your user config instead"
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


@dataclass(frozen=True, slots=True)
class Options:
    """A checked command line: the parsed ``args``, and what the checks made of them."""

    args: argparse.Namespace
    paths: list[str]
    """The transcripts and directories to read (none: only ``--db``)."""
    policies: Sequence[Policy]
    sweep: Sweep | None
    prices: PriceTable
    since: datetime | None
    until: datetime | None

    @property
    def reporting(self) -> bool:
        """Whether the output is a report of rows (``--by``, ``--top``, a date range)."""
        return bool(self.args.by or self.args.top or self.since or self.until)


def parse(argv: Sequence[str]) -> Options:
    """Parse and check ``argv``; a :class:`ConfigError` (or a usage error) names the first
    mistake."""
    args = parser().parse_args(list(argv))
    policies = parse_policies(args.policy) if args.policy else DEFAULT_POLICIES
    sweep = parse_sweep(args.sweep) if args.sweep else None
    prices = load_prices(args.prices) if args.prices else DEFAULT_PRICES
    since = until = None
    if args.since or args.until:
        since = parse_when(args.since) if args.since else None
        until = parse_when(args.until, end=True) if args.until else None
        if since is not None and until is not None and until < since:
            raise ConfigError(f"--until {args.until} is before --since {args.since}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ConfigError(
            f"--plot writes a PNG file; give a name ending in .png, not {args.plot!r}"
        )
    if args.plot:
        _pyplot()  # fail before the work if the plot extra is missing
    if args.session and not args.db:
        raise ConfigError("--session names a stored session; give the store with --db")
    if args.apply and sweep is None:
        raise ConfigError("--apply writes the slider a sweep recommends; give --sweep A..B")
    if (args.user or args.project_dir) and not args.apply:
        raise ConfigError("--user and --project-dir say where --apply writes; add --apply")
    paths: list[str] = list(args.paths)
    if not paths and not args.db:
        claude, codex = default_projects_dir(), default_codex_sessions_dir()
        opencode = default_opencode_db()
        paths = [p for p in (claude, codex) if os.path.isdir(p)]
        paths += [opencode] if os.path.isfile(opencode) else []
        if not paths:
            raise ConfigError(
                f"no Claude Code projects directory at {claude}, no Codex sessions at "
                f"{codex} and no OpenCode database at {opencode}; give a transcript or a "
                "directory"
            )
    return Options(args, paths, policies, sweep, prices, since, until)
