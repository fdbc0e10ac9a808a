"""Claude Code's Bash output cap as the real CLI applies it, against what the guard reads
(:func:`ctxrelay.claude.guard.bash.host_output`): the ``bashOutputMaxChars`` setting in
the user, project and local settings, and ``BASH_MAX_OUTPUT_LENGTH``.

Each case runs ``claude -p`` whose scripted model runs one command printing ``n``
characters, and looks at the tool result the model received: the output whole, or
Claude Code's ``<persisted-output>`` preview. The guard's cap for the same files must
say the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.guard.bash import SETTING, host_output
from ctxrelay.cli.claude import main as claude_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.e2e._claude import bodies, claude_home, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MODEL = "claude-sonnet-4-5"


def _print(n: int) -> str:
    return f"python3 -c \"print('x' * {n})\""


def _tool_result(
    env: Mapping[str, str], project: Path, command: str
) -> tuple[str, list[dict[str, Any]]]:
    """What the model received for one Bash call of ``command``."""

    def route(body: Mapping[str, Any]) -> Step:
        if "tool_result" in json.dumps(body["messages"][-1]):
            return Step(text="done")
        return Step(tool_calls=[ToolUse("Bash", {"command": command})])

    with AnthropicServer(route) as server:
        done = run_cli(
            env,
            project,
            server,
            *("-p", "run it", "--model", MODEL, "--permission-mode", "bypassPermissions"),
        )
        sent = bodies(server)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.dumps(sent[-1]["messages"][-1]), sent


# (characters printed, (the user's, the project's and the local setting), the variable)
CASES = [
    (5_000, (4_000, None, None), None),
    (5_000, (None, None, 4_000), None),
    (10_000, (4_000, 20_000, None), None),  # project over user
    (10_000, (None, 4_000, 20_000), None),  # local over project
    (10_000, (20_000, 4_000, None), None),
    (10_000, (None, 20_000, None), "4000"),  # the setting replaces the variable
    (10_000, (None, 4_000, None), "20000"),
    (5_000, (None, 1_000, None), None),  # clamped up to 4,000
    (120_000, (None, 200_000, None), None),  # clamped down to 128,000
    (140_000, (None, 200_000, None), None),
    (5_000, (4_000, "20000", None), None),  # refused by the schema: the user's applies
]


@pytest.mark.parametrize(("n", "settings", "variable"), CASES)
def test_the_guard_reads_the_cap_claude_code_applies(
    tmp_path: Path, n: int, settings: tuple[object, object, object], variable: str | None
) -> None:
    extra = {} if variable is None else {"BASH_MAX_OUTPUT_LENGTH": variable}
    home, project, env = claude_home(tmp_path, **extra)
    layers = (
        home / ".claude" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    )
    for path, value in zip(layers, settings, strict=True):
        if value is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({SETTING: value}))
    received, _ = _tool_result(env, project, _print(n))
    whole = "x" * n in received
    assert whole or "persisted-output" in received, received[:500]
    assert whole == (n <= host_output(env, project, home).cap)


def test_a_cat_under_a_raised_setting_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Install sets BASH_MAX_OUTPUT_LENGTH=4000, under which a 20 KB cat comes back as a
    # preview; a bashOutputMaxChars of 128,000 in the local settings hands it over whole,
    # so the guard must deny it.
    _, project, env = claude_home(tmp_path)
    for key in ("HOME", "CTXRELAY_STATE_DIR"):
        monkeypatch.setenv(key, env[key])
    assert claude_main(["install", "--project-dir", str(project), "--json"]) == 0
    (project / ".claude" / "settings.local.json").write_text(json.dumps({SETTING: 128_000}))
    notes = project / "notes.md"
    notes.write_text("".join(f"note {i:05}: the parser keeps its old API\n" for i in range(500)))
    received, _ = _tool_result(env, project, "cat notes.md")
    assert "note 00499" not in received
    assert "ctxrelay guard" in received
    assert "128,000 characters" in received
