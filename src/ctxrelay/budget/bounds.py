"""Every bound and size of ctxrelay: the one place each value lives.

The Claude Code plugin's bounds (``docs/claude-code-facts.md`` says which Claude Code
behaviour each one answers), the default slider both hosts start from, the reserve
rule's numbers, and the sizes the runtime's tools and the store cap their output at.
Every copy elsewhere (agent front matter, the settings snippet, docs) is pinned to these
values by ``tests/budget/test_bounds_pins.py``, which also finds a literal copy anywhere
under ``src/``; change a bound here and the test names each copy to update.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "AGENT_MAX_TURNS",
    "BASH_MAX_OUTPUT_LENGTH",
    "BASH_OUTPUT_MAX_CHARS",
    "BASH_TIMEOUT_DEFAULT_S",
    "BASH_TIMEOUT_MAX_S",
    "CALL_LINE_WAIT_S",
    "CLAUDE_CODE_BASH_OUTPUT_DEFAULT",
    "CLAUDE_CODE_BASH_OUTPUT_RANGE",
    "CLAUDE_CODE_BASH_PREVIEW_BYTES",
    "CLAUDE_CODE_BASH_SETTING_RANGE",
    "CLAUDE_CODE_BLOCK_RESERVE",
    "CLAUDE_CODE_COMPACT_BUFFER",
    "CLAUDE_CODE_RESPONSE_RESERVE",
    "CODEX_BYTE_CUT_MODELS",
    "CODEX_OUTPUT_CUT",
    "CODEX_OUTPUT_HEADER_BYTES",
    "CONTEXT_PERCENT",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAIN_HANDOVER",
    "DEFAULT_RESERVE_CAP",
    "DEFAULT_THRESHOLD",
    "DISABLE_AUTO_COMPACT",
    "FORK_MAX_TURNS",
    "GEMINI_COMPRESSION_KEEP",
    "GEMINI_COMPRESSION_THRESHOLD",
    "GEMINI_DEFAULT_COMPRESSION_THRESHOLD",
    "GEMINI_TOOL_OUTPUT_MAX_CHARS",
    "GREP_FILE_MAX_BYTES",
    "GREP_MAX_MATCHES",
    "HAIKU_CONTEXT_MAX",
    "HANDOFF_INJECT_MAX_BYTES",
    "HANDOFF_RESUME_MAX_AGE_S",
    "HANDOFF_RETRY_MAX",
    "HANDOFF_WAIT_TURNS",
    "HISTORY_LINE_MAX_BYTES",
    "HISTORY_RESULT_MAX_BYTES",
    "HISTORY_ROWS_MAX",
    "HISTORY_SCAN_MAX_BYTES",
    "HOOK_TIMEOUT_S",
    "LIST_MAX_ENTRIES",
    "LONG_CONTEXT_WINDOW",
    "MAIN_HANDOVERS",
    "MAIN_OUTPUT_RESERVE",
    "NOTES_MAX_BYTES",
    "OPENCODE_OUTPUT_MAX_BYTES",
    "PRINT_BIG_BYTES",
    "PRINT_PAGE_BYTES",
    "READ_BYTES_PER_TOKEN",
    "READ_FILE_MAX_BYTES",
    "READ_ROOM_SHARE",
    "REPORT_MAX_WORDS",
    "RESERVE_WINDOW_DIVISOR",
    "RESULT_MAX_CHARS",
    "STOP_REPLY_WAIT_S",
    "SUBAGENT_CONTEXT_MAX",
    "TRANSCRIPT_LINE_MAX_BYTES",
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

DEFAULT_THRESHOLD: Final = 60
"""The default slider, percent of the window: where a runtime session's handoff request
comes (``Budget.threshold``, ``ctxrelay run --threshold``), and where the Claude Code
plugin's main session hands off (``docs/decisions.md`` says why 60)."""

