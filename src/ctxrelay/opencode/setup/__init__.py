"""What runs once, at install: the plugin file, install, uninstall and doctor, and the
``mcp`` entry of ``session_history``. Never imported by the hook."""

__all__: list[str] = []
