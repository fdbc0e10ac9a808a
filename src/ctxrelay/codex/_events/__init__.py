"""One module per Codex hook event, each with ``handle(payload) -> dict | None``."""

__all__: list[str] = []
