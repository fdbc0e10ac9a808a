"""One module per Gemini CLI hook event, each with ``handle(payload) -> Answer | None``."""

__all__: list[str] = []
