"""``session_history`` for every coding-agent host: one MCP server (``ctxrelay claude mcp``,
``ctxrelay codex mcp``, ``ctxrelay gemini mcp``, ``ctxrelay opencode mcp``; stdio) whose
one tool lists, searches and reads the earlier sessions of the current handoff chain,
whichever agent ran each.

The tool is the runtime's (:class:`ctxrelay.runtime.tools.SessionHistory`): its schema, its
wording and its bounds (16 KiB a result, 2 MiB of text scanned, 500 rows, the per-row cap,
all from :mod:`ctxrelay.budget.bounds`), over the store's bounded history queries. Its
windows are the sessions of the chain, oldest first, the current session last
(:func:`ctxrelay.hooks.chain.chain`), each labelled with its agent: each earlier session's
transcript is read once with its own host's reader (:func:`ctxrelay.transcripts.
windows_of`: Claude Code's JSONL, Codex's rollout, the Gemini CLI's session file,
OpenCode's database) into a
throwaway SQLite store (one ctxrelay session, one window per agent session, each sealed by
its handoff; a Gemini session whose clears ctxrelay's handoff asked for is one window per
stretch of its file between two clears), and the tool
runs against it. The current session's window holds no rows: its conversation is in the
model's context, and the tool searches the earlier windows only.

Which session is current: the server is a child of the host's process (Claude Code keeps
one across ``/clear``; seen on 2.1.332), so at each call it asks
:func:`ctxrelay.hooks.chain.current` for the session its parent process runs now, as the
host's ``SessionStart`` hook recorded it (:func:`ctxrelay.hooks.chain.record_process`).
The project is the host's project directory. Before it follows the chain it settles the
handoffs of every host (:func:`ctxrelay.hooks.handoff.settle`): the fresh session's first
request went out with the file, so the link from it to the session that wrote it holds
already, though the hooks record it only at the turn's end.

The privacy floor is the chain's: a session that started without a handoff (a fresh
start, a plain ``/clear``) has no earlier window, and a chain never crosses projects.

The MCP SDK (the ``mcp`` package, in the ``claude`` extra) is imported only by
:func:`serve`; the history itself needs none of it.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import ConfigError
from ctxrelay.hooks import chain as _chain
from ctxrelay.hooks import handoff
from ctxrelay.runtime.tools import SessionHistory, ToolContext, ToolResult
from ctxrelay.store import NewRow
from ctxrelay.store.sqlite import SqliteStore
from ctxrelay.transcripts import WINDOWS, Message, started, windows_of

if TYPE_CHECKING:
    from ctxrelay.hooks.chain import ChainLink

__all__ = [
    "MODEL_TOOL_NAME",
    "SERVER_NAME",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "ChainHistory",
    "ServerCheck",
    "check_server",
    "history_call",
    "serve",
    "tool_schema",
]

SERVER_NAME = "ctxrelay"
"""The name install registers the server under (``claude mcp add … ctxrelay``)."""
TOOL_NAME = "session_history"
MODEL_TOOL_NAME = f"mcp__{SERVER_NAME}__{TOOL_NAME}"
"""What the model calls it, and what the settings' ``permissions.allow`` names."""

TOOL_DESCRIPTION = (
    "Recover details from the earlier sessions of this handoff chain, of any coding agent "
    "(Claude Code, Codex, Gemini CLI, OpenCode): the sessions this one was handed off "
    "from, oldest first, each one window labelled with its agent (a Gemini session one "
    "window per stretch between its clears; they are not in your context; the handoff "
    "file summarises them). action=list: the windows. "
    "action=search with query: their messages, tool calls and results that contain it, "
    "newest first. action=read with window (its index), offset and limit: a window's rows "
    "in order. "
)
"""The tool's description; the runtime tool's sentence on its caps follows it."""


def tool_schema() -> Mapping[str, Any]:
    """The tool's input schema: the runtime tool's."""
    return SessionHistory().input_schema


def _description() -> str:
    caps = SessionHistory().description.rpartition(". Results are capped")[2]
    return TOOL_DESCRIPTION + "Results are capped" + caps


