"""``ctxrelay codex install | doctor | uninstall`` against the real Codex CLI, offline:
after install (trust through ``codex app-server``, no bypass flag anywhere) a ``cat`` of
a big file is denied by ctxrelay inside a real ``codex exec`` and the model is told
what to run instead, and a repeat print of an unchanged file is denied too; doctor
reports each hook's trust and exits 1 on an untrusted one;
uninstall leaves ``hooks.json`` and ``config.toml`` byte for byte as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import PRINT_BIG_BYTES, PRINT_PAGE_BYTES
from ctxrelay.cli import main as ctxrelay
from ctxrelay.codex.setup.appserver import AppServer, trust_edit
from ctxrelay.codex.setup.install import EVENTS, codex_env
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.codex._cli import codex_cli
from tests.e2e._codex import codex_home, run_exec, tool_outputs

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

USER_HOOKS = """{
    "hooks": {
        "SessionStart": [ { "hooks": [ { "type": "command", "command": "true" } ] } ]
    }
}
"""


def json_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = ctxrelay(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def big_file(project: Path) -> Path:
    path = project / "big.log"
    lines = 3 * PRINT_BIG_BYTES // 10
    path.write_text("".join(f"line {i:05d}\n" for i in range(lines)), encoding="utf-8")
    return path


def test_install_trusts_the_hooks_and_codex_exec_denies_a_big_cat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        Step(tool_calls=[ToolUse("exec_command", {"cmd": "cat big.log"}, id="call_cat")]),
        Step(tool_calls=[ToolUse("exec_command", {"cmd": "cat small.txt"}, id="call_small")]),
        Step(text="read it"),
    ]
    with OpenAIServer(steps) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        big = big_file(project)
        (project / "small.txt").write_text("hello\n", encoding="utf-8")
        code, installed = json_of(capsys, "codex", "install", "--user", "--json")
        assert code == 0, installed
        assert installed["trust"]["ok"] is True
        assert {h["trust"] for h in installed["trust"]["hooks"]} == {"trusted"}
        config = (home / "config.toml").read_text(encoding="utf-8")
        assert "[hooks.state." in config  # Codex wrote the trust, with its own hash

        events = run_exec(project, "read the log")  # no --dangerously-bypass-hook-trust

    denied, small = tool_outputs(server)
    assert denied.startswith("Command blocked by PreToolUse hook: ctxrelay guard: ")
    assert f"head -c {PRINT_PAGE_BYTES} {big}" in denied
    # Codex appends ". Command: <cmd>" once: the reason left the period and the command out.
    assert denied.endswith(f"rg -n PATTERN {big}. Command: cat big.log")
    assert "hello" in small  # a small file prints
    ran = [e["item"] for e in events if e.get("type") == "item.completed"]
    commands = [i["command"] for i in ran if i.get("type") == "command_execution"]
    assert commands == ["/bin/bash -lc 'cat small.txt'"]  # the big cat never ran


def test_doctor_reports_each_hooks_trust_and_fails_on_an_untrusted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        monkeypatch.chdir(project)
        code, _ = json_of(capsys, "codex", "install", "--user", "--json")
        assert code == 0
        code, report = json_of(capsys, "codex", "doctor", "--json")
        assert code == 0, report["problems"]
        assert sorted((h["event"], h["trust"]) for h in report["trust"]) == sorted(
            (event[0].lower() + event[1:], "trusted") for event in EVENTS
        )
        assert all(c["ok"] for c in report["checks"])
        # The user edits ctxrelay's PreToolUse hook: Codex no longer trusts it and would
        # skip it without a word; doctor says so and exits 1.
        hooks = home / "hooks.json"
        data = json.loads(hooks.read_text(encoding="utf-8"))
        data["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 20
        hooks.write_text(json.dumps(data), encoding="utf-8")
        code, report = json_of(capsys, "codex", "doctor", "--json")
        assert code == 1
        assert ("preToolUse", "modified") in [(h["event"], h["trust"]) for h in report["trust"]]
        assert any("/hooks" in p and str(hooks) in p for p in report["problems"])
        # The fix names the user's layer (without --user it would install a second copy).
        assert any("'ctxrelay codex install --user'" in p for p in report["problems"])
        # Install again: trusted again.
        assert ctxrelay(["codex", "install", "--user"]) == 0
        assert ctxrelay(["codex", "doctor"]) == 0
        out = capsys.readouterr().out
        assert "preToolUse: trusted" in out
        assert out.rstrip().endswith("Everything works.")


def test_uninstall_leaves_the_files_as_they_were_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        home, _ = codex_home(tmp_path, server, monkeypatch)
        hooks, config = home / "hooks.json", home / "config.toml"
        hooks.write_text(USER_HOOKS, encoding="utf-8")
        before = {p: p.read_bytes() for p in (hooks, config)}
        assert ctxrelay(["codex", "install", "--user"]) == 0
        assert hooks.read_bytes() != before[hooks]
        assert ctxrelay(["codex", "uninstall", "--user"]) == 0
        assert {p: p.read_bytes() for p in (hooks, config)} == before
        assert not (home / "ctxrelay-install.json").exists()
        # Installed where there was no hooks.json and no config.toml: neither is left.
        hooks.unlink()
        config.unlink()
        assert ctxrelay(["codex", "install", "--user"]) == 0
        assert config.exists()
        assert ctxrelay(["codex", "uninstall", "--user"]) == 0
        assert not hooks.exists()
        assert not config.exists()
        capsys.readouterr()


def test_a_project_codex_does_not_trust_gets_one_sentence_and_no_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        before = (home / "config.toml").read_bytes()
        code, result = json_of(capsys, "codex", "install", "--project-dir", str(project), "--json")
        assert code == 1
        assert result["trust"]["problem"].startswith(
            f"Codex loads {project / '.codex'} only in a trusted project"
        )
        assert (home / "config.toml").read_bytes() == before  # no project trust set
        code, report = json_of(capsys, "codex", "doctor", "--project-dir", str(project), "--json")
        assert code == 1
        assert any("trusted project" in p for p in report["problems"])
        assert ctxrelay(["codex", "uninstall", "--project-dir", str(project)]) == 0
        assert not (project / ".codex").exists()
        capsys.readouterr()


def test_a_second_whole_print_of_an_unchanged_file_is_denied_as_a_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = {"cmd": "cat notes.txt"}
    steps = [
        Step(tool_calls=[ToolUse("exec_command", cat, id="call_1")]),
        Step(tool_calls=[ToolUse("exec_command", cat, id="call_2")]),
        Step(tool_calls=[ToolUse("exec_command", {"cmd": "head -n 1 notes.txt"}, id="call_3")]),
        Step(text="done"),
    ]
    with OpenAIServer(steps) as server:
        _, project = codex_home(tmp_path, server, monkeypatch)
        (project / "notes.txt").write_text("the plan\nstep two\n", encoding="utf-8")
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()
        run_exec(project, "read the notes")
    first, again, part = tool_outputs(server)
    assert "the plan" in first
    notes = project / "notes.txt"
    assert again.startswith(
        f"Command blocked by PreToolUse hook: ctxrelay guard: you already printed {notes} in full"
    )
    assert again.endswith(". Command: cat notes.txt")
    assert "the plan" in part  # a part of it is never a repeat


def test_install_keeps_a_symlinked_hooks_json_and_the_config_toml_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        home, _ = codex_home(tmp_path, server, monkeypatch)
        dotfiles = tmp_path / "dotfiles" / "hooks.json"
        dotfiles.parent.mkdir()
        dotfiles.write_text(USER_HOOKS, encoding="utf-8")
        (home / "hooks.json").symlink_to(dotfiles)
        (home / "config.toml").chmod(0o644)
        code, installed = json_of(capsys, "codex", "install", "--user", "--json")
        assert code == 0, installed
        assert installed["trust"]["ok"] is True  # Codex read the hooks through the link
        assert (home / "hooks.json").is_symlink()
        assert "ctxrelay.codex.hook" in dotfiles.read_text(encoding="utf-8")
        assert (home / "config.toml").stat().st_mode & 0o777 == 0o644  # Codex writes 0600
        code, _ = json_of(capsys, "codex", "uninstall", "--user", "--json")
        assert code == 0
        assert (home / "hooks.json").is_symlink()
        assert dotfiles.read_text(encoding="utf-8") == USER_HOOKS
        assert (home / "config.toml").stat().st_mode & 0o777 == 0o644


def _in_a_trusted_project(
    tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """:func:`codex_home`, in its project, which Codex trusts (so it loads its layer)."""
    home, project = codex_home(tmp_path, server, monkeypatch)
    with (home / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    monkeypatch.chdir(project)
    return home, project


def test_the_layers_are_explicit_in_doctor_and_uninstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        _in_a_trusted_project(tmp_path, server, monkeypatch)
        assert json_of(capsys, "codex", "install", "--user", "--json")[0] == 0
        assert json_of(capsys, "codex", "install", "--json")[0] == 0
        code, report = json_of(capsys, "codex", "doctor", "--json")
        assert code == 1  # each hook would answer twice
        assert any("in both layers" in p for p in report["problems"]), report["problems"]
        code, removed = json_of(capsys, "codex", "uninstall", "--json")
        assert code == 0
        assert any("uninstall --user" in n for n in removed["notes"]), removed
        code, report = json_of(capsys, "codex", "doctor", "--json")
        assert code == 0, report["problems"]


def _trust_state(home: Path, project: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Codex's view of the user layer: each listed hook's trust by key, and each trust
    record of ``hooks.json`` in ``config.toml`` by key (its trusted hash)."""
    with AppServer(codex_cli(), codex_env(home), cwd=project) as server:
        listed = {h.key: h.trust for h in server.hooks(project).hooks}
        hooks = server.user_config(project).get("hooks") or {}
    prefix = f"{home / 'hooks.json'}:"
    state = hooks.get("state") or {} if isinstance(hooks, dict) else {}
    return listed, {k: v["trusted_hash"] for k, v in state.items() if k.startswith(prefix)}


