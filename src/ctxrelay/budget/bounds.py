"""The Claude Code plugin's bounds (DESIGN §6): the one place each value lives.

Every copy elsewhere (agent front matter, the settings snippet, docs) is pinned to these
values by ``tests/budget/test_bounds_pins.py``; change a bound here and the test names
each copy to update.
"""

from __future__ import annotations

# Annotations only: the hooks import this module at every tool call, and ``typing`` would
# cost more than the rest of them (mypy reads any constant named TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal

__all__ = [
    "AGENT_MAX_TURNS",
    "BASH_MAX_OUTPUT_LENGTH",
    "CALL_LINE_WAIT_S",
    "CLAUDE_CODE_COMPACT_BUFFER",
    "CLAUDE_CODE_RESPONSE_RESERVE",
    "CONTEXT_PERCENT",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAIN_HANDOVER",
    "DISABLE_COMPACT",
    "FORK_MAX_TURNS",
    "HAIKU_CONTEXT_MAX",
    "HANDOFF_RETRY_MAX",
    "HANDOFF_WAIT_TURNS",
    "LONG_CONTEXT_WINDOW",
    "MAIN_HANDOVERS",
    "MAIN_OUTPUT_RESERVE",
    "READ_MAX_BYTES",
    "REPORT_MAX_WORDS",
    "SUBAGENT_CONTEXT_MAX",
    "TURNS_LEFT_AT",
    "MainHandover",
]

SUBAGENT_CONTEXT_MAX: Final = 100_000
"""Context (tokens) past which a subagent is told to report now."""

HAIKU_CONTEXT_MAX: Final = 85_000
"""The same bound for subagents on Haiku models, whose quality drops earlier."""

TURNS_LEFT_AT: Final = 4
"""Turns left at which a subagent is told to report now: two turns to commit the work,
one to write the report, and one spare."""

REPORT_MAX_WORDS: Final = 400
"""The longest report a subagent is asked for, so the parent's context stays small."""

AGENT_MAX_TURNS: Final[dict[str, int]] = {
    "investigator": 31,
    "planner": 41,
    "researcher": 41,
    "reviewer": 41,
    "implementer": 61,
    "debugger": 61,
}
"""``maxTurns`` of each of the plugin's agent types (the smallest stays above
``TURNS_LEFT_AT``, or the note would fire on the first turn)."""

FORK_MAX_TURNS: Final = 200
"""Claude Code's own ``maxTurns`` of a fork (``subagent_type: "fork"``, built in: it
inherits its parent's whole context); the plugin bounds a fork by it and by the context
it adds after the fork."""

CONTEXT_PERCENT: Final = 60
"""Share of the main session's window at which the handoff starts."""

HANDOFF_WAIT_TURNS: Final = 2
"""Main-session turns that a started (auto) handoff waits for its file."""

HANDOFF_RETRY_MAX: Final = 1
"""Times the write prompt is submitted again when no handoff file appears."""

if TYPE_CHECKING:
    MainHandover = Literal["manual", "auto", "off"]
# At run time ``MainHandover`` is built on first use by ``__getattr__`` below.
MAIN_HANDOVERS: Final[tuple[MainHandover, ...]] = ("manual", "auto", "off")
DEFAULT_MAIN_HANDOVER: Final[MainHandover] = "manual"
"""Manual until the cost of a handoff is measured against a compaction (see
``ctxrelay analyze``)."""

READ_MAX_BYTES: Final = 4 * 1024 * 1024
"""Files larger than this are denied to the Read tool; offset/limit or Grep instead."""

BASH_MAX_OUTPUT_LENGTH: Final = 4_000
"""Characters of Bash output Claude Code keeps in context (the rest goes to a file)."""

DISABLE_COMPACT: Final = 1
"""The settings snippet disables auto-compaction: the handoff replaces it."""

CLAUDE_CODE_RESPONSE_RESERVE: Final = 20_000
"""Tokens Claude Code keeps free below the window for a response or a summary."""

CLAUDE_CODE_COMPACT_BUFFER: Final = 13_000
"""How far below that Claude Code auto-compacts: 167,000 of a 200,000 window, where the
spotter corpus's three auto-compactions fired (preTokens 167,094, 167,731, 170,251)."""

MAIN_OUTPUT_RESERVE: Final = CLAUDE_CODE_RESPONSE_RESERVE + CLAUDE_CODE_COMPACT_BUFFER
"""Tokens kept free at the top of the main session's window: where Claude Code's own
auto-compaction would have started. From this point on there is still room to write the
handoff file, so the main session's usable limit is the window less this."""

CALL_LINE_WAIT_S: Final = 0.5
"""Longest a hook waits for the transcript to show the response that made its tool call.
Claude Code (2.1.332) writes transcript lines in batches about every 100 ms, so a hook
that starts right after a response can find it not written yet; past this bound the hook
decides without it (it fails open)."""

DEFAULT_CONTEXT_WINDOW: Final = 200_000
"""The window of a Claude model whose id does not say otherwise."""

LONG_CONTEXT_WINDOW: Final = 1_000_000
"""The window of 1M-context models (ids ending in ``[1m]``)."""


def __getattr__(name: str) -> object:
    # PEP 562: the ``MainHandover`` alias (a real ``Literal`` for ``typing.get_args``) costs
    # an import of ``typing``, paid only by code that asks for it.
    if name == "MainHandover":
        from typing import Literal

        alias = Literal["manual", "auto", "off"]
        globals()[name] = alias
        return alias
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
