"""Run a command the way Claude Code runs it, with a real payload, and say whether it
did its job: what install checks before it writes a command, and what ``doctor`` checks
for each command it finds installed.

Claude Code starts a hook, the statusline and a skill's ``!`` line through the shell
(``sh -c COMMAND``) in the project directory, with the JSON payload on stdin. A probe
does the same in a throwaway project (with its own ``CTXRELAY_STATE_DIR``), so it
leaves nothing behind in the user's project or state.

A hook's probe sends two commands the guard must deny: ``cat big.txt``, which it judges
from its words alone, and :data:`PARSER_COMMAND`, which only its shell parser
(tree-sitter, the ``guard`` extra) can judge. A hook that denies the first and not the
second runs in an environment where the parser cannot be imported: it would let every
command with a ``cd``, quotes or a list through, so that is a failed check whose sentence
says which interpreter needs the extra (:func:`no_parser`).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW, HOOK_TIMEOUT_S

__all__ = [
    "BIG_FILE_LINES",
    "NO_PARSER",
    "PARSER_COMMAND",
    "PARSER_DIR",
    "Check",
    "Ran",
    "baseline_ms",
    "check_hook",
    "check_skill",
    "check_statusline",
    "denied",
    "hook_interpreter",
    "no_parser",
    "run_as_claude_code",
]

BIG_FILE_LINES = 2_000
"""The probe's file that ``cat`` must not print into the context."""

PARSER_DIR = "sub"
"""The probe project's subdirectory that holds a second ``big.txt``."""

PARSER_COMMAND = f"cd {PARSER_DIR} && cat big.txt"
"""A probe command only the guard's shell parser can judge (a list, a ``cd``): the guard
denies it in an environment that has the ``guard`` extra, and lets it through (failing
open, one line on stderr) in one that does not."""

NO_PARSER = "the guard cannot parse shell syntax in this environment"
"""What the sentence of a hook without the parser says (:func:`no_parser`)."""


@dataclass(frozen=True, slots=True)
class Ran:
    """One run of a command: its exit code, output and wall time."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Check:
    """What a probe found: ``ok``, and one sentence saying what happened."""

    kind: str
    command: str
    ok: bool
    detail: str
    ms: float | None = None
    python_ms: float | None = None
    """A bare ``python -c pass`` timed between the command's runs (load hits both)."""
    node_ms: float | None = None
    """A bare ``node -e 0`` timed the same way, when ``node`` is on ``PATH``: the hooks'
    peer, what every Node-based Claude Code hook pays at least (``bench/hooks.py``)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "command": self.command,
            "ok": self.ok,
            "detail": self.detail,
            "ms": self.ms,
            "python_ms": self.python_ms,
            "node_ms": self.node_ms,
        }


def run_as_claude_code(
    command: str, stdin: str, *, cwd: Path, env: dict[str, str] | None = None
) -> Ran:
    """``sh -c command`` in ``cwd`` with ``stdin``, killed after Claude Code's hook
    timeout; a command that cannot start is a run with exit code 127."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=HOOK_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Ran(124, "", f"killed after {HOOK_TIMEOUT_S} s", time.perf_counter() - start)
    except OSError as exc:
        return Ran(127, "", str(exc), time.perf_counter() - start)
    return Ran(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)


def _scratch_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PLUGIN_ROOT"}
    env["CLAUDE_PROJECT_DIR"] = str(root)
    env["CTXRELAY_STATE_DIR"] = str(root / ".state")
    return env


def _ms(ran: Ran) -> float:
    return round(ran.seconds * 1000, 1)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:200] if lines else ""


def denied(stdout: str) -> bool:
    """Whether a hook's stdout is a ``PreToolUse`` deny answer."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False
    out = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    return isinstance(out, dict) and out.get("permissionDecision") == "deny"


def _call_response(call: str) -> str:
    """A main-session response whose ``tool_use`` block is ``call``: what the transcript
    holds when Claude Code has written the response that made the call (the hook then
    reads it at once and waits for nothing, as in ``bench/hooks.py``)."""
    record = {
        "type": "assistant",
        "sessionId": "ctxrelay-probe",
        "message": {
            "id": "msg_ctxrelay_probe",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {}}],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 9_000,
                "output_tokens": 10,
            },
        },
    }
    return json.dumps(record) + "\n"


def hook_interpreter(command: str) -> str | None:
    """The Python a hook command runs, when it can be told: the command's first word
    when that is a ``python``, else the interpreter its ``#!`` line names (a console
    script's)."""
    try:
        first = shlex.split(command)[0]
    except (ValueError, IndexError):
        return None
    if os.path.basename(first).startswith("python"):
        return first
    try:
        with open(first, "rb") as f:
            line = f.readline(4096)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode(errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return words[0] if words and "python" in os.path.basename(words[0]) else None


def _guard_requirements() -> list[str]:
    """What the ``guard`` extra installs (from ctxrelay's own metadata)."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement

    try:
        listed = metadata.requires("ctxrelay") or []
    except metadata.PackageNotFoundError:
        listed = []
    found: list[str] = []
    for line in listed:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and req.marker.evaluate({"extra": "guard"}):
            found.append(f"{req.name}{req.specifier}")
    return found or ["tree-sitter", "tree-sitter-bash"]


def no_parser(command: str, answered: str) -> str:
    """The sentence for a hook that denies ``cat big.txt`` but lets
    :data:`PARSER_COMMAND` through: the parser is missing where the hook runs, and how to
    put it there (the ``guard`` extra, into the hook's own interpreter)."""
    where = hook_interpreter(command)
    pip = " ".join(shlex.quote(r) for r in _guard_requirements())
    fix = (
        f"install the 'guard' extra into {where}, the Python that runs it: "
        f"{shlex.quote(where)} -m pip install {pip}"
        if where
        else f"install the 'guard' extra into the Python that runs it ({pip})"
    )
    return (
        f"'cat big.txt' came back denied but '{PARSER_COMMAND}' did not (it answered "
        f"{answered}): {NO_PARSER}, so a command with a cd, quotes, ';' or '&&' is never "
        f"checked and prints whole files; {fix}"
    )


def _pre_tool_use(root: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": "ctxrelay-probe",
            "transcript_path": str(root / "transcript.jsonl"),
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "show the file"},
            "tool_use_id": "toolu_probe",
        }
    )