def _trust_as_the_user(home: Path, project: Path, command: str) -> None:
    """What the user does in /hooks: trust the hook running ``command``."""
    with AppServer(codex_cli(), codex_env(home), cwd=project) as server:
        hook = next(h for h in server.hooks(project).hooks if h.command == command)
        server.write([trust_edit([hook])])


def test_trust_records_stay_exactly_for_the_hooks_there_when_hooks_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def groups(*commands: str) -> list[dict[str, Any]]:
        return [{"hooks": [{"type": "command", "command": c}]} for c in commands]

    with OpenAIServer([]) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        hooks_json = home / "hooks.json"
        hooks_json.write_text(USER_HOOKS, encoding="utf-8")
        _trust_as_the_user(home, project, "true")
        assert json_of(capsys, "codex", "install", "--user", "--json")[0] == 0
        # The user adds a hook after ctxrelay's and trusts it, then drops their first
        # one: every SessionStart group moves up a place.
        data = json.loads(hooks_json.read_text(encoding="utf-8"))
        data["hooks"]["SessionStart"].append(groups("echo later")[0])
        hooks_json.write_text(json.dumps(data), encoding="utf-8")
        _trust_as_the_user(home, project, "echo later")
        del data["hooks"]["SessionStart"][0]
        hooks_json.write_text(json.dumps(data), encoding="utf-8")
        listed, records = _trust_state(home, project)
        assert set(listed.values()) != {"trusted"}  # the records name the old places

        code, installed = json_of(capsys, "codex", "install", "--user", "--json")
        assert code == 0, installed
        listed, records = _trust_state(home, project)
        assert set(records) == set(listed)  # a record for each hook there, no other
        assert set(listed.values()) == {"trusted"}  # the user's moved hook kept its trust
        assert len(listed) == len(EVENTS) + 1

        # Uninstall: the user's hook moves up into ctxrelay's place, its trust with it.
        assert json_of(capsys, "codex", "uninstall", "--user", "--json")[0] == 0
        assert json.loads(hooks_json.read_text(encoding="utf-8"))["hooks"] == {
            "SessionStart": groups("echo later")
        }
        listed, records = _trust_state(home, project)
        assert listed == {f"{hooks_json}:session_start:0:0": "trusted"}
        assert set(records) == set(listed)


