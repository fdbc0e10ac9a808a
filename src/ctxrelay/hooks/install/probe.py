"""Run a command the way a host runs it, with a real payload, and say whether it did its
job: what install checks before it writes a command, and what ``doctor`` checks for each
command it finds installed. A host skips or ignores a failing hook, so this is the way
to see one fail.

Claude Code and Codex (and the Gemini CLI) start a hook through the shell (``sh -c
COMMAND``) in the project directory, with the JSON payload on stdin
(:func:`run_as_host`). A probe does the same in a throwaway project (:func:`scratch`,
with its own ``CTXRELAY_STATE_DIR``), so it leaves nothing behind in the user's project
or state.

The guard's probe (:func:`check_guard`) sends two commands the guard must deny: ``cat
big.txt``, which it judges from its words alone, and :data:`PARSER_COMMAND`, which only
its shell parser (tree-sitter, the ``guard`` extra) can judge. A hook that denies the
first and not the second runs in an environment where the parser cannot be imported: it
would let every command with a ``cd``, quotes or a list through, so that is a failed
check whose sentence says which interpreter needs the extra (:func:`no_parser`). A host
supplies only its payload for a shell command and, where its deny reads otherwise than
Claude Code's and Codex's, how to tell a deny (:func:`denied`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from ctxrelay.budget.bounds import HOOK_TIMEOUT_S, PRINT_BIG_BYTES

__all__ = [
    "NO_PARSER",
    "PARSER_COMMAND",
    "PARSER_DIR",
    "Check",
    "Ran",
    "baseline_ms",
    "check_every_event",
    "check_guard",
    "check_hook",
    "check_quiet",
    "denied",
    "hook_interpreter",
    "last_line",
    "no_parser",
    "run_as_host",
    "scratch",
    "state_env",
]

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
    peer, what every Node-based hook pays at least (``bench/hooks.py``)."""

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


