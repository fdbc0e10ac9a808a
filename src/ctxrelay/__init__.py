"""ctxrelay: bound the context of LLM agent sessions by agent-led handoff.

The public surface is small: the policy core lives in :mod:`ctxrelay.budget`, errors in
:mod:`ctxrelay.errors`; the runtime, store, Claude Code plugin and analyzer each have
their own subpackage.
"""

from __future__ import annotations

from ctxrelay.errors import CtxrelayError

__version__ = "0.1.0"

__all__ = ["CtxrelayError", "__version__"]
