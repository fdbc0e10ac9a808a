"""What the Stop hook tells the auto-handoff mod, and when, through the real hook entry
and real transcript files; the mod's files as install lays them out; and the mod itself on
Claude Code's own engine (``automod.test.ts`` under ``claude plugin test``)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.claude import _mod_channel, _state, handoff
from ctxrelay.claude.extras import automod
from ctxrelay.claude.setup._snippet import plugin_dir
from ctxrelay.claude.setup.install import install, uninstall
from tests.claude._handoff import (
    SESSION,
    Transcript,
    continued,
    isolate,
    run_hook,
    stop_payload,
)
from tests.conftest import claude_cli

WINDOW = 200_000
AT = WINDOW * CONTEXT_PERCENT // 100
PID = "4242"


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for var in (_mod_channel.MOD_ENV, _mod_channel.ATTENDED_ENV, "CLAUDE_PID"):
        monkeypatch.delenv(var, raising=False)
    return isolate(monkeypatch, tmp_path)


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "home" / ".claude" / "projects" / "p" / f"{SESSION}.jsonl")


def _interactive(monkeypatch: pytest.MonkeyPatch, *, mod: bool) -> None:
    """A hook of Claude Code's interactive UI, with the mod loaded or not."""
    monkeypatch.setenv("CLAUDE_PID", PID)
    monkeypatch.setenv(_mod_channel.ATTENDED_ENV, "1")
    if mod:
        monkeypatch.setenv(_mod_channel.MOD_ENV, PID)


def _signal(answer: dict[str, object] | None) -> dict[str, object] | None:
    """The entry for the mod in a Stop answer, decoded."""
    if answer is None or "hookSpecificOutput" not in answer:
        return None
    out = answer["hookSpecificOutput"]
    assert isinstance(out, dict)
    assert out["hookEventName"] == "Stop"
    text = out["additionalContext"]
    assert isinstance(text, str)
    last = text.rsplit("\n", 1)[-1]  # the mod's line is the entry's last
    if not last.startswith(_mod_channel.MARK):
        assert _mod_channel.MARK not in text
        return None
    decoded = json.loads(last[len(_mod_channel.MARK) :])
    assert isinstance(decoded, dict)
    return decoded


def _to_ready(transcript: Transcript, project: Path) -> tuple[dict[str, object], Path]:
    """One auto handoff up to the file written: the Stop answer that asked for it, and
    the file. The next Stop sees the file."""
    transcript.prompt("go on")
    transcript.assistant(context=AT, text="done")
    asked = run_hook(stop_payload(transcript, project))
    assert asked is not None
    assert "Hand off now" in str(continued(asked))
    job = _state.session_state(SESSION).get("handoff")
    path = Path(job["path"])
    transcript.context(str(continued(asked)))
    path.write_text("# Handoff\n## Next step\nrun make test\n")
    transcript.assistant(context=AT + 900, tools=[("Write", {"file_path": str(path)})])
    transcript.assistant(context=AT + 1_000, text="written")
    return asked, path