def run_as_host(
    command: str, stdin: str, *, cwd: Path, env: Mapping[str, str] | None = None
) -> Ran:
    """``sh -c command`` in ``cwd`` with ``stdin``, killed after the hook timeout
    (:data:`~ctxrelay.budget.bounds.HOOK_TIMEOUT_S`) as a host kills it; a command that
    cannot start is a run with exit code 127."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=None if env is None else dict(env),
            timeout=HOOK_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Ran(124, "", f"killed after {HOOK_TIMEOUT_S} s", time.perf_counter() - start)
    except OSError as exc:
        return Ran(127, "", str(exc), time.perf_counter() - start)
    return Ran(proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)


def state_env(root: Path) -> dict[str, str]:
    """This process's environment with ctxrelay's state kept in ``root``."""
    return dict(os.environ, CTXRELAY_STATE_DIR=str(root / ".state"))


@contextlib.contextmanager
def scratch(big: str) -> Iterator[Path]:
    """A throwaway project for a guard probe: ``big.txt`` (the text ``big``, over the
    host's print bound) at its root and in :data:`PARSER_DIR`; gone afterwards."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp)
        (root / "big.txt").write_text(big)
        (root / PARSER_DIR).mkdir()
        (root / PARSER_DIR / "big.txt").write_text(big)
        yield root


def last_line(text: str, default: str = "") -> str:
    """The last line of a command's output (where a failure says why), cut to 200
    characters; ``default`` when there is none."""
    lines = text.strip().splitlines()
    return lines[-1][:200] if lines else default


def denied(stdout: str) -> bool:
    """Whether a hook's stdout denies the tool call, as Claude Code and Codex read a deny
    (``hookSpecificOutput.permissionDecision: "deny"``)."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False
    out = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    return isinstance(out, dict) and out.get("permissionDecision") == "deny"


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


def _bare(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _bare_python() -> float:
    return _bare([sys.executable, "-c", "pass"])


def _median_ms(seconds: list[float]) -> float | None:
    return round(statistics.median(seconds) * 1000, 1) if seconds else None


def baseline_ms(runs: int = 5) -> float:
    """The median start of a bare ``python -c pass`` of this interpreter, in ms."""
    return round(statistics.median(_bare_python() for _ in range(max(runs, 1))) * 1000, 1)


def check_guard(
    command: str,
    payload: Callable[[str], str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    kind: str = "hook",
    runs: int = 1,
    allowed: str | None = None,
    quiet: bool = False,
    denies: Callable[[str], bool] = denied,
) -> Check:
    """Send ``command`` the host's tool-call ``payload`` (its text for a shell command)
    for ``cat big.txt`` and for :data:`PARSER_COMMAND` in ``cwd`` (a :func:`scratch`
    project): both must come back denied (``denies``), ``allowed`` (a shell command, when
    given) must pass with nothing said, and malformed input must exit 0 with nothing on
    stdout (fail open); with ``quiet``, a word on stderr for ``cat big.txt`` is a hook
    that failed open. ``ms`` is the median of ``runs`` runs of the ``cat big.txt``
    payload, with a bare Python start and (where ``node`` is) a bare Node start timed
    between them."""
    node = shutil.which("node")
    times: list[float] = []
    bare: list[float] = []
    peer: list[float] = []
    for _ in range(max(runs, 1)):
        bare.append(_bare_python())
        if node is not None:
            peer.append(_bare([node, "-e", "0"]))
        ran = run_as_host(command, payload("cat big.txt"), cwd=cwd, env=env)
        if ran.returncode != 0:
            why = last_line(ran.stderr, "no message")
            return Check(kind, command, False, f"it exited {ran.returncode} ({why})")
        if quiet and ran.stderr.strip():
            return Check(kind, command, False, f"it failed open ({last_line(ran.stderr)})")
        if not denies(ran.stdout):
            what = last_line(ran.stderr) or last_line(ran.stdout, "nothing")
            return Check(kind, command, False, f"'cat big.txt' was not denied (it answered {what})")
        times.append(ran.seconds)
    timed = {"ms": _median_ms(times), "python_ms": _median_ms(bare), "node_ms": _median_ms(peer)}
    parsed = run_as_host(command, payload(PARSER_COMMAND), cwd=cwd, env=env)
    if not denies(parsed.stdout):
        what = last_line(parsed.stderr) or last_line(parsed.stdout, "nothing")
        if parsed.returncode != 0:
            what = f"exit {parsed.returncode}: {what}"
        return Check(kind, command, False, no_parser(command, what), **timed)
    if allowed is not None:
        ran = run_as_host(command, payload(allowed), cwd=cwd, env=env)
        if ran.returncode != 0 or ran.stdout.strip():
            return Check(kind, command, False, f"'{allowed}' was not allowed", **timed)
    garbage = run_as_host(command, "{not json", cwd=cwd, env=env)
    if garbage.returncode != 0 or garbage.stdout.strip():
        return Check(kind, command, False, "it does not fail open on malformed input", **timed)
    passed = "" if allowed is None else f", '{allowed}' passed"
    said = f"'cat big.txt' and '{PARSER_COMMAND}' came back denied{passed}; bad input is ignored"
    return Check(kind, command, True, said, **timed)


def check_quiet(
    command: str,
    payload: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    kind: str = "hook",
    runs: int = 1,
) -> Check:
    """Send ``command`` the ``payload`` of an event it has nothing to say to in a fresh
    project: it must exit 0 with nothing on stdout or stderr (a word on stderr is a hook
    that failed open), and malformed input must fail open. ``ms`` is the median of
    ``runs`` runs."""
    times: list[float] = []
    for _ in range(max(runs, 1)):
        ran = run_as_host(command, payload, cwd=cwd, env=env)
        if ran.returncode != 0:
            why = last_line(ran.stderr, "nothing")
            return Check(kind, command, False, f"it exited {ran.returncode} ({why})")
        if ran.stderr.strip():
            return Check(kind, command, False, f"it failed open ({last_line(ran.stderr)})")
        if ran.stdout.strip():
            return Check(kind, command, False, f"it answered {last_line(ran.stdout)}")
        times.append(ran.seconds)
    garbage = run_as_host(command, "{not json", cwd=cwd, env=env)
    if garbage.returncode != 0 or garbage.stdout.strip():
        return Check(kind, command, False, "it does not fail open on malformed input")
    said = "it answers a real payload; bad input is ignored"
    return Check(kind, command, True, said, _median_ms(times))


def check_hook(
    command: str,
    event: str,
    *,
    guard_event: str,
    sample_payload: Callable[[str, Path, str], Mapping[str, Any]],
    runs: int = 1,
    denies: Callable[[str], bool] = denied,
    big_bytes: int = 2 * PRINT_BIG_BYTES,
) -> Check:
    """Run ``command`` on a real payload of ``event`` for a host whose shell is how its
    agent reads (Codex, the Gemini CLI, OpenCode): for ``guard_event``, :func:`check_guard`
    in a :func:`scratch` project with a file of ``big_bytes`` (over the host's print bound)
    and a small file that must pass; any other event, in a fresh project with no
    transcript, must answer nothing (:func:`check_quiet`). ``sample_payload(event, root,
    shell_command)`` is the host's payload; ``denies`` how it reads a deny. ``ms``: the
    median of ``runs`` runs."""
    kind = f"{event} hook"
    if event != guard_event:
        with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
            root = Path(tmp)
            payload = json.dumps(sample_payload(event, root, "cat big.txt"))
            return check_quiet(
                command, payload, cwd=root, env=state_env(root), kind=kind, runs=runs
            )
    big = "".join(f"line {i:05d}\n" for i in range(big_bytes // 10 + 1))
    with scratch(big) as root:
        (root / "small.txt").write_text("hello\n")
        return check_guard(
            command,
            lambda shell: json.dumps(sample_payload(event, root, shell)),
            cwd=root,
            env=state_env(root),
            kind=kind,
            runs=runs,
            allowed="cat small.txt",
            quiet=True,
            denies=denies,
        )


def check_every_event(
    command: str, events: list[str], check: Callable[[str, str], Check], main_event: str
) -> Check:
    """``command`` run by a host's ``check(command, event)`` on a payload of each of
    ``events``: the first failing check (its sentence led by the event), else the
    ``main_event`` one (the guard's, whose timing install and doctor report)."""
    checks = [check(command, event) for event in events]
    bad = next((c for c in checks if not c.ok), None)
    if bad is not None:
        return Check(bad.kind, command, False, f"{bad.kind}: {bad.detail}", bad.ms)
    return next((c for c in checks if c.kind == f"{main_event} hook"), checks[0])
