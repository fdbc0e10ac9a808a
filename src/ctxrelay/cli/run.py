"""``ctxrelay run``: an agent session whose context windows hand off, roll over and resume.

The tool set and the display are seams: ``main(argv, tools=..., display=...)`` takes
factories, and by default the tools are the built-ins (plus the coding tools of
``ctxrelay.runtime.tools.coding`` when that module is present and the model is real),
the display a live timeline, or JSON lines with ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import math
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from ctxrelay.budget import DEFAULT_NOTES_FILE, DEFAULT_WARNING_LEAD, Budget
from ctxrelay.budget.bounds import DEFAULT_THRESHOLD
from ctxrelay.cli._common import BUDGET_FLAGS, ArgumentParser, error, handle_errors
from ctxrelay.cli._ids import resolve_session
from ctxrelay.cli._timeline import JsonLines, Timeline
from ctxrelay.errors import ConfigError
from ctxrelay.runtime import RunResult, Runtime, SessionConfig
from ctxrelay.runtime.events import Event
from ctxrelay.runtime.providers import SCRIPTED_DEFAULTS, resolve, split_spec
from ctxrelay.runtime.registry import resolve_model
from ctxrelay.runtime.tools import ToolSet, approve_all, builtin_tools
from ctxrelay.store import Store, open_store, resolve_target

__all__ = [
    "EXIT_PAUSED",
    "Display",
    "add_session_arguments",
    "display_for",
    "exit_code",
    "main",
    "run_session",
    "tools_for",
]

EXIT_PAUSED = 3
"""A cap (``--max-turns``, ``--max-cost``) paused the session: resumable, not an error."""

_DESCRIPTION = """\
Run an agent session whose context windows follow the policy: a warning before the
handoff target, one handoff request at it (the agent checkpoints its notes and calls
new_context), a forced rollover only at the usable limit. Sessions are stored (SQLite
by default) and resume with --resume.

Examples:
  ctxrelay run --model scripted:steps.json "Add a --json flag to the CLI"
  ctxrelay run --model scripted:steps.json --limit 20000 --reserve 4000 \\
      --threshold 50 --json "task"
  ctxrelay run --model anthropic:claude-sonnet-4-6 "Fix the failing test"
  # the slider your stored sessions recommend:
  ctxrelay run --model anthropic:claude-sonnet-4-6 --threshold auto "task"
  ctxrelay run --model openai:gpt-4.1 --yes "Rename Foo"  # commands unasked
  # a local server (docs/providers.md):
  ctxrelay run --model openai-chat:qwen2.5-coder:7b \\
      --base-url http://localhost:11434/v1 --limit 32768 "task"
  ctxrelay run --resume 3f2a --max-turns 200    # continue with a higher cap
  ctxrelay run --resume 3f2a "Also update the docs"   # with a new message

--threshold auto takes the slider 'ctxrelay analyze --db --sweep 30..90' recommends from
the sessions already in the store (the middle of the sweep's flat region), says which
it chose and why, and refuses when they had too little to go on (no stored session, or
none that ever reached any slider's target).

openai: speaks OpenAI's Responses API; openai-chat: speaks Chat Completions, which every
OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) serves: use it with
--base-url for a server without the Responses API.

--limit and --reserve default from the model registry (the model's context window and
its output-reserve rule; see docs/providers.md). A model it does not know needs --limit;
the scripted model plays a Claude-sized window unless --limit says otherwise.

Exit status: 0 done, 3 paused by a cap (resume with a higher one), 130 stopped by
Ctrl-C (resumable), 1 error or a safe pause that needs you (the request cannot fit, Off
blocked at the limit, provider error), 2 bad usage.
"""


class Display(Protocol):
    """Receives every event of a run; ``close`` when the run ends."""

    def __call__(self, event: Event) -> None: ...

    def close(self) -> None: ...


def _positive(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{name} must be zero or more")
        return value

    return parse


def _number(name: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number") from None
        if not math.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number, zero or more")
        return value

    return parse


AUTO = "auto"
AUTO_SWEEP = "30..90:5"
"""The sliders ``--threshold auto`` replays the stored sessions under."""
AUTO_KEY = "threshold_auto"
"""Session metadata key of the evidence ``--threshold auto`` chose the slider on."""


def _threshold(text: str) -> float | str:
    if text.strip().lower() == AUTO:
        return AUTO
    return _number("--threshold")(text)


def _day(stamp: str | None) -> str:
    """A stored row's time (seconds since the epoch, or ISO) as its UTC day."""
    if not stamp:
        return "?"
    try:
        return datetime.fromtimestamp(float(stamp), UTC).date().isoformat()
    except ValueError:
        return stamp[:10]


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.2f}"


