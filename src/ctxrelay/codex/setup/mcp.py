"""``session_history`` registered with Codex: the MCP server ``ctxrelay codex mcp`` (the
core's, :mod:`ctxrelay.hooks.history`) as the table ``[mcp_servers.ctxrelay]`` of the
user's ``config.toml``, with ``default_tools_approval_mode = "approve"`` so no approval
prompt stops a ``codex exec`` run (Codex 0.171 takes ``auto``, ``prompt``, ``writes`` or
``approve``), and ``env_vars`` naming where ctxrelay's state is.

Install appends the table as one block of text and records the exact text in its
manifest; uninstall removes that text, byte for byte, when it is still there as written
(a table the user edited is left, and said so). A ``[mcp_servers.ctxrelay]`` table of the
user's own is never touched: install then adds nothing.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

from ctxrelay.hooks.history import SERVER_NAME

__all__ = ["block", "register", "registered", "unregister"]

APPROVAL = "approve"
"""The approval mode of the server's tools: approved without a prompt."""

PASSED = ("CTXRELAY_STATE_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
"""What Codex passes the server of its environment beyond its own short list: where
ctxrelay's state is, which the hooks wrote (Codex starts an MCP server with a few
variables only)."""


def block(ctxrelay: str) -> str:
    """The table install appends (``ctxrelay``: the ctxrelay command install runs)."""
    words = [*shlex.split(ctxrelay), "codex", "mcp"]
    return (
        f"\n[mcp_servers.{SERVER_NAME}]\n"
        f"command = {json.dumps(words[0])}\n"
        f"args = {json.dumps(words[1:])}\n"
        f"env_vars = {json.dumps(list(PASSED))}\n"
        f'default_tools_approval_mode = "{APPROVAL}"\n'
    )


def registered(config: Path) -> bool:
    """Whether ``config`` has a ``[mcp_servers.ctxrelay]`` table (anyone's)."""
    try:
        with open(config, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return False
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def register(config: Path, ctxrelay: str) -> str | None:
    """Append the table to ``config`` (created when missing); the text appended, or
    ``None`` when a table of that name is there already."""
    if registered(config):
        return None
    try:
        before = config.read_bytes()
    except FileNotFoundError:
        before = b""
    text = block(ctxrelay)
    if before and not before.endswith(b"\n"):
        text = "\n" + text
    config.parent.mkdir(parents=True, exist_ok=True)
    with open(config, "a", encoding="utf-8") as handle:  # keeps the file's mode and link
        handle.write(text)
    return text


def unregister(config: Path, text: str) -> bool:
    """Remove the ``text`` :func:`register` appended, byte for byte; ``False`` when it is
    not in ``config`` as written."""
    try:
        now = config.read_bytes()
    except FileNotFoundError:
        return False
    added = text.encode("utf-8")
    at = now.rfind(added)
    if at < 0:
        return False
    with open(config, "r+b") as handle:  # in place: the mode and a symlink stay
        handle.write(now[:at] + now[at + len(added) :])
        handle.truncate()
    return True
