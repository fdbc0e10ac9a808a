"""The built-in coding session of ``ctxrelay demo``: a small project and the model's steps.

The agent adds ``--json`` to a to-do CLI. Window 1 reads, edits, receives the warning and
the handoff request, checkpoints its notes, confirms them and calls ``new_context``.
Window 2 continues from the notes and ``session_history``, receives its own handoff
request but keeps reading long logs, and is rolled over at the usable limit (forced).
Window 3 finishes. ``input_tokens`` are what a 200k-window model would report;
:class:`PromptCaching` reports them as a model with prompt caching does, so the session
can be priced as :data:`DEMO_PRICED_AS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ctxrelay.runtime.model import ModelProvider, ModelRequest, ModelResponse, Usage

__all__ = ["DEMO_PRICED_AS", "DEMO_TASK", "PromptCaching", "demo_steps", "demo_workspace"]

DEMO_PRICED_AS = "claude-sonnet-4-6"
"""The model of the pricing table the demo's scripted session is priced as: a
200,000-token window, like the demo's budget."""


class PromptCaching:
    """A provider whose usage is reported as Anthropic's prompt cache reports it when
    every request marks its end for caching (as ctxrelay's Anthropic provider does): a
    request reads the previous request of its window from the cache and writes the rest;
    a window's first request finds the cache cold and writes all of it."""

    def __init__(self, inner: ModelProvider) -> None:
        self._inner = inner
        self._previous: dict[object, int] = {}

    @property
    def name(self) -> str:
        return self._inner.name

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        response = await self._inner.complete(request, on_text=on_text)
        window = request.metadata.get("window_index")
        size = response.usage.context_tokens
        read = min(self._previous.get(window, 0), size)
        self._previous[window] = size
        usage = Usage(
            input_tokens=0,
            output_tokens=response.usage.output_tokens,
            cache_creation_input_tokens=size - read,
            cache_read_input_tokens=read,
        )
        return dataclasses.replace(response, usage=usage)

    async def aclose(self) -> None:
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()


DEMO_TASK = (
    "Add a --json flag to `todo list` that prints the tasks as a JSON array, with a "
    "test, and document it in the README."
)

_CLI = '''"""todo: a tiny task list on the command line."""

import argparse
import sys

from todo.store import Store


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="cmd", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    sub.add_parser("list")
    done = sub.add_parser("done")
    done.add_argument("id", type=int)
    args = parser.parse_args(argv)
    store = Store.open()
    if args.cmd == "add":
        task = store.add(args.title)
        print(f"added #{task.id}")
    elif args.cmd == "list":
        for task in store.tasks():
            mark = "x" if task.done else " "
            print(f"[{mark}] #{task.id} {task.title}")
    elif args.cmd == "done":
        store.finish(args.id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_STORE = '''"""Tasks in a JSON file next to the user's home."""

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Task:
    id: int
    title: str
    done: bool = False


class Store:
    def __init__(self, path):
        self.path = Path(path)
        raw = json.loads(self.path.read_text()) if self.path.exists() else []
        self._tasks = [Task(**item) for item in raw]

    @classmethod
    def open(cls):
        return cls(Path.home() / ".todo.json")

    def tasks(self):
        return list(self._tasks)

    def add(self, title):
        task = Task(id=len(self._tasks) + 1, title=title)
        self._tasks.append(task)
        self._save()
        return task

    def finish(self, task_id):
        for task in self._tasks:
            if task.id == task_id:
                task.done = True
        self._save()

    def _save(self):
        self.path.write_text(json.dumps([t.__dict__ for t in self._tasks]))