def _mark(link: ChainLink) -> tuple[str, str, int, int]:
    """What a session's window was read from: a change rebuilds the store."""
    try:
        st = os.stat(link.transcript_path)
    except OSError:
        return (link.session_id, link.transcript_path, -1, -1)
    return (link.session_id, link.transcript_path, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class _Built:
    key: tuple[tuple[str, str, int, int], ...]
    store: SqliteStore
    session_id: str
    windows: tuple[tuple[str, str], ...]
    """``(store window id, the session as a sentence names it)``, oldest first."""


def _label(link: ChainLink) -> str:
    """A window's name: its agent and session (``Codex session 019a…``)."""
    return f"{_chain.agent(link.host)} session {link.session_id}"


def _rows(messages: Sequence[Message]) -> list[Any]:
    rows = []
    for message in messages:
        meta: dict[str, Any] = {}
        if message.kind == "tool_call":
            meta = {"name": message.name, "id": message.call_id}
        elif message.kind == "tool_result":
            meta = {"tool_call_id": message.call_id, "is_error": message.is_error}
        rows.append(NewRow(message.kind, message.text, meta))
    return rows


def _windows(links: Sequence[ChainLink]) -> list[tuple[str, ChainLink, list[Message]]]:
    """The chain's windows, oldest first: ``(name, session, conversation)``. A session is
    one window, or several where its host's one transcript holds several (after the
    Gemini CLI's clear: ``Gemini CLI session <id>, window 2``). The current session is
    read only when it has earlier windows of its own; its last window is the current."""
    out: list[tuple[str, ChainLink, list[Message]]] = []
    for i, link in enumerate(links):
        if i == len(links) - 1 and link.host not in WINDOWS:
            parts: list[list[Message]] = [[]]  # the current session: nothing to read
        else:
            parts = windows_of(link.host, link.transcript_path)
        for n, messages in enumerate(parts, 1):
            name = _label(link) if len(parts) == 1 else f"{_label(link)}, window {n}"
            out.append((name, link, messages))
    return out


class ChainHistory:
    """The runtime's ``session_history`` over the sessions of a handoff chain. One store
    is kept for the newest chain asked about; another chain, or a changed transcript,
    builds it anew. ``close`` removes it."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="ctxrelay-history-")
        self._built: _Built | None = None
        self._count = 0

    def close(self) -> None:
        if self._built is not None:
            self._built.store.close()
            self._built = None
        self._dir.cleanup()

    def _build(self, links: Sequence[ChainLink]) -> _Built:
        key = tuple(_mark(link) for link in links)
        if self._built is not None and self._built.key == key:
            return self._built
        if self._built is not None:
            self._built.store.close()
            self._built = None
        self._count += 1
        store = SqliteStore(Path(self._dir.name) / f"history-{self._count}.db")
        ids = [link.to_json() for link in links]
        session = store.create_session(metadata={"chain": ids})
        window = store.current_window(session.id)
        windows: list[tuple[str, str]] = []
        parts = _windows(links)
        for i, (name, link, messages) in enumerate(parts):
            head = NewRow("lead_in", f"{name} ({link.transcript_path})")
            windows.append((window.id, name))
            if i == len(parts) - 1:  # the current window: in the model's context already
                store.append(session.id, window.id, [head])
                break
            store.append(session.id, window.id, [head, *_rows(messages)])
            after = parts[i + 1][0]
            window = store.rollover(
                session.id,
                window.id,
                "new_context",
                boundary=NewRow("boundary", f"handed off to {after}"),
                opening=[],
            )
        self._built = _Built(key, store, session.id, tuple(windows))
        return self._built

    async def call(self, args: Mapping[str, Any], links: Sequence[ChainLink]) -> ToolResult:
        """Run the tool with ``args`` over ``links`` (oldest first, the current session
        last)."""
        if not links:
            raise ConfigError("a history needs at least the current session")
        built = self._build(links)
        window_id, _ = built.windows[-1]
        ctx = ToolContext(
            workspace=Path.cwd(),
            store=built.store,
            session_id=built.session_id,
            window_id=window_id,
            window_index=len(built.windows),
            call_id="",
        )
        result = await SessionHistory().run(args, ctx)
        if args.get("action") == "list" and not result.is_error:
            sessions = "\n".join(
                f"window {i}: {name}" for i, (_, name) in enumerate(built.windows, 1)
            )
            return ToolResult(f"{result.content}\n{sessions}", metadata=result.metadata)
        return result


def _no_session(host: str) -> str:
    agent = _chain.agent(host)
    return (
        f"session_history: ctxrelay has no record of which session this {agent} process "
        f"runs (its SessionStart hook did not run here): run ctxrelay {host} install in "
        f"this project, then start {agent} again"
    )


async def history_call(
    host: str, project: Path, history: ChainHistory, args: Mapping[str, Any]
) -> ToolResult:
    """One tool call from the process of ``host`` that started this server (the project
    its session's start recorded, else ``project``)."""
    process = _chain.host_process()
    link = _chain.current(host, process)
    if link is None:
        return ToolResult(_no_session(host), is_error=True)
    project = Path(_chain.current_project(host, process) or project)
    # The hooks record that a session started from a handoff at its next Stop; a call in
    # the fresh session's first turn (its request went out with the file) must see it now.
    handoff.settle(project, host, functools.partial(started, host))
    return await history.call(args, _chain.chain(project, link))


def serve(host: str, project: Path) -> None:
    """Serve the tool to ``host`` (its name: ``claude``, ``codex``) working in
    ``project``, over stdio until the client closes the pipe."""
    """Serve the tool over stdio until the client closes the pipe."""
    try:
        import anyio  # noqa: PLC0415 — the claude extra's anyio
        from mcp import types  # noqa: PLC0415 — the claude extra's mcp SDK
        from mcp.server.lowlevel import Server  # noqa: PLC0415 — the mcp SDK
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 — the mcp SDK
    except ImportError:
        raise ConfigError(
            f"ctxrelay {host} mcp needs the MCP SDK: install ctxrelay with the claude extra "
            "(pipx install '.[claude]' in a clone of its repository)"
        ) from None

    history = ChainHistory()
    schema = dict(tool_schema())
    tool = types.Tool(name=TOOL_NAME, description=_description(), input_schema=schema)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            text, error = f"no tool named {params.name!r}; the one tool is {TOOL_NAME}", True
        else:
            result = await history_call(host, project, history, params.arguments or {})
            text, error = result.content, result.is_error
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=error
        )

    server: Server[Any] = Server(
        SERVER_NAME,
        get_tool_input_schema=lambda name: schema if name == TOOL_NAME else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        history.close()


@dataclass(frozen=True, slots=True)
class ServerCheck:
    """What :func:`check_server` found: ``ok`` and one sentence."""

    ok: bool
    detail: str
    tools: tuple[str, ...] = ()


def check_server(
    command: str, args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> ServerCheck:
    """Start the server as a host does (``command`` with ``args``, over stdio) and
    speak MCP to it: ``initialize``, then ``tools/list``, which must name the tool."""
    import anyio  # noqa: PLC0415 — the claude extra's anyio

    try:
        from mcp import ClientSession, StdioServerParameters  # noqa: PLC0415 — the mcp SDK
        from mcp.client.stdio import stdio_client  # noqa: PLC0415 — the mcp SDK
    except ImportError:
        return ServerCheck(False, "the MCP SDK is missing: install ctxrelay with the claude extra")

    async def talk() -> tuple[str, tuple[str, ...]]:
        params = StdioServerParameters(
            command=command, args=list(args), env=dict(env or {}), cwd=cwd
        )
        with open(os.devnull, "w") as quiet, anyio.fail_after(60):
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                started = await session.initialize()
                listed = await session.list_tools()
        return started.server_info.name, tuple(tool.name for tool in listed.tools)

    try:
        name, tools = anyio.run(talk)
    except Exception as exc:  # any failure to start or to answer is the check's answer
        first: BaseException = exc
        while isinstance(first, BaseExceptionGroup) and first.exceptions:
            first = first.exceptions[0]  # the first failure, not the task groups around it
        why = str(first) or type(first).__name__
        return ServerCheck(False, f"it did not answer initialize and tools/list ({why})")
    if TOOL_NAME not in tools:
        return ServerCheck(False, f"it lists no {TOOL_NAME} tool (it lists {list(tools)})", tools)
    return ServerCheck(True, f"the server {name} starts and lists {TOOL_NAME}", tools)
