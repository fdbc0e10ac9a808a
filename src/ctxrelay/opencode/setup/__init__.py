"""What runs once, at install: the plugin file, install, uninstall and doctor. Never
imported by the hook."""

__all__: list[str] = []
