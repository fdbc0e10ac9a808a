"""A host the core does not know installs through it unchanged: the Gemini CLI's
``.gemini/settings.json`` (a ``hooks`` object keyed by its own events, a deny that reads
``{"decision": "deny"}``, timeouts in milliseconds) and OpenCode's plugin file. It pins
that ``ctxrelay.hooks.install`` needs no change for a new host (the Gemini host,
``ctxrelay.gemini.setup``, was then built on it unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxrelay.hooks.install.entries import command_hooks, runs_ours
from ctxrelay.hooks.install.manifest import Manifest
from ctxrelay.hooks.install.merge import Rule
from ctxrelay.hooks.install.probe import check_guard, scratch, state_env

GEMINI = '{\n  "theme": "GitHub",\n  "hooks": {"BeforeTool": [{"matcher": "x", "hooks": []}]}\n}'
RULES = {"hooks": Rule.LISTS}
OURS = {"hooks": runs_ours(lambda command: isinstance(command, str) and "gemini.hook" in command)}


def _gemini_snippet(command: str) -> dict[str, object]:
    events = ["BeforeTool", "AfterAgent", "SessionStart"]
    hooks = command_hooks(events, command, matchers={"BeforeTool": "run_shell_command"})
    for groups in hooks.values():
        groups[0]["hooks"][0]["timeout"] = 10_000  # the Gemini CLI counts milliseconds
    return {"hooks": hooks}


def test_a_gemini_settings_install_and_uninstall_leave_it_as_found(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI)
    for command in ("python -I -m x.gemini.hook", "/venv/bin/python -I -m x.gemini.hook"):
        manifest = Manifest.load(settings.parent)
        manifest.merge_file(settings, _gemini_snippet(command), RULES, ours=OURS, backup=True)
        manifest.save()
    data = json.loads(settings.read_text())
    assert data["theme"] == "GitHub"
    before = [g["hooks"] for g in data["hooks"]["BeforeTool"]]
    assert before == [[], [{"type": "command", "command": command, "timeout": 10_000}]]
    manifest = Manifest.load(settings.parent)
    manifest.unmerge_file(settings, RULES, ours=OURS, backup=True)
    manifest.remove()
    assert settings.read_text() == GEMINI
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_an_opencode_plugin_file_is_copied_and_taken_out_again(tmp_path: Path) -> None:
    folder = tmp_path / ".opencode"
    manifest = Manifest.load(folder)
    assert manifest.copy_files([("plugin/ctxrelay.js", b"export default {}\n")]).added
    manifest.save()
    manifest = Manifest.load(folder)
    assert manifest.remove_copies().removed == ["plugin/ctxrelay.js"]
    manifest.remove()
    assert not folder.exists()  # install made it


def test_the_guard_probe_reads_a_deny_the_hosts_way() -> None:
    deny = json.dumps({"decision": "deny", "reason": "ctxrelay guard"})
    hook = f"grep -q big.txt && printf '%s' '{deny}' || true"
    with scratch("x\n") as root:
        check = check_guard(
            hook,
            lambda bash: json.dumps({"tool_input": {"command": bash}}),
            cwd=root,
            env=state_env(root),
            denies=lambda out: '"decision": "deny"' in out,
        )
    assert check.ok, check.detail
