"""The Claude Code host's parts that are neither a hook nor install time: the
``session_history`` MCP server (``ctxrelay claude mcp``), the statusline (``ctxrelay
claude statusline``), the headless SDK driver (``ctxrelay claude run``) and the
auto-handoff mod's layout (:mod:`~ctxrelay.claude.extras.automod`)."""