def test_with_the_mod_the_hook_asks_it_to_hold_then_to_clear_once(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    _interactive(monkeypatch, mod=True)
    asked, path = _to_ready(transcript, project)
    assert _signal(asked) == {"act": "hold"}
    # The write prompt comes first in the same entry, and goes on to the model.
    prompt, line = str(continued(asked)).rsplit("\n\n", 1)
    assert prompt.startswith("[ctxrelay] Hand off now")
    assert str(path) in prompt
    assert line.startswith(_mod_channel.MARK)
    ready = run_hook(stop_payload(transcript, project, stop_hook_active=True))
    assert _signal(ready) == {
        "act": "clear",
        "id": str(path),
        "prompt": _mod_channel.resume_text(str(path)),
    }
    assert ready is not None
    assert ready["systemMessage"] == _mod_channel.cleared_text(str(path))
    assert "Run /clear" not in str(ready["systemMessage"])
    assert _state.session_state(SESSION).get("handoff")["automod"] == "sent"
    # Any later Stop of this session (this process or a restarted one): never again.
    transcript.prompt("more")
    transcript.assistant(context=AT + 2_000, text="more")
    again = run_hook(stop_payload(transcript, project))
    assert _signal(again) is None


def test_without_the_mod_auto_stops_at_run_clear_and_says_why_once(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    _interactive(monkeypatch, mod=False)
    asked, path = _to_ready(transcript, project)
    assert _signal(asked) is None
    ready = run_hook(stop_payload(transcript, project, stop_hook_active=True))
    assert ready is not None
    assert _signal(ready) is None
    shown = str(ready["systemMessage"])
    assert f"handoff written to {path}. Run /clear" in shown
    assert _mod_channel.not_loaded_text() in shown
    assert _mod_channel.MIN_VERSION in shown
    # A second handoff in the same session (the skill, this time): no second note.
    path2 = handoff.new_handoff_path(project)
    path2.write_text("# Handoff 2\n")
    transcript.prompt("/ctxrelay-handoff")
    transcript.assistant(context=AT + 1_700, tools=[("Write", {"file_path": str(path2)})])
    transcript.assistant(context=AT + 1_800, text="written")
    assert _state.session_state(SESSION).get("handoff")["automod"] == "absent"
    again = run_hook(stop_payload(transcript, project))
    assert again is None
    assert _state.session_state(SESSION).get("handoff")["path"] == str(path2)


@pytest.mark.parametrize(
    ("env", "mode"),
    [
        ({"CLAUDE_PID": PID, _mod_channel.MOD_ENV: PID}, "manual"),  # not auto
        ({"CLAUDE_PID": "7", _mod_channel.MOD_ENV: PID}, "auto"),  # a nested claude's hook
        ({"CLAUDE_PID": PID, _mod_channel.ATTENDED_ENV: "0"}, "auto"),  # headless
    ],
)
def test_no_signal_and_no_note_outside_an_interactive_auto_session_with_the_mod(
    project: Path,
    transcript: Transcript,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    mode: str,
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if mode == "manual":
        monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "manual")
        transcript.prompt("go on")
        transcript.assistant(context=AT, text="done")
        answer = run_hook(stop_payload(transcript, project))
        assert answer is not None
        assert _signal(answer) is None
        return
    asked, _ = _to_ready(transcript, project)
    assert _signal(asked) is None
    ready = run_hook(stop_payload(transcript, project, stop_hook_active=True))
    assert ready is not None
    assert _signal(ready) is None
    assert "Run /clear" in str(ready["systemMessage"])
    assert _mod_channel.not_loaded_text() not in str(ready["systemMessage"])


def test_the_module_reads_what_python_writes() -> None:
    """``automod.js`` spells the protocol's names as :mod:`ctxrelay.claude._mod_channel`
    owns them, and names only hooks this Claude Code has."""
    source = (plugin_dir() / "hooks" / automod.MODULE).read_text()
    assert f"const MARK = '{_mod_channel.MARK}'" in source
    assert f"$.env.set('{_mod_channel.MOD_ENV}', CLAUDE_PID)" in source
    assert "'act'" not in source  # reads job.act, as Python writes it
    assert "job.act === 'clear'" in source
    hooks = set(re.findall(r"on\('([a-zA-Z.]+)'", source))
    assert hooks == {
        "session.start",
        "classic.Stop",
        "turn.complete",
        "prompt.submit",
        "prompt.change",
    }
    plugin_hooks = json.loads((plugin_dir() / "hooks" / "hooks.json").read_text())
    assert plugin_hooks["modules"] == [f"./{automod.MODULE}"]


def test_install_lays_the_mod_out_as_a_skills_folder_plugin_and_uninstall_removes_it(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    assert not automod.status(settings.parent).installed
    result = install(settings)
    mod = settings.parent / "skills" / automod.NAME
    for rel, _ in automod.files():
        assert rel in result.files_added
    manifest = json.loads((mod / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == automod.NAME
    assert json.loads((mod / "hooks" / "hooks.json").read_text()) == {
        "modules": [f"./{automod.MODULE}"]
    }
    assert (mod / "hooks" / automod.MODULE).read_bytes() == automod.module_source()
    found = automod.status(settings.parent)
    assert found.installed
    assert found.current
    assert "is in" in found.sentence
    # A changed copy: reported, and kept by uninstall (it is the user's now).
    (mod / "hooks" / automod.MODULE).write_text("// mine\n")
    assert not automod.status(settings.parent).current
    assert "differs" in automod.status(settings.parent).sentence
    (mod / "hooks" / automod.MODULE).write_bytes(automod.module_source())
    removed = uninstall(settings)
    assert all(rel in removed.files_removed for rel, _ in automod.files())
    assert not mod.exists()
    assert "not in" in automod.status(settings.parent).sentence


def test_the_mods_texts_are_shown_in_the_prompt_surface_as_produced() -> None:
    surface = (Path(__file__).resolve().parents[3] / "docs" / "claude-code.md").read_text()
    path = "/home/user/project/.ctxrelay/handoff/handoff-20261130T081500Z.md"
    for text in (
        _mod_channel.cleared_text(path),
        _mod_channel.resume_text(path),
        _mod_channel.not_loaded_text(),
    ):
        assert f"```text\n{text}\n```" in surface, text[:60]
    source = (plugin_dir() / "hooks" / automod.MODULE).read_text()
    for text in (
        "ctxrelay: held until the fresh session has resumed from the handoff",
        "ctxrelay: the handoff did not go through: ",
    ):
        assert text in source
        assert f"```text\n{text}" in surface


def test_a_handoff_made_ready_without_the_mod_is_never_cleared_by_it_later(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ctxrelay claude run`` (headless) readies a handoff and starts the fresh session
    itself; resuming the old session later in the interactive UI, with the mod, must not
    clear it a second time."""
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    monkeypatch.setenv("CLAUDE_PID", PID)
    monkeypatch.setenv(_mod_channel.ATTENDED_ENV, "0")
    _to_ready(transcript, project)
    ready = run_hook(stop_payload(transcript, project, stop_hook_active=True))
    assert _signal(ready) is None
    _interactive(monkeypatch, mod=True)
    transcript.prompt("resumed")
    transcript.assistant(context=AT + 2_000, text="more")
    assert _signal(run_hook(stop_payload(transcript, project))) is None


def test_the_first_version_that_loads_mods_is_the_one_doctor_checks() -> None:
    from ctxrelay.claude.setup.doctor import MODS_MIN_VERSION

    assert ".".join(map(str, MODS_MIN_VERSION)) == _mod_channel.MIN_VERSION


def test_the_mod_passes_its_tests_on_claude_codes_own_engine(tmp_path: Path) -> None:
    """``automod.test.ts`` beside the mod as install lays it out, run by the bundled CLI's
    ``claude plugin test``: the mod's hooks on the engine's chains, the settings hooks,
    the prompt box, the store and the clock stood in for by the test's hooks."""
    cli = claude_cli()
    mod = tmp_path / automod.NAME
    for rel, content in automod.files():
        path = mod / rel.removeprefix(f"skills/{automod.NAME}/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    tests = (Path(__file__).parent / "automod.test.ts").read_text()
    wait = re.compile(r"^const WAIT_MS = (\d+)", re.MULTILINE)
    assert wait.findall(tests) == wait.findall(automod.module_source().decode())  # one bound
    (mod / "tests").mkdir()
    (mod / "tests" / "automod.test.ts").write_text(tests)
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [str(cli), "plugin", "test", str(mod)],
        env={
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert " 0 fail" in out, out
    assert "(pass) a held prompt leaves the box once the drop put it back" in out, out
