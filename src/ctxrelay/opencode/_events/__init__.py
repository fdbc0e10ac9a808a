"""One module per OpenCode event ctxrelay answers, each with
``handle(payload) -> Answer | None``."""

__all__: list[str] = []
