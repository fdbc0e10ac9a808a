"""Install time only: what install merges into OpenCode's config (no hook imports it)."""