CONTEXT_PERCENT: Final = DEFAULT_THRESHOLD
"""Share of the main session's window at which the plugin's handoff starts: the default
slider, under the name the plugin's code and docs use."""

HANDOFF_WAIT_TURNS: Final = 2
"""Main-session turns that a started (auto) handoff waits for its file."""

HANDOFF_RETRY_MAX: Final = 1
"""Times the write prompt is submitted again when no handoff file appears."""

MainHandover = Literal["manual", "auto", "off"]
MAIN_HANDOVERS: Final[tuple[MainHandover, ...]] = ("manual", "auto", "off")
DEFAULT_MAIN_HANDOVER: Final[MainHandover] = "manual"
"""Manual until the cost of a handoff is measured against a compaction (see
``ctxrelay analyze``)."""

BASH_MAX_OUTPUT_LENGTH: Final = 4_000
"""Characters of Bash output Claude Code keeps in context (the rest goes to a file)."""

PRINT_PAGE_BYTES: Final = BASH_MAX_OUTPUT_LENGTH
"""The page the guard offers instead of a big file print, in bytes (``head -c 4000``, a
Read whose lines fit in it): what the installed Claude Code cap keeps whole."""

PRINT_BIG_BYTES: Final = 2 * PRINT_PAGE_BYTES
"""A file print is denied only when the host would hand the model more than this of it:
below, the deny reason and a page would cost about as much as the print."""

READ_ROOM_SHARE: Final = 2
"""A Read may take at most 1/this of the tokens left below the usable limit: the rest
stays for the work and the handoff."""

READ_BYTES_PER_TOKEN: Final = 3
"""Bytes of file text per token when the Read guard sizes a Read, and characters per
token when the usable-limit check sizes a Bash output at Claude Code's cap (code and logs
run 3 to 4; the low end keeps the estimate on the safe side)."""

CLAUDE_CODE_BASH_OUTPUT_DEFAULT: Final = 30_000
"""Characters of a Bash output Claude Code 2.1.332 hands the model whole when neither
``BASH_MAX_OUTPUT_LENGTH`` nor the ``bashOutputMaxChars`` setting says otherwise."""

CLAUDE_CODE_BASH_OUTPUT_RANGE: Final = (4_000, 150_000)
"""The range Claude Code clamps ``BASH_MAX_OUTPUT_LENGTH`` into."""

CLAUDE_CODE_BASH_SETTING_RANGE: Final = (4_000, 128_000)
"""The range Claude Code 2.1.332 clamps the ``bashOutputMaxChars`` setting into (which,
when set, replaces ``BASH_MAX_OUTPUT_LENGTH``)."""

CLAUDE_CODE_BASH_PREVIEW_BYTES: Final = 2_300
"""What the model gets of a longer Bash output: a 2 KB preview and the saved file's path
(2,295 to 2,337 bytes measured on 2.1.332)."""

CODEX_OUTPUT_CUT: Final = 10_000
"""Codex 0.171 cuts a command's output in the middle to this many bytes for the models in
:data:`CODEX_BYTE_CUT_MODELS` (10,211 to 10,215 bytes reached the model), and to this
many tokens, about 40,000 bytes, for the others (gpt-5.5: 40,213 to 40,216 bytes)."""

CODEX_BYTE_CUT_MODELS: Final = frozenset({"gpt-5", "gpt-5-codex", "gpt-5.1", "gpt-5.1-codex"})
"""Models whose outputs Codex 0.171 cuts by bytes (measured one by one)."""

CODEX_OUTPUT_HEADER_BYTES: Final = 110
"""The header Codex puts before every command output ("Chunk ID", wall time, exit code,
token count) and the cut's own notice: about 105 to 215 bytes."""

OPENCODE_OUTPUT_MAX_BYTES: Final = 50 * 1024
"""OpenCode 1.18.33's own cap of a tool's output: a longer ``bash`` output reaches the
model as its last 50 KB (whole lines, 51,198 bytes of a 300 KB print measured) after a
notice naming the file the whole output was saved to; ``read`` returns at most 50 KB of
a file (its first lines, and the ``offset`` to go on from)."""

