"""Every copy of a Claude Code bound outside ``ctxrelay.budget.bounds`` equals it: the
agent files' ``maxTurns``, the settings snippet and the plugin's hooks, the report-word
rule in the agent prompts, the bounds table in ``docs/claude-code.md``, the default
threshold's users; and no code under ``src/`` holds a literal copy of a bound (it imports
them)."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from ctxrelay import __version__
from ctxrelay.budget import bounds
from ctxrelay.claude.host import CLAUDE
from ctxrelay.claude.setup._snippet import (
    hooks_config,
    plugin_dir,
    plugin_hook_command,
    settings_env,
    snippet,
)

PROJECT = Path(__file__).resolve().parents[2]
PLUGIN = plugin_dir()


def front_matter(path: Path) -> tuple[dict[str, str], str]:
    """The ``key: value`` front matter of an agent file and its body."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path.name}: no front matter"
    head, body = text[4:].split("\n---\n", 1)
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip().strip('"')
    return fields, body


def test_the_plugin_directory_is_inside_the_package() -> None:
    assert PLUGIN == PROJECT / "src" / "ctxrelay" / "claude" / "plugin"


def test_agent_files_are_exactly_the_bounded_agent_types() -> None:
    names = {p.stem for p in (PLUGIN / "agents").glob("*.md")}
    assert names == set(bounds.AGENT_MAX_TURNS)


@pytest.mark.parametrize("name", sorted(bounds.AGENT_MAX_TURNS))
def test_each_agent_file_pins_its_max_turns_and_the_report_rule(name: str) -> None:
    fields, body = front_matter(PLUGIN / "agents" / f"{name}.md")
    assert fields["name"] == name
    assert int(fields["maxTurns"]) == bounds.AGENT_MAX_TURNS[name]
    assert fields["description"]
    assert f"within {bounds.REPORT_MAX_WORDS} words" in body
    assert len(body.split()) > 100, "a real system prompt, not a stub"


def test_the_smallest_max_turns_stays_above_turns_left_at() -> None:
    assert min(bounds.AGENT_MAX_TURNS.values()) > bounds.TURNS_LEFT_AT


def test_the_snippet_env_holds_the_bounds() -> None:
    env = json.loads((PLUGIN / "settings-snippet.json").read_text())["env"]
    assert env == settings_env()
    assert int(env["DISABLE_AUTO_COMPACT"]) == bounds.DISABLE_AUTO_COMPACT == 1
    assert int(env["BASH_MAX_OUTPUT_LENGTH"]) == bounds.BASH_MAX_OUTPUT_LENGTH


def test_the_shipped_snippet_equals_the_one_install_merges() -> None:
    assert json.loads((PLUGIN / "settings-snippet.json").read_text()) == snippet()


def test_the_snippet_hooks_equal_the_plugins_own_hooks() -> None:
    plugin_hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert plugin_hooks == hooks_config(plugin_hook_command)
    assert hooks_config() == snippet()["hooks"]
    assert set(plugin_hooks) == set(CLAUDE.handlers), "every handled event runs the hook"