def _auto_threshold(db: str | None) -> tuple[float, dict[str, Any]]:
    """The slider the analyzer recommends from the store's sessions, with its evidence;
    says on stderr which it chose and why."""
    from ctxrelay.analyze import analyze_store, parse_sweep  # noqa: PLC0415 — the analyzer (~60 ms: the transcript decoders, the replay): only --threshold auto reads the store's sessions (tests/cli/test_run.py)
    from ctxrelay.cli.analyze import recommended_slider  # noqa: PLC0415 — it loads the analyzer too

    target = str(resolve_target(db))
    reports = analyze_store(target, sweep=parse_sweep(AUTO_SWEEP))
    if not reports:
        raise ConfigError(
            f"--threshold auto found no stored sessions in {target} to choose a slider from; "
            "give --threshold P"
        )
    try:
        found = recommended_slider(reports)
    except ConfigError as exc:
        raise ConfigError(f"--threshold auto: {exc}; give --threshold P") from None
    evidence = {**found.as_json(), "sweep": AUTO_SWEEP}
    span = f"{_day(found.first_timestamp)} to {_day(found.last_timestamp)}"
    plural = "" if found.sessions == 1 else "s"
    sys.stderr.write(
        f"ctxrelay: --threshold auto chose {found.threshold:g}%: the middle of the flat "
        f"region {found.region[0]:g}-{found.region[1]:g}% of {AUTO_SWEEP} over "
        f"{found.sessions:,} stored session{plural} ({span}), "
        f"{_usd(found.cost_usd)} replayed, "
        + (
            f"against {_usd(found.recorded_cost_usd)} as recorded\n"
            if found.recorded_cost_usd is not None
            else "while the recording is unpriced (a model without a price)\n"
        )
    )
    return found.threshold, evidence


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``run`` and ``demo``: the store and the output."""
    parser.add_argument(
        "--db",
        help="store: a file path, sqlite:///PATH or postgresql://URL "
        "(default: $CTXRELAY_DB, else ctxrelay.db in the user data directory)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per event")


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay run",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("message", nargs="?", help="the task (or, with --resume, a new message)")
    parser.add_argument(
        "--model",
        help="provider:model, e.g. scripted:steps.json, anthropic:claude-sonnet-4-6, "
        "openai:gpt-4.1 (Responses API), openai-chat:MODEL (Chat Completions)",
    )
    parser.add_argument(
        "--resume",
        metavar="ID",
        help="continue a stored session, named by its id or a unique start of it (with "
        "its model, --base-url, --timeout and --max-retries unless given again; API keys "
        "come from the environment)",
    )
    add_session_arguments(parser)
    budget = parser.add_argument_group("budget (new sessions; stored with the session)")
    budget.add_argument(
        "--limit",
        type=_positive("--limit"),
        help="context window (tokens; default: the model registry's)",
    )
    budget.add_argument(
        "--reserve",
        type=_positive("--reserve"),
        help="output reserve (tokens; default: the model registry's rule for the window)",
    )
    budget.add_argument(
        "--threshold",
        type=_threshold,
        default=float(DEFAULT_THRESHOLD),
        metavar="P|auto",
        help="handoff target, percent of the limit (100 = Off; auto = the slider the "
        "analyzer recommends from the stored sessions; default %(default)s)",
    )
    budget.add_argument(
        "--warning-lead",
        type=_number("--warning-lead"),
        default=DEFAULT_WARNING_LEAD,
        help="points between the warning and the target (default %(default)s)",
    )
    budget.add_argument(
        "--workspace", type=Path, default=None, help="directory the file tools work in (cwd)"
    )
    budget.add_argument(
        "--notes-file", default=None, help=f"notes checkpoint file (default {DEFAULT_NOTES_FILE})"
    )
    budget.add_argument(
        "--new-context",
        choices=["offered", "conditional", "forbidden"],
        default="offered",
        help="tool policy for new_context (changes the handoff wording)",
    )
    controls = parser.add_argument_group("goal and cost controls (pause when reached)")
    controls.add_argument("--max-turns", type=_positive("--max-turns"), help="model responses")
    controls.add_argument("--max-cost", type=_number("--max-cost"), help="USD for the session")
    provider = parser.add_argument_group("provider")
    provider.add_argument(
        "--base-url",
        help="API base URL: a compatible server (openai-chat: for one without the Responses API)",
    )
    provider.add_argument(
        "--timeout",
        type=_number("--timeout"),
        help="seconds to wait for the model's next bytes before giving up (default 600)",
    )
    provider.add_argument(
        "--max-retries",
        type=_positive("--max-retries"),
        help="retries of a rate-limited, overloaded or broken request (default 4)",
    )
    provider.add_argument(
        "--yes", action="store_true", help="run commands without asking (coding tools)"
    )
    return parser


def tools_for(args: argparse.Namespace) -> ToolSet:
    """The built-ins, plus the coding tools for a real model when they are installed."""
    tools = builtin_tools()
    if args.model and split_spec(args.model)[0] == "scripted":
        return tools
    try:
        coding = importlib.import_module("ctxrelay.runtime.tools.coding")
    except ModuleNotFoundError:
        return tools
    factory = getattr(coding, "coding_tools", None)
    if factory is not None:
        for tool in factory():
            if tool.name not in tools:
                tools.add(tool)
    return tools


def display_for(args: argparse.Namespace) -> Display:
    if args.json:
        return JsonLines()
    return Timeline()


async def _ask(description: str) -> bool:
    """Confirm an action with effects on the terminal (``--yes`` skips this)."""
    if not sys.stdin.isatty():
        return False
    loop = asyncio.get_running_loop()
    answer = await loop.run_in_executor(None, input, f"{description}\nrun it? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def exit_code(result: RunResult) -> int:
    if result.status == "done":
        return 0
    if result.status == "stopped":
        return 130
    if result.reason in ("max_turns", "max_cost"):
        sys.stderr.write(f"ctxrelay: {result.message}\n")
        return EXIT_PAUSED
    return error(result.message or f"the session paused ({result.reason})")


async def run_session(session: Any, message: str | None) -> RunResult:
    """Run with Ctrl-C mapped to a clean stop (a second Ctrl-C interrupts at once)."""
    loop = asyncio.get_running_loop()
    installed = False

    def on_sigint() -> None:
        session.stop()
        loop.remove_signal_handler(signal.SIGINT)
        sys.stderr.write(
            "ctxrelay: stopping after the current step and its tool calls "
            "(Ctrl-C again to abort them)\n"
        )

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    try:
        result: RunResult = await session.run(message)
    finally:
        if installed:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signal.SIGINT)
    return result


async def _closing(run: Awaitable[RunResult], provider: object) -> RunResult:
    """Await the run, then close the provider's HTTP client inside the same event loop
    (an SDK client left open warns about unclosed sockets when the loop ends)."""
    try:
        return await run
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()


PROVIDER_OPTIONS_KEY = "provider_options"
"""Session metadata key of the provider options ``--resume`` reuses."""
_REMEMBERED_OPTIONS = ("base_url", "timeout", "max_retries")
"""The provider options a session remembers: never a key or other secret (those stay in
the environment, where the user put them)."""


def _provider_flags(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.base_url:
        options["base_url"] = args.base_url
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.max_retries is not None:
        options["max_retries"] = args.max_retries
    return options


def _rememberable(options: Mapping[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in options.items() if k in _REMEMBERED_OPTIONS}
    base_url = kept.get("base_url")
    if isinstance(base_url, str):
        parts = urlsplit(base_url)
        if parts.password or parts.query:  # may carry a credential: not written down
            del kept["base_url"]
    return kept


def _stored_provider_options(store: Store, session_id: str, model: str) -> dict[str, Any]:
    """The options the session was created with, when it still runs on the same provider
    (a ``--model`` of another provider on resume starts from none)."""
    metadata = store.get_session(session_id).metadata
    stored = metadata.get(PROVIDER_OPTIONS_KEY)
    created_with = metadata.get("model")
    if not isinstance(stored, Mapping) or not isinstance(created_with, str):
        return {}
    if split_spec(created_with)[0] != split_spec(model)[0]:
        return {}
    return _rememberable(stored)


def _budget(args: argparse.Namespace) -> Budget:
    # The registry owns the window and the output-reserve rule, for unknown models given
    # --limit too; the scripted model plays a Claude-sized window unless --limit says so.
    kind, model = split_spec(args.model)
    limit = args.limit
    if limit is None and kind == "scripted":
        limit = SCRIPTED_DEFAULTS.context_window
    info = resolve_model(kind, model, limit=limit, reserve=args.reserve)
    return Budget(
        limit=info.context_window,
        output_reserve=info.output_reserve,
        threshold=args.threshold,
        warning_lead=args.warning_lead,
    )


@handle_errors(flags=BUDGET_FLAGS)
def main(
    argv: Sequence[str],
    *,
    tools: Callable[[argparse.Namespace], ToolSet] | None = None,
    display: Callable[[argparse.Namespace], Display] | None = None,
) -> int:
    args = _parser().parse_args(list(argv))
    if args.resume is None and not args.message:
        raise ConfigError("give the task as an argument, or --resume ID to continue a session")
    if args.resume is None and not args.model:
        raise ConfigError("--model is required for a new session (e.g. scripted:steps.json)")
    store = open_store(args.db)
    try:
        if args.resume is not None:  # a unique start of the id, as `sessions list` prints
            args.resume = resolve_session(store, args.resume).id
        evidence = None
        if args.resume is None and args.threshold == AUTO:  # before any provider is made
            args.threshold, evidence = _auto_threshold(args.db)
        if args.resume is not None and not args.model:
            stored = store.get_session(args.resume).metadata.get("model")
            if not isinstance(stored, str):
                raise ConfigError(f"session {args.resume!r} has no stored model; pass --model")
            args.model = stored
        flags = _provider_flags(args)
        options = dict(flags)
        if args.resume is not None:
            options = {**_stored_provider_options(store, args.resume, args.model), **flags}
        provider = resolve(args.model, **options)
        sink = (display or display_for)(args)
        runtime = Runtime(
            store,
            provider,
            tools=(tools or tools_for)(args),
            on_event=sink,
            confirm=approve_all if args.yes else _ask,
            on_text=getattr(sink, "text", None),  # the timeline streams replies live
        )
        caps: dict[str, Any] = {}
        if args.max_turns is not None:
            caps["max_turns"] = args.max_turns
        if args.max_cost is not None:
            caps["max_cost"] = args.max_cost
        if args.resume is not None:
            session = runtime.open(args.resume, **caps)
            message = args.message
        else:
            config = SessionConfig(
                budget=_budget(args),
                workspace=(args.workspace or Path.cwd()),
                new_context=args.new_context,
                **({"notes_file": args.notes_file} if args.notes_file else {}),
                **caps,
            )
            session = runtime.start(args.message, config)
            if remembered := _rememberable(options):
                store.update_session(session.id, metadata={PROVIDER_OPTIONS_KEY: remembered})
            if evidence is not None:
                store.update_session(session.id, metadata={AUTO_KEY: evidence})
            message = None
        try:
            result = asyncio.run(_closing(run_session(session, message), provider))
        finally:
            sink.close()
    finally:
        store.close()
    return exit_code(result)
