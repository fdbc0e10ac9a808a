"""What sets Claude Code up for ctxrelay, and checks it: install and uninstall
(:mod:`~ctxrelay.claude.setup.install`), the settings snippet
(:mod:`~ctxrelay.claude.setup._snippet`), the commands install writes
(:mod:`~ctxrelay.claude.setup.launcher`), the probes and the doctor
(:mod:`~ctxrelay.claude.setup.probe`, :mod:`~ctxrelay.claude.setup.doctor`) and where
the Claude Code CLI is (:mod:`~ctxrelay.claude.setup.binary`).

Install time only: no hook imports anything here (``tests/claude/test_hook_imports.py``).
The hook-time modules (``hook.py``, ``_events/``, ``guard/``, ``handoff.py``, …) stay in
``ctxrelay.claude``, where the installed commands name them.
"""