def test_manifest_and_marketplace_agree() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((PROJECT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == manifest["name"] == "ctxrelay"
    assert (PROJECT / entry["source"]).resolve() == PLUGIN
    assert entry["version"] == manifest["version"] == __version__


# Numbers in code under src/ that equal a bound but mean something else, with the reason.
# A new entry here is a decision; a new copy of a bound is a bug.
_SAME_NUMBER_OTHER_MEANING: dict[tuple[str, int], str] = {
    ("hooks/guard/_shell.py", 20_000): "VISIT_MAX: the shell parser's node budget",
    ("claude/extras/statusline.py", 1_000_000): "a million: the M of 1.2M",
    ("cli/_ids.py", 100_000): "how many sessions a prefix lookup lists",
    ("pricing.py", 1_000_000): "prices are USD per million tokens",
    ("pricing.py", 100_000): "Haiku 5.5's long-prompt price threshold",
    ("pricing.py", 200_000): "Sonnet 4.x's and the Gemini Pro models' long-prompt threshold",
    ("runtime/tools/coding.py", 8 * 1024): "how much of a file grep sniffs for a NUL byte",
    ("store/conformance.py", 256 * 1024): "the size of a test row",
    ("store/conformance.py", 20_000): "the length of a test text",
    ("transcripts/_codex.py", 16 * 1024): "how much of a file's head tells its format",
    ("transcripts/_hot.py", 256 * 1024): "HOT_TAIL_BYTES: the transcript tail the hook reads",
    ("transcripts/_hot.py", 64 * 1024 * 1024): "TAIL_MAX_BYTES: how far back a tail read looks",
    ("transcripts/_since.py", 64 * 1024 * 1024): "SINCE_MAX_BYTES: how far a read after looks",
    ("transcripts/_scan.py", 1024 * 1024): "BLOCK_BYTES: how much of a transcript one read takes",
    ("analyze/_store.py", 10_000): "MAX_SESSIONS: how many sessions the analyzer keeps",
    ("store/conformance.py", 10_000): "a limit above any test's row count",
    ("analyze/_replay.py", 8_000): "DEFAULT_RELOAD_TOKENS: what a fresh chain reloads",
}
# The bounds whose numbers are distinctive enough to find (counts and seconds below
# 1,000 are everywhere); the two files that own numbers are not scanned.
_PINNED = {
    name: value
    for name in bounds.__all__
    if isinstance(value := getattr(bounds, name), int) and not isinstance(value, bool)
    if value >= 1_000
}
_OWNERS = {"budget/bounds.py", "budget/models.py"}
_SRC = PROJECT / "src" / "ctxrelay"


def _numbers(source: str) -> list[tuple[int, int | float | complex]]:
    """``(line, value)`` of every number in code (strings and comments skipped), a
    product such as ``16 * 1024`` counted as its value."""
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type in (tokenize.NUMBER, tokenize.OP, tokenize.NAME, tokenize.STRING)
    ]
    found: list[tuple[int, int | float | complex]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type != tokenize.NUMBER:
            i += 1
            continue
        value = ast.literal_eval(token.string)
        while (
            i + 2 < len(tokens)
            and tokens[i + 1].string == "*"
            and tokens[i + 2].type == tokenize.NUMBER
        ):
            value *= ast.literal_eval(tokens[i + 2].string)
            i += 2
        found.append((token.start[0], value))
        i += 1
    return found


def test_no_code_under_src_copies_a_bound() -> None:
    offenders = []
    for path in sorted(_SRC.rglob("*.py")):
        relative = path.relative_to(_SRC).as_posix()
        if relative in _OWNERS:
            continue
        for line, value in _numbers(path.read_text(encoding="utf-8")):
            names = [n for n, v in _PINNED.items() if v == value]
            if names and (relative, value) not in _SAME_NUMBER_OTHER_MEANING:
                offenders.append(f"src/ctxrelay/{relative}:{line}: {value} ({', '.join(names)})")
    assert not offenders, "copies of bounds; import them from ctxrelay.budget.bounds"


def test_the_scan_finds_a_copy() -> None:
    # The scanner itself: a copy written as a product, one in a keyword, none in a string.
    found = _numbers('X = 16 * 1024\nf(limit=33_000)\ns = "85000"  # 85000\n')
    assert found == [(1, 16 * 1024), (2, 33_000)]


def test_every_allowed_number_is_still_there() -> None:
    # An entry whose number left its file is stale: it would hide a future copy.
    for relative, value in _SAME_NUMBER_OTHER_MEANING:
        numbers = {v for _, v in _numbers((_SRC / relative).read_text(encoding="utf-8"))}
        assert value in numbers, f"{relative}: {value} is gone; drop its entry"


def test_the_default_threshold_has_one_owner(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxrelay.analyze._policies import DEFAULT_POLICIES
    from ctxrelay.budget import Budget
    from ctxrelay.cli import main
    from ctxrelay.cli.demo import DEMO_BUDGET

    assert bounds.CONTEXT_PERCENT == bounds.DEFAULT_THRESHOLD
    assert Budget(limit=200_000, output_reserve=1).threshold == bounds.DEFAULT_THRESHOLD
    assert DEMO_BUDGET.threshold == bounds.DEFAULT_THRESHOLD
    assert main(["run", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert f"default {float(bounds.DEFAULT_THRESHOLD)})" in shown
    handoff = [p for p in DEFAULT_POLICIES if p.kind == "handoff"]
    assert [p.threshold for p in handoff] == [bounds.DEFAULT_THRESHOLD]


def test_the_docs_bounds_table_equals_the_bounds() -> None:
    doc = PROJECT / "docs" / "claude-code.md"
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]+?) \|", doc.read_text(), re.MULTILINE))
    expected = {
        "SUBAGENT_CONTEXT_MAX": f"{bounds.SUBAGENT_CONTEXT_MAX:,} tokens",
        "HAIKU_CONTEXT_MAX": f"{bounds.HAIKU_CONTEXT_MAX:,} tokens",
        "TURNS_LEFT_AT": f"{bounds.TURNS_LEFT_AT} turns",
        "REPORT_MAX_WORDS": f"{bounds.REPORT_MAX_WORDS} words",
        "AGENT_MAX_TURNS": ", ".join(f"{k} {v}" for k, v in bounds.AGENT_MAX_TURNS.items()),
        "PRINT_BIG_BYTES": f"{bounds.PRINT_BIG_BYTES:,} bytes",
        "PRINT_PAGE_BYTES": f"{bounds.PRINT_PAGE_BYTES:,} bytes",
        "READ_ROOM_SHARE": str(bounds.READ_ROOM_SHARE),
        "BASH_MAX_OUTPUT_LENGTH": f"{bounds.BASH_MAX_OUTPUT_LENGTH:,} characters",
        "DISABLE_AUTO_COMPACT": str(bounds.DISABLE_AUTO_COMPACT),
        "MAIN_OUTPUT_RESERVE": f"{bounds.MAIN_OUTPUT_RESERVE:,} tokens",
        "CALL_LINE_WAIT_S": f"{bounds.CALL_LINE_WAIT_S:g} s",
        "FORK_MAX_TURNS": f"{bounds.FORK_MAX_TURNS} turns",
    }
    for name, value in expected.items():
        assert rows.get(name) == value, f"docs/claude-code.md: the {name} row"


def test_the_usable_limit_keeps_room_below_claude_codes_block_for_the_handoff_write() -> None:
    # Denied from the usable limit on, the model still needs a request or two to write
    # the handoff: they must go out below the point where Claude Code sends nothing.
    room = bounds.MAIN_OUTPUT_RESERVE - bounds.CLAUDE_CODE_BLOCK_RESERVE
    assert room >= 10_000
