"""Install-time code of the Gemini host: install, uninstall, doctor, the hook command,
the probes and where the CLI is. No hook imports it."""

__all__: list[str] = []
