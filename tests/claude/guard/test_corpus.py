"""The Bash guard over all 12,607 real shell commands of NL2Bash: none raises."""

from __future__ import annotations

from pathlib import Path

from ctxrelay.claude.guard import bash
from ctxrelay.hooks.guard import prints
from ctxrelay.hooks.guard._shell import scan
from tests.conftest import corpus_path

NL2BASH_COMMANDS = 12_607


def commands() -> list[str]:
    text = corpus_path("corpora/nl2bash/all.cm").read_text(encoding="utf-8")
    return text.splitlines()


def test_every_nl2bash_command_is_classified_without_an_exception(tmp_path: Path) -> None:
    lines = commands()
    assert len(lines) == NL2BASH_COMMANDS
    failures: list[tuple[str, str]] = []
    verdicts = {"deny": 0, "allow": 0, "unparsed": 0}
    for command in lines:
        try:
            result = prints.classify(command, str(tmp_path))
            reason = bash.deny_reason(command, str(tmp_path))
        except Exception as exc:  # the point of the test: collect every one
            failures.append((command, f"{type(exc).__name__}: {exc}"))
            continue
        verdict = "unparsed" if result is None else "deny" if result else "allow"
        verdicts[verdict] += 1
        assert reason is None or verdict == "deny", command  # a denial is of a file print
    assert failures == []
    # The corpus is mostly find/grep pipelines; a few dozen print a file.
    assert verdicts["deny"] > 20
    assert verdicts["allow"] > 12_000


def test_every_nl2bash_command_parses_and_walks_without_the_precheck(tmp_path: Path) -> None:
    """The walker itself, on every command (not only those the pre-check lets through)."""
    failures = []
    for command in commands():
        try:
            scan(command, str(tmp_path))
        except Exception as exc:
            failures.append((command, f"{type(exc).__name__}: {exc}"))
    assert failures == []


def test_known_nl2bash_commands(tmp_path: Path) -> None:
    lines = set(commands())
    cases = {
        "cat order.txt": True,
        "tail -f /var/log/syslog": True,
        "head -n -2 myfile.txt": True,
        "cat report.txt | grep -i error | more": False,
        "head -16482 in.sql | tail -258 > out.sql": False,
        "yes $1 | head -$number": False,
    }
    for command, denied in cases.items():
        assert command in lines, command
        assert bool(prints.classify(command, str(tmp_path))) == denied, command
