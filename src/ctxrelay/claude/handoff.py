"""The Claude Code host's handoff: the prompts that write and resume a handoff file, the
handoff skill's name, and Claude Code's rule for when a fresh session has started from a
file (:meth:`ctxrelay.claude.host.ClaudeHost.started`).

The files themselves, their names, records and once-only rule are every host's
(:mod:`ctxrelay.hooks.handoff`); this module re-exports the ones the Claude Code hooks use,
and :func:`settle` is the core's, asked with Claude Code's rule for Claude Code's
sessions.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxrelay.claude._state import HOST
from ctxrelay.claude.config import project_dir_of
from ctxrelay.claude.host import CLAUDE
from ctxrelay.hooks import chain
from ctxrelay.hooks import handoff as _files
from ctxrelay.hooks.handoff import (
    HANDOFF_DIR,
    LAYOUT,
    RESUME_ENV,
    Handoff,
    consumed,
    continued,
    drop,
    handoff_dir,
    injected_into,
    is_handoff_path,
    latest_unconsumed,
    mark_consumed,
    new_handoff_path,
    read_handoff,
    record_injected,
    record_reserved,
    reserved_by,
    writer_of,
)

__all__ = [
    "HANDOFF_DIR",
    "INSTALLED_SKILL",
    "LAYOUT",
    "RESUME_ENV",
    "Handoff",
    "consumed",
    "continue_prompt",
    "continued",
    "drop",
    "handoff_dir",
    "injected_into",
    "is_handoff_path",
    "latest_unconsumed",
    "mark_consumed",
    "new_handoff_path",
    "read_handoff",
    "record_injected",
    "record_reserved",
    "reserved_by",
    "resume_prompt",
    "session_history_note",
    "settle",
    "skill_command",
    "write_prompt",
    "writer_of",
]

INSTALLED_SKILL = "ctxrelay-handoff"
"""The handoff skill's name where ``ctxrelay claude install`` copies it
(``.claude/skills/ctxrelay-handoff/SKILL.md``): a project or user skill is run by its own
name, ``/ctxrelay-handoff``; the prefix keeps it apart from a skill of yours called
``handoff``. From the plugin the same skill is ``/ctxrelay:handoff``."""

_PLUGIN_SKILL = "ctxrelay:handoff"


def skill_command(project_dir: str | os.PathLike[str] | None = None) -> str:
    """The slash command that runs the handoff skill in this setup: the one name every
    hint gives the user.

    Claude Code 2.1.332 runs a plugin's skill as ``/ctxrelay:handoff`` and an installed
    one as ``/ctxrelay-handoff``; a name it does not know is sent to the model as plain
    text, silently. It exports ``CLAUDE_PLUGIN_ROOT`` to the hooks of a plugin only, so a
    hook run from the plugin names the plugin's form. Otherwise (a hook from
    ``settings.json``, the statusline) the installed skill's file decides: in the project
    (``CLAUDE_PROJECT_DIR``, else ``project_dir``, else the current directory) or the
    user's ``~/.claude``. Without either, the plugin's form."""
    if os.environ.get("CLAUDE_PLUGIN_ROOT"):
        return f"/{_PLUGIN_SKILL}"

    skill = Path(".claude") / "skills" / INSTALLED_SKILL / "SKILL.md"
    for base in (project_dir_of(project_dir), Path.home()):
        try:
            if (base / skill).is_file():
                return f"/{INSTALLED_SKILL}"
        except OSError:
            continue
    return f"/{_PLUGIN_SKILL}"


def settle(project_dir: str | os.PathLike[str]) -> list[tuple[str, chain.ChainLink]]:
    """The core's :func:`ctxrelay.hooks.handoff.settle` of the Claude Code sessions a
    handoff was injected into, by their transcripts (:meth:`~ctxrelay.claude.host.
    ClaudeHost.started`)."""
    return _files.settle(project_dir, HOST, CLAUDE.started)


def session_history_note() -> str:
    """What the resume prompt and the lead-in say about the old sessions' transcripts."""
    return (
        "The earlier sessions of this chain stay searchable: the "
        "mcp__ctxrelay__session_history tool lists them (action: list), searches them "
        "(action: search, with a query) and reads a window of one (action: read); use it "
        "when the handoff file leaves out something you need."
    )


def write_prompt(path: Path, *, reason: str, retry: bool = False) -> str:
    """What Claude is asked when the hook starts a handoff (auto mode)."""
    again = "The handoff file has not appeared yet. " if retry else ""
    return (
        f"[ctxrelay] {again}Hand off now: {reason}. Finish the small step you are on "
        "(do not start new work), then write a handoff file so a fresh session can continue "
        f"without this conversation. Write it with the Write tool to exactly this path:\n\n"
        f"    {path}\n\n"
        "Use this layout (every section; be concrete: paths, commands, numbers):\n\n"
        f"{LAYOUT}\n"
        "After writing it, reply with one line naming the file and stop; the work continues "
        "in a fresh session."
    )


def continue_prompt(path: Path) -> str:
    """The first prompt of a fresh session whose ``SessionStart`` injected the handoff
    ``path`` (the resume prompt and the file's content are in its context already)."""
    return _files.continue_text(path)


def resume_prompt(
    path: Path,
    *,
    next_step: str | None,
    project_dir: str | os.PathLike[str],
    inline: bool = False,
    writer: chain.ChainLink | None = None,
) -> str:
    """The first prompt of the fresh session: names the file, the session that wrote it
    and the next step (``inline``: the file's content follows the prompt, as
    ``SessionStart`` injects it), and the ``session_history`` tool that reaches the
    earlier sessions."""
    text = _files.resume_text(
        path, next_step=next_step, project_dir=project_dir, inline=inline, writer=writer
    )
    return f"{text} {session_history_note()}"
