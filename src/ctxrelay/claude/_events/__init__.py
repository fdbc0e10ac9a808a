"""One module per Claude Code hook event, each with ``handle(payload) -> dict | None``.

``ctxrelay.claude.hook`` imports only the module of the event it is answering.
"""
