"""``session_history`` for Claude Code: an MCP server (``ctxrelay claude mcp``, stdio) whose
one tool lists, searches and reads the earlier sessions of the current handoff chain.

The tool is the runtime's (:class:`ctxrelay.runtime.tools.SessionHistory`): its schema, its
wording and its bounds (16 KiB a result, 2 MiB of text scanned, 500 rows, the per-row cap,
all from :mod:`ctxrelay.budget.bounds`), over the store's bounded history queries. Its
windows are the sessions of the chain, oldest first, the current session last
(:func:`ctxrelay.hooks.chain.chain`): each earlier session's transcript is read once,
through :func:`ctxrelay.transcripts.conversation`, into a throwaway SQLite store (one
ctxrelay session, one window per Claude Code session, each sealed by its handoff), and
the tool runs against it. The current session's window holds no rows: its conversation
is in the model's context, and the tool searches the earlier windows only.

Which session is current: the server is a child of the Claude Code process, started once
and kept across ``/clear`` (seen on 2.1.332: the same server process before and after,
its environment's ``CLAUDE_CODE_SESSION_ID`` still the first session's), so at each call
it asks :func:`ctxrelay.hooks.chain.current` for the session its parent process runs
now, as the ``SessionStart`` hook recorded it. The project is the process's
``CLAUDE_PROJECT_DIR``. Before it follows the chain it settles the handoffs
(:func:`ctxrelay.claude.handoff.settle`): the fresh session's first request went out
with the file, so the link from it to the session that wrote it holds already, though
the hooks record it only at the turn's end.

The privacy floor is the chain's: a session that started without a handoff (a fresh
start, a plain ``/clear``) has no earlier window, and a chain never crosses projects.

The MCP SDK (the ``mcp`` package, in the ``claude`` extra) is imported only by
:func:`serve`; the history itself needs none of it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.claude import handoff
from ctxrelay.claude._state import HOST
from ctxrelay.claude.config import project_dir_of
from ctxrelay.errors import ConfigError
from ctxrelay.hooks import chain as _chain
from ctxrelay.runtime.tools import SessionHistory, ToolContext, ToolResult
from ctxrelay.store import NewRow
from ctxrelay.store.sqlite import SqliteStore
from ctxrelay.transcripts import conversation

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
    "serve",
    "tool_schema",
]

SERVER_NAME = "ctxrelay"
"""The name install registers the server under (``claude mcp add … ctxrelay``)."""
TOOL_NAME = "session_history"
MODEL_TOOL_NAME = f"mcp__{SERVER_NAME}__{TOOL_NAME}"
"""What the model calls it, and what the settings' ``permissions.allow`` names."""

TOOL_DESCRIPTION = (
    "Recover details from the earlier Claude Code sessions of this handoff chain: the "
    "sessions this one was handed off from, oldest first, each one window (they are not in "
    "your context; the handoff file summarises them). action=list: the windows. "
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
    """``(store window id, Claude Code session id)``, oldest first."""


def _rows(path: str) -> list[Any]:
    rows = []
    for message in conversation(path):
        meta: dict[str, Any] = {}
        if message.kind == "tool_call":
            meta = {"name": message.name, "id": message.call_id}
        elif message.kind == "tool_result":
            meta = {"tool_call_id": message.call_id, "is_error": message.is_error}
        rows.append(NewRow(message.kind, message.text, meta))
    return rows


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
        ids = [link.session_id for link in links]
        session = store.create_session(metadata={"claude_sessions": ids})
        window = store.current_window(session.id)
        windows: list[tuple[str, str]] = []
        for i, link in enumerate(links):
            where = f"Claude Code session {link.session_id} ({link.transcript_path})"
            head = NewRow("lead_in", where)
            windows.append((window.id, link.session_id))
            if i == len(links) - 1:  # the current session: in the model's context already
                store.append(session.id, window.id, [head])
                break
            store.append(session.id, window.id, [head, *_rows(link.transcript_path)])
            after = links[i + 1].session_id
            window = store.rollover(
                session.id,
                window.id,
                "new_context",
                boundary=NewRow("boundary", f"handed off to Claude Code session {after}"),
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
                f"window {i}: Claude Code session {sid}"
                for i, (_, sid) in enumerate(built.windows, 1)
            )
            return ToolResult(f"{result.content}\n{sessions}", metadata=result.metadata)
        return result


_NO_SESSION = (
    "session_history: ctxrelay has no record of which session this Claude Code process "
    "runs (its SessionStart hook did not run here): run ctxrelay claude install in this "
    "project, then start Claude Code again"
)


async def history_call(history: ChainHistory, args: Mapping[str, Any]) -> ToolResult:
    """One tool call from the Claude Code process that started this server."""
    link = _chain.current(HOST, os.getppid())
    if link is None:
        return ToolResult(_NO_SESSION, is_error=True)
    project = project_dir_of()
    # The hooks record that a session started from a handoff at its next Stop; a call in
    # the fresh session's first turn (its request went out with the file) must see it now.
    handoff.settle(project)
    return await history.call(args, _chain.chain(project, link))


def serve() -> None:
    """Serve the tool over stdio until the client closes the pipe."""
    try:
        import anyio  # noqa: PLC0415 — the claude extra's anyio
        from mcp import types  # noqa: PLC0415 — the claude extra's mcp SDK
        from mcp.server.lowlevel import Server  # noqa: PLC0415 — the mcp SDK
        from mcp.server.stdio import stdio_server  # noqa: PLC0415 — the mcp SDK
    except ImportError:
        raise ConfigError(
            "ctxrelay claude mcp needs the MCP SDK: install ctxrelay with the claude extra "
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
            result = await history_call(history, params.arguments or {})
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
    """Start the server as Claude Code does (``command`` with ``args``, over stdio) and
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
