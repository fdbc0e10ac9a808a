"""What sets the Codex CLI up for ctxrelay, and checks it: install and uninstall with
Codex's trust (:mod:`~ctxrelay.codex.setup.install`, through the app-server client
:mod:`~ctxrelay.codex.setup.appserver`), the hook command
(:mod:`~ctxrelay.codex.setup.launcher`), the probe and the doctor
(:mod:`~ctxrelay.codex.setup.probe`, :mod:`~ctxrelay.codex.setup.doctor`) and where the
Codex CLI is (:mod:`~ctxrelay.codex.setup.binary`).

Install time only: no hook imports anything here. The hook-time modules (``hook.py``,
``host.py``, ``_events/``, ``guard.py``, ``handoff.py``, …) stay in ``ctxrelay.codex``,
where the installed commands name them.
"""
