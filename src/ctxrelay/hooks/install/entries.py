"""The hooks object of a host's settings file, in the format Claude Code, Codex and the
Gemini CLI share: ``{event: [{"matcher": …, "hooks": [{"type": "command", "command":
…, "timeout": …}]}]}``. ctxrelay's groups are built here (:func:`command_hooks`), found
again (:func:`hook_commands`), and told from the user's by the command they run
(:func:`runs_ours`), which is how install replaces and uninstall removes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ctxrelay.budget.bounds import HOOK_TIMEOUT_S

__all__ = ["command_hooks", "hook_commands", "runs_ours"]


def command_hooks(
    events: Iterable[str],
    command: str | Callable[[str], str],
    *,
    matchers: Mapping[str, str | None] | None = None,
    timeout: int = HOOK_TIMEOUT_S,
) -> dict[str, list[dict[str, Any]]]:
    """One group for each event, running ``command`` (or ``command(event)``) within
    ``timeout`` (in the host's unit), with the event's matcher where it has one."""
    config: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        group: dict[str, Any] = {}
        matcher = (matchers or {}).get(event)
        if matcher is not None:
            group["matcher"] = matcher
        run = command if isinstance(command, str) else command(event)
        group["hooks"] = [{"type": "command", "command": run, "timeout": timeout}]
        config[event] = [group]
    return config


def hook_commands(hooks: object) -> Iterator[tuple[str, str]]:
    """``(event, command)`` of every command hook of a ``hooks`` object, in order;
    whatever is not of the format is passed over."""
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                command = hook.get("command") if isinstance(hook, dict) else None
                if isinstance(command, str):
                    yield str(event), command


def runs_ours(is_ours: Callable[[object], bool]) -> Callable[[Any], bool]:
    """Whether a group runs a command ``is_ours`` says is ctxrelay's: what a host hands
    the merge for its ``hooks`` key (:data:`ctxrelay.hooks.install.merge.Ours`)."""

    def group_is_ours(group: Any) -> bool:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        return isinstance(hooks, list) and any(
            isinstance(h, dict) and is_ours(h.get("command")) for h in hooks
        )

    return group_is_ours