TOML_HOOKS = """
[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
type = "command"
command = "true"
"""


def test_hooks_in_config_toml_are_said_once_and_a_clean_install_stays_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(lambda body: Step(text="hi")) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        config = home / "config.toml"
        clean = config.read_text(encoding="utf-8")
        config.write_text(clean + TOML_HOOKS, encoding="utf-8")
        # A hooks.json beside hooks in config.toml: Codex would warn on every run.
        assert ctxrelay(["codex", "install", "--user"]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1  # one sentence, saying what is wrong and where
        assert str(config) in err
        assert "loading hooks from both" in err
        assert not (home / "hooks.json").exists()
        assert config.read_text(encoding="utf-8") == clean + TOML_HOOKS

        # The user moves their hook into hooks.json: install, then every run, is quiet.
        config.write_text(clean, encoding="utf-8")
        (home / "hooks.json").write_text(USER_HOOKS, encoding="utf-8")
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()
        assert ctxrelay(["codex", "install", "--user"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert out.startswith("nothing to do:")
        assert "note:" not in out
        events = run_exec(project, "say hi")
        errors = [e["item"] for e in events if e.get("item", {}).get("type") == "error"]
        assert errors == []

        # The user adds hooks to config.toml again: install says so, once.
        config.write_text(config.read_text(encoding="utf-8") + TOML_HOOKS, encoding="utf-8")
        code, again = json_of(capsys, "codex", "install", "--user", "--json")
        assert code == 0
        assert [n for n in again["notes"] if "[hooks]" in n] == [
            f"{config} defines hooks in [hooks] (SessionStart), and Codex warns on every run "
            'when one layer also has hooks.json ("loading hooks from both"): move those '
            f"tables into {home / 'hooks.json'} as JSON (the same format)"
        ]


def test_a_user_install_after_a_project_install_leaves_no_stale_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer([]) as server:
        home, project = _in_a_trusted_project(tmp_path, server, monkeypatch)
        assert json_of(capsys, "codex", "install", "--json")[0] == 0
        layer = project / ".codex" / "hooks.json"
        # The user moves to their own layer: the project's file goes by hand (a clean
        # checkout), then install --user.
        layer.unlink()
        assert json_of(capsys, "codex", "install", "--user", "--json")[0] == 0
        with AppServer(codex_cli(), codex_env(home), cwd=project) as server_:
            listed = {h.key for h in server_.hooks(project).hooks}
            hooks = server_.user_config(project).get("hooks") or {}
        records = set(hooks.get("state") or {}) if isinstance(hooks, dict) else set()
        assert records == listed  # none for the project's file that is gone
        assert len(listed) == len(EVENTS)