GEMINI_TOOL_OUTPUT_MAX_CHARS: Final = 40_000
"""The Gemini CLI's own cut of a tool's output (``truncateToolOutputThreshold``, 0.61.0):
a longer output reaches the model as its first 20% (8,000 characters) and its last 80%
(32,000), the middle spilled to a file under ``~/.gemini/tmp``."""

GEMINI_DEFAULT_COMPRESSION_THRESHOLD: Final = 0.5
"""The share of the model's window at which the Gemini CLI 0.61.0 compresses on its own
(``DEFAULT_COMPRESSION_THRESHOLD``, the ``model.compressionThreshold`` setting): before
a request, once the last prompt reached it. ``ctxrelay analyze``'s ``compact`` baseline
for a Gemini session."""

GEMINI_COMPRESSION_KEEP: Final = 0.3
"""The newest share of the conversation the Gemini CLI 0.61.0 keeps as it is when it
compresses (``COMPRESSION_PRESERVE_THRESHOLD``, by characters, cut at a user turn); the
older rest becomes one ``<state_snapshot>`` summary."""

GEMINI_COMPRESSION_THRESHOLD: Final = 0.9
"""The share of the window at which the Gemini CLI compresses once ctxrelay is installed
(its ``model.compressionThreshold``, 0.5 by default): the CLI compresses before the next
request once the last prompt reached it, so at its default the handoff at the default
slider (60%) would come after a compression. The handoff replaces it; the CLI's own
compression stays as the hard limit."""

DISABLE_AUTO_COMPACT: Final = 1
"""The settings snippet disables auto-compaction: the handoff replaces it. Not
``DISABLE_COMPACT``, which also removes ``/compact`` ("Unknown command: /compact" on
Claude Code 2.1.332): the user keeps the manual command."""

CLAUDE_CODE_RESPONSE_RESERVE: Final = 20_000
"""Tokens Claude Code keeps free below the window for a response or a summary."""

CLAUDE_CODE_BLOCK_RESERVE: Final = 23_000
"""How far below the window Claude Code refuses to send a request at all ("Context limit
reached · /clear to continue"; "Prompt is too long" under ``-p``) when auto-compaction is
off: measured on 2.1.332 with a 200,000 window, a request estimated from 176,950 tokens
went out and one from 177,000 did not. Past it the model cannot write its handoff."""

CLAUDE_CODE_COMPACT_BUFFER: Final = 13_000
"""How far below that Claude Code auto-compacts: 167,000 of a 200,000 window, where the
spotter corpus's three auto-compactions fired (preTokens 167,094, 167,731, 170,251)."""

MAIN_OUTPUT_RESERVE: Final = CLAUDE_CODE_RESPONSE_RESERVE + CLAUDE_CODE_COMPACT_BUFFER
"""Tokens kept free at the top of the main session's window: where Claude Code's own
auto-compaction would have started. From this point on there is still room to write the
handoff file, so the main session's usable limit is the window less this (a small window
keeps less: :data:`RESERVE_WINDOW_DIVISOR`)."""

DEFAULT_RESERVE_CAP: Final = 32_000
"""A runtime model's default output reserve is its largest output, capped here: a coding
agent's replies are tool calls and short text; a bigger reserve only hands off sooner."""

RESERVE_WINDOW_DIVISOR: Final = 4
"""No default reserve takes more than ``window // RESERVE_WINDOW_DIVISOR``: a small window
(a local model's, or a small configured Claude Code window) keeps three quarters of
itself for context. The rule is ``ctxrelay.budget.models.fit_reserve``, for both hosts."""

HANDOFF_INJECT_MAX_BYTES: Final = 16 * 1024
"""Most of a handoff file injected into a fresh session's context at ``/clear``; a
longer file is cut and the session is told to read the rest."""

