"""The host-neutral core of ctxrelay's coding-agent hosts.

What every host shares lives here, once: the dispatch of a hook process
(:mod:`~ctxrelay.hooks.dispatch`), the hooks' state documents
(:mod:`~ctxrelay.hooks.state`), a project's handoff files and their chain
(:mod:`~ctxrelay.hooks.handoff`, :mod:`~ctxrelay.hooks.chain`), the settings files
(:mod:`~ctxrelay.hooks.config`) and the shell guard (:mod:`~ctxrelay.hooks.guard`); at
install time only, the install machinery (:mod:`~ctxrelay.hooks.install`). A
host (``ctxrelay.claude``, ``ctxrelay.codex``) is an adapter of it: its event names and
payloads, its answers, its transcripts, its install target (in its ``setup/``). Hosts
import this package, never each other (``tests/test_hosts_apart.py``). See
``docs/architecture.md`` and ``docs/adding-a-host.md``.
"""
