"""The repository explains itself: no tracked file cites a document it does not contain
or a path outside the clone. The docs hold the policy, the Claude Code facts and the
contracts (``docs/policy.md``, ``docs/claude-code-facts.md``, ``docs/contracts.md``);
cite those pages instead."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

# Spelled in pieces so that this file does not match itself.
_DESIGN = "DESIGN"
_SHARED = ".." + "/shared"
_FORBIDDEN = {
    "a section of a design file the repository does not hold": re.compile(
        re.escape(_DESIGN) + r" ?§|" + re.escape(_DESIGN) + r"\.md"
    ),
    "a path on a particular machine": re.compile(r"(?<![\w.~-])/(?:work|root)/"),
}
# The files that locate the shared corpora (the tests' optional inputs) beside the clone.
_MAY_NAME_THE_CORPORA = {"tests/conftest.py", ".ci/run", "Makefile", "README.md"}
_BINARY = {".png", ".jpg", ".gif", ".ico", ".gz", ".zip", ".whl", ".db", ".sqlite"}


def _tracked() -> list[str]:
    git = shutil.which("git")
    if git is None or not (PROJECT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    done = subprocess.run([git, "ls-files", "-z"], cwd=PROJECT, capture_output=True, check=True)
    return [name for name in done.stdout.decode().split("\0") if name]


def _offences(name: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for why, pattern in _FORBIDDEN.items():
            if pattern.search(line):
                found.append(f"{name}:{number}: {why}: {line.strip()[:100]}")
        if _SHARED in line and name not in _MAY_NAME_THE_CORPORA:
            found.append(f"{name}:{number}: a path outside the repository: {line.strip()[:100]}")
    return found


def test_no_tracked_file_cites_outside_the_repository() -> None:
    offences: list[str] = []
    for name in _tracked():
        path = PROJECT / name
        if path.suffix in _BINARY or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        offences.extend(_offences(name, text))
    assert not offences, "\n".join(offences)


def test_the_check_finds_each_kind_of_citation() -> None:
    machine = "/" + "work/x/y"
    cited = f"see {_DESIGN} §3 and {_DESIGN}.md, {_SHARED}/corpora and {machine}\n"
    found = _offences("docs/x.md", cited)
    assert len(found) == 3, found
    assert _offences("tests/conftest.py", f"{_SHARED}/corpora\n") == []


# -- the docs' own links resolve -----------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced = False
    found = set()
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(_slug(line.lstrip("#")))
    return found


def test_every_relative_link_in_the_docs_resolves() -> None:
    pages = [PROJECT / "README.md", PROJECT / "CONTRIBUTING.md", PROJECT / "CHANGELOG.md"]
    pages += sorted((PROJECT / "docs").glob("*.md"))
    broken = []
    for page in pages:
        if not page.exists():
            continue
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.relative_to(PROJECT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(PROJECT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_anchors_are_githubs() -> None:
    assert _slug(" JSON (`--json`)") == "json---json"
    assert _slug(" 7. The hook fails open") == "7-the-hook-fails-open"
    assert _slug(" The scripted model's steps") == "the-scripted-models-steps"