HANDOFF_RESUME_MAX_AGE_S: Final = 24 * 3600
"""A handoff older than this is not injected at ``/clear``: a ``/clear`` days later is a
new start, not a resume (the file stays, and the resume prompt can still name it)."""

CALL_LINE_WAIT_S: Final = 0.5
"""Longest a hook waits for the transcript to show the response that made its tool call.
Claude Code (2.1.332) writes transcript lines in batches about every 100 ms, so a hook
that starts right after a response can find it not written yet; past this bound the hook
decides without it (it fails open)."""

STOP_REPLY_WAIT_S: Final = 4.0
"""Longest the ``Stop`` hook waits for the turn's last reply to reach the transcript. Under
heavy load Claude Code flushes its batch of lines late: in one of 50 UI handoffs (load
average 10 to 17 on two cores) the reply was not on disk 0.85 s after its timestamp, so
half a second missed the handoff point (with this bound, 50 of 50 at 7 to 21). The wait
ends as soon as the reply is there, and well inside :data:`HOOK_TIMEOUT_S`."""

HOOK_TIMEOUT_S: Final = 10
"""How long a host lets one hook command run before it kills it and carries on (the
``timeout`` of every hook ctxrelay installs, on Claude Code and on Codex), and how long
a probe waits for one. The hook fails open anyway; this bounds a hung filesystem."""

DEFAULT_CONTEXT_WINDOW: Final = 200_000
"""The window of a Claude model whose id does not say otherwise."""

LONG_CONTEXT_WINDOW: Final = 1_000_000
"""The window of 1M-context models: natively 1M ones (the model table says which), and
any id that ends in ``[1m]``."""

# -- the runtime's sizes ------------------------------------------------------------------

NOTES_MAX_BYTES: Final = 8 * 1024
"""How much of the notes file a new window's lead-in carries (``docs/runtime.md``); the
analyzer replays a handoff with a notes file this large."""

HISTORY_RESULT_MAX_BYTES: Final = 16 * 1024
"""The largest ``session_history`` result, in bytes of text."""

HISTORY_SCAN_MAX_BYTES: Final = 2 * 1024 * 1024
"""The most row text one ``session_history`` search reads before it stops."""

HISTORY_ROWS_MAX: Final = 500
"""The most rows one ``session_history`` call lists or reads."""

HISTORY_LINE_MAX_BYTES: Final = 1024 * 1024
"""The most of one row's text a ``session_history`` search or read looks at."""

READ_FILE_MAX_BYTES: Final = 256 * 1024
"""The most ``read_file`` returns in one result: a larger file would flood the window."""

RESULT_MAX_CHARS: Final = 16_000
"""The most text ``list_files`` and ``grep`` return in one result."""

LIST_MAX_ENTRIES: Final = 500
"""The most entries one ``list_files`` call lists."""

GREP_MAX_MATCHES: Final = 200
"""The most matches one ``grep`` call returns."""

GREP_FILE_MAX_BYTES: Final = 2 * 1024 * 1024
"""Larger files are skipped by ``grep`` (generated data, logs): read them in parts."""

BASH_OUTPUT_MAX_CHARS: Final = 16_000
"""What ``bash`` returns of a command's output: the first and last halves of this."""

BASH_TIMEOUT_DEFAULT_S: Final = 120.0
"""The ``bash`` tool's timeout when the model gives none."""

BASH_TIMEOUT_MAX_S: Final = 600.0
"""The longest timeout the ``bash`` tool accepts."""

# -- the analyzer's reader -----------------------------------------------------------------

TRANSCRIPT_LINE_MAX_BYTES: Final = 64 * 1024 * 1024
"""The longest transcript line the analyzer reads (64 MiB): a longer one is skipped and
reported, never held whole, so memory stays bounded on any file (``docs/analyze.md``)."""