'''

_TESTS = """from todo.cli import main


def test_add_then_list(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["add", "write docs"]) == 0
    assert main(["list"]) == 0
    assert "#1 write docs" in capsys.readouterr().out
"""

_README = """# todo

A tiny task list: `todo add TITLE`, `todo list`, `todo done ID`.
Tasks live in `~/.todo.json`.
"""


def _log(lines: int, seed: str) -> str:
    out = [f"============================= test session starts ({seed}) =============="]
    for i in range(lines):
        status = "PASSED" if i % 37 else "FAILED"
        out.append(
            f"tests/test_{seed}_{i // 20:02d}.py::test_case_{i:04d} {status} [{i % 100:3d}%]"
        )
    out.append("FAILED tests/test_store.py::test_roundtrip_keeps_done - KeyError: 'done'")
    return "\n".join(out) + "\n"


def demo_workspace() -> dict[str, str]:
    """The project's files, relative to the workspace."""
    return {
        "README.md": _README,
        "todo/__init__.py": "",
        "todo/cli.py": _CLI,
        "todo/store.py": _STORE,
        "tests/test_cli.py": _TESTS,
        "logs/pytest-full.log": _log(300, "full"),
        "logs/pytest-slow.log": _log(300, "slow"),
    }


_CLI_JSON = (
    _CLI.replace(
        '    sub.add_parser("list")\n',
        '    lst = sub.add_parser("list")\n    lst.add_argument("--json", action="store_true")\n',
    )
    .replace(
        '    elif args.cmd == "list":\n',
        '    elif args.cmd == "list" and args.json:\n'
        "        print(json.dumps([t.to_dict() for t in store.tasks()]))\n"
        '    elif args.cmd == "list":\n',
    )
    .replace("import argparse\n", "import argparse\nimport json\n")
)

_STORE_DICT = _STORE.replace(
    "    done: bool = False\n",
    "    done: bool = False\n\n    def to_dict(self):\n"
    '        return {"id": self.id, "title": self.title, "done": self.done}\n',
)

_STORE_FIXED = _STORE_DICT.replace(
    "        self._tasks = [Task(**item) for item in raw]\n",
    '        self._tasks = [Task(item["id"], item["title"], item.get("done", False)) '
    "for item in raw]\n",
)

_TESTS_JSON = (
    _TESTS
    + """

def test_list_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    main(["add", "ship it"])
    capsys.readouterr()
    assert main(["list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"id": 1, "title": "ship it", "done": False}]
""".replace("from todo.cli import main\n", "import json\n\nfrom todo.cli import main\n")
)

_TEST_STORE = """from todo.store import Store


def test_roundtrip_keeps_done(tmp_path):
    store = Store(tmp_path / "t.json")
    store.add("a")
    store.finish(1)
    assert Store(tmp_path / "t.json").tasks()[0].done
"""

_NOTES_1 = """# Notes: todo list --json

Goal: `todo list --json` prints the tasks as a JSON array; a test; README docs.

Done:
- todo/cli.py: `list --json` (json.dumps of Task.to_dict), imports json.
- todo/store.py: Task.to_dict() -> {"id", "title", "done"}.
- tests/test_cli.py: test_list_json (asserts the exact array).

Next:
- tests/test_store.py: round trip keeps `done` (in progress).
- README: document --json.

Decisions: output keys are exactly id, title, done (stable order).
"""

_NOTES_2 = _NOTES_1.replace(
    "- tests/test_store.py: round trip keeps `done` (in progress).\n- README: document --json.\n",
    "- README: documented --json (window 2).\n"
    "- tests/test_store.py written; check the full test log for failures.\n",
)

_NOTES_3 = (
    _NOTES_2
    + """
Window 3: fixed Store loading old files without `done` (KeyError in the log).
Status: complete.
"""
)


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


def demo_steps() -> list[dict[str, Any]]:
    """The model's steps (``docs/contracts.md``), one per request, in order."""
    d = 0.06
    return [
        # window 1
        {
            "text": "I'll start with the README and the CLI.",
            "tool_calls": [_call("read_file", path="README.md")],
            "input_tokens": 6_200,
            "delay_s": d,
        },
        {
            "text": "Now the CLI entry point.",
            "tool_calls": [_call("read_file", path="todo/cli.py")],
            "input_tokens": 14_800,
            "delay_s": d,
        },
        {
            "text": "Reading the store and the tests together.",
            "tool_calls": [
                _call("read_file", path="todo/store.py"),
                _call("read_file", path="tests/test_cli.py"),
            ],
            "input_tokens": 27_400,
            "delay_s": d,
        },
        {
            "text": "Plan: Task.to_dict, `list --json`, a test, README. Starting notes.",
            "tool_calls": [
                _call(
                    "write_file",
                    path="context-notes.md",
                    content=_NOTES_1.split("Done:", maxsplit=1)[0] + "Next: everything.\n",
                )
            ],
            "input_tokens": 41_300,
            "delay_s": d,
        },
        {
            "text": "Adding Task.to_dict().",
            "tool_calls": [_call("write_file", path="todo/store.py", content=_STORE_DICT)],
            "input_tokens": 58_900,
            "delay_s": d,
        },
        {
            "text": "Adding `list --json`.",
            "tool_calls": [_call("write_file", path="todo/cli.py", content=_CLI_JSON)],
            "input_tokens": 73_500,
            "delay_s": d,
        },
        {
            "text": "Test for the JSON output.",
            "tool_calls": [_call("write_file", path="tests/test_cli.py", content=_TESTS_JSON)],
            "input_tokens": 86_200,
            "delay_s": d,
        },
        {
            "text": "Re-reading the CLI to check the change.",
            "tool_calls": [_call("read_file", path="todo/cli.py")],
            "input_tokens": 99_100,
            "delay_s": d,
        },
        {
            "text": "Looks right. Checking the store once more.",
            "tool_calls": [_call("read_file", path="todo/store.py")],
            "input_tokens": 104_200,
            "delay_s": d,
        },
        {
            "text": "Warning noted: bringing the notes up to date.",
            "tool_calls": [_call("write_file", path="context-notes.md", content=_NOTES_1)],
            "input_tokens": 112_600,
            "delay_s": d,
        },
        {
            "text": "Next unit: a store round-trip test. Reading the test file.",
            "tool_calls": [_call("read_file", path="tests/test_cli.py")],
            "input_tokens": 121_300,
            "delay_s": d,
        },
        {
            "text": "Handoff requested. Finishing the current unit first: the store test.",
            "tool_calls": [_call("write_file", path="tests/test_store.py", content=_TEST_STORE)],
            "input_tokens": 123_900,
            "delay_s": d,
        },
        {
            "text": "Unit done. Checkpointing the notes.",
            "tool_calls": [_call("write_file", path="context-notes.md", content=_NOTES_1)],
            "input_tokens": 125_200,
            "delay_s": d,
        },
        {
            "text": "The notes write is confirmed. Handing off to a fresh window.",
            "tool_calls": [_call("new_context")],
            "input_tokens": 126_000,
            "delay_s": d,
        },
        # window 2
        {
            "text": "Continuing from the notes. What did window 1 decide about the keys?",
            "tool_calls": [_call("session_history", action="search", query="Decisions")],
            "input_tokens": 9_400,
            "delay_s": d,
        },
        {
            "text": "Keys confirmed. Documenting --json in the README.",
            "tool_calls": [
                _call(
                    "write_file",
                    path="README.md",
                    content=_README + "\n`todo list --json` prints a JSON array of tasks.\n",
                )
            ],
            "input_tokens": 24_800,
            "delay_s": d,
        },
        {
            "text": "Updating the notes.",
            "tool_calls": [_call("write_file", path="context-notes.md", content=_NOTES_2)],
            "input_tokens": 38_900,
            "delay_s": d,
        },
        {
            "text": "Reading the CLI to review the whole change.",
            "tool_calls": [_call("read_file", path="todo/cli.py")],
            "input_tokens": 71_000,
            "delay_s": d,
        },
        {
            "text": "Reviewing the store module.",
            "tool_calls": [_call("read_file", path="todo/store.py")],
            "input_tokens": 101_500,
            "delay_s": d,
        },
        {
            "text": "Reviewing the tests.",
            "tool_calls": [_call("read_file", path="tests/test_store.py")],
            "input_tokens": 124_000,
            "delay_s": d,
        },
        {
            "text": "Handoff requested, but I want the full test log first.",
            "tool_calls": [_call("read_file", path="logs/pytest-full.log")],
            "input_tokens": 125_100,
            "delay_s": d,
        },
        {
            "text": "One failure in the store round trip. Checking the slow suite's log too.",
            "tool_calls": [_call("read_file", path="logs/pytest-slow.log")],
            "input_tokens": 151_500,
            "delay_s": d,
        },
        # window 3 (after the forced rollover)
        {
            "text": "Window 3. The log shows KeyError 'done' when loading old files; fixing Store.",
            "tool_calls": [_call("write_file", path="todo/store.py", content=_STORE_FIXED)],
            "input_tokens": 31_000,
            "delay_s": d,
        },
        {
            "text": "Recording the fix in the notes.",
            "tool_calls": [_call("write_file", path="context-notes.md", content=_NOTES_3)],
            "input_tokens": 36_000,
            "delay_s": d,
        },
        {
            "text": (
                "Done: `todo list --json` prints the tasks as a JSON array, with tests "
                "for the output and the store round trip, and the README documents it."
            ),
            "input_tokens": 37_200,
            "delay_s": d,
        },
    ]
