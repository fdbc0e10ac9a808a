"""Every copy of a Claude Code bound outside ``ctxrelay.budget.bounds`` equals it: the
agent files' ``maxTurns``, the settings snippet and the plugin's hooks, the report-word
rule in the agent prompts, the bounds table in ``docs/claude-code.md``; and the plugin's
code holds no literal copy of a bound at all (it imports them)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxrelay import __version__
from ctxrelay.budget import bounds
from ctxrelay.claude._snippet import hooks_config, plugin_dir, settings_env, snippet
from ctxrelay.claude.hook import HANDLERS

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
    assert int(env["DISABLE_COMPACT"]) == bounds.DISABLE_COMPACT == 1
    assert int(env["BASH_MAX_OUTPUT_LENGTH"]) == bounds.BASH_MAX_OUTPUT_LENGTH


def test_the_shipped_snippet_equals_the_one_install_merges() -> None:
    assert json.loads((PLUGIN / "settings-snippet.json").read_text()) == snippet()


def test_the_snippet_hooks_equal_the_plugins_own_hooks() -> None:
    plugin_hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert plugin_hooks == hooks_config() == snippet()["hooks"]
    assert set(plugin_hooks) == set(HANDLERS), "every handled event runs the hook"


def test_manifest_and_marketplace_agree() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((PROJECT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == manifest["name"] == "ctxrelay"
    assert (PROJECT / entry["source"]).resolve() == PLUGIN
    assert entry["version"] == manifest["version"] == __version__


_COPIES = {
    "SUBAGENT_CONTEXT_MAX": bounds.SUBAGENT_CONTEXT_MAX,
    "HAIKU_CONTEXT_MAX": bounds.HAIKU_CONTEXT_MAX,
    "READ_MAX_BYTES": bounds.READ_MAX_BYTES,
    "BASH_MAX_OUTPUT_LENGTH": bounds.BASH_MAX_OUTPUT_LENGTH,
    "MAIN_OUTPUT_RESERVE": bounds.MAIN_OUTPUT_RESERVE,
}


def _literal_forms(value: int) -> set[str]:
    forms = {str(value), f"{value:_}", f"{value:,}"}
    if value % (1024 * 1024) == 0:
        forms.add(f"{value // (1024 * 1024)} * 1024 * 1024")
    return forms


@pytest.mark.parametrize("name", sorted(_COPIES))
def test_the_plugin_code_imports_bounds_instead_of_copying_them(name: str) -> None:
    forms = _literal_forms(_COPIES[name])
    pattern = re.compile(r"(?<![\w.,])(" + "|".join(map(re.escape, forms)) + r")(?![\w,])")
    offenders = []
    for path in sorted((PROJECT / "src" / "ctxrelay" / "claude").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code) and not code.lstrip().startswith(('"', "'")):
                offenders.append(f"{path.relative_to(PROJECT)}:{number}: {line.strip()}")
    assert not offenders, f"copies of {name}; import it from ctxrelay.budget.bounds"


def test_the_docs_bounds_table_equals_the_bounds() -> None:
    doc = PROJECT / "docs" / "claude-code.md"
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]+?) \|", doc.read_text(), re.MULTILINE))
    expected = {
        "SUBAGENT_CONTEXT_MAX": f"{bounds.SUBAGENT_CONTEXT_MAX:,} tokens",
        "HAIKU_CONTEXT_MAX": f"{bounds.HAIKU_CONTEXT_MAX:,} tokens",
        "TURNS_LEFT_AT": f"{bounds.TURNS_LEFT_AT} turns",
        "REPORT_MAX_WORDS": f"{bounds.REPORT_MAX_WORDS} words",
        "AGENT_MAX_TURNS": ", ".join(f"{k} {v}" for k, v in bounds.AGENT_MAX_TURNS.items()),
        "READ_MAX_BYTES": f"{bounds.READ_MAX_BYTES // (1024 * 1024)} MiB",
        "BASH_MAX_OUTPUT_LENGTH": f"{bounds.BASH_MAX_OUTPUT_LENGTH:,} characters",
        "DISABLE_COMPACT": str(bounds.DISABLE_COMPACT),
        "MAIN_OUTPUT_RESERVE": f"{bounds.MAIN_OUTPUT_RESERVE:,} tokens",
        "CALL_LINE_WAIT_S": f"{bounds.CALL_LINE_WAIT_S:g} s",
        "FORK_MAX_TURNS": f"{bounds.FORK_MAX_TURNS} turns",
    }
    for name, value in expected.items():
        assert rows.get(name) == value, f"docs/claude-code.md: the {name} row"