def check_hook(command: str, *, runs: int = 5, env: Mapping[str, str] | None = None) -> Check:
    """Send ``command`` a ``PreToolUse`` payload for ``cat`` of a big file and one for
    :data:`PARSER_COMMAND` (a big file in a subdirectory): both must come back denied,
    and malformed input must exit 0 with nothing on stdout (fail open). The payload's
    transcript holds the response that made the call, so the hook has nothing to wait
    for. ``ms`` is the median of ``runs`` runs of the ``cat big.txt`` payload, with a
    bare Python start and (where ``node`` is) a bare Node start timed between them;
    ``env`` adds variables (a plugin's hooks get ``CLAUDE_PLUGIN_ROOT``)."""
    extra = dict(env or {})
    node = shutil.which("node")
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp)
        big = "".join(f"line {i}\n" for i in range(BIG_FILE_LINES))
        (root / "big.txt").write_text(big)
        (root / PARSER_DIR).mkdir()
        (root / PARSER_DIR / "big.txt").write_text(big)
        (root / "transcript.jsonl").write_text(_call_response("toolu_probe"))
        env = {**_scratch_env(root), **extra}
        payload = _pre_tool_use(root, "cat big.txt")
        times: list[float] = []
        bare: list[float] = []
        peer: list[float] = []
        for _ in range(max(runs, 1)):
            bare.append(_bare_python())
            if node is not None:
                peer.append(_bare([node, "-e", "0"]))
            ran = run_as_claude_code(command, payload, cwd=root, env=env)
            if ran.returncode != 0:
                why = _first_line(ran.stderr) or "no message"
                return Check("hook", command, False, f"it exited {ran.returncode} ({why})")
            if not denied(ran.stdout):
                what = _first_line(ran.stderr) or _first_line(ran.stdout) or "nothing"
                return Check(
                    "hook", command, False, f"'cat big.txt' was not denied (it answered {what})"
                )
            times.append(ran.seconds)
        ms = round(statistics.median(times) * 1000, 1)
        base = round(statistics.median(bare) * 1000, 1)
        node_ms = round(statistics.median(peer) * 1000, 1) if peer else None
        parsed = run_as_claude_code(command, _pre_tool_use(root, PARSER_COMMAND), cwd=root, env=env)
        if not denied(parsed.stdout):
            what = _first_line(parsed.stderr) or _first_line(parsed.stdout) or "nothing"
            if parsed.returncode != 0:
                what = f"exit {parsed.returncode}: {what}"
            detail = no_parser(command, what)
            return Check("hook", command, False, detail, ms, base, node_ms)
        garbage = run_as_claude_code(command, "{not json", cwd=root, env=env)
        if garbage.returncode != 0 or garbage.stdout.strip():
            return Check(
                "hook",
                command,
                False,
                "it does not fail open on malformed input",
                ms,
                base,
                node_ms,
            )
    return Check(
        "hook",
        command,
        True,
        f"'cat big.txt' and '{PARSER_COMMAND}' came back denied; bad input is ignored",
        ms,
        base,
        node_ms,
    )


def check_statusline(command: str) -> Check:
    """Send ``command`` a statusline payload: it must print one line that counts."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp)
        payload = json.dumps(
            {
                "session_id": "ctxrelay-probe",
                "model": {"id": "claude-sonnet-4-5"},
                "workspace": {"project_dir": str(root)},
                "context_window": {
                    "context_window_size": DEFAULT_CONTEXT_WINDOW,
                    "current_usage": {"input_tokens": 50_000},
                },
            }
        )
        ran = run_as_claude_code(command, payload, cwd=root, env=_scratch_env(root))
    line = ran.stdout.strip()
    if ran.returncode != 0 or not line.lstrip("\x1b[0123456789m").startswith("ctx "):
        why = _first_line(ran.stderr) or _first_line(ran.stdout) or "nothing"
        return Check("statusline", command, False, f"it printed no statusline ({why})")
    return Check("statusline", command, True, "it prints the context line", _ms(ran))


def check_skill(command: str) -> Check:
    """Run the handoff skill's ``!`` command: it must print an absolute ``.md`` path
    under the project's ``.ctxrelay/handoff/``."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp).resolve()
        ran = run_as_claude_code(command, "", cwd=root, env=_scratch_env(root))
        path = Path(ran.stdout.strip() or ".")
        ok = (
            ran.returncode == 0
            and path.is_absolute()
            and path.suffix == ".md"
            and path.parent == root / ".ctxrelay" / "handoff"
        )
    if not ok:
        why = _first_line(ran.stderr) or _first_line(ran.stdout) or "nothing"
        return Check("skill", command, False, f"it printed no handoff path ({why})")
    return Check("skill", command, True, "it reserves a handoff path", _ms(ran))


def _bare(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _bare_python() -> float:
    return _bare([sys.executable, "-c", "pass"])


def baseline_ms(runs: int = 5) -> float:
    """The median start of a bare ``python -c pass`` of this interpreter, in ms."""
    return round(statistics.median(_bare_python() for _ in range(max(runs, 1))) * 1000, 1)
