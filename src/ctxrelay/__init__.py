"""ctxrelay: bound the context of LLM agent sessions by agent-led handoff.

The public surface is small: the policy core lives in :mod:`ctxrelay.budget`, errors in
:mod:`ctxrelay.errors`; the runtime, store, Claude Code plugin and analyzer each have
their own subpackage.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from ctxrelay.errors import CtxrelayError

__version__ = "0.1.0"

__all__ = ["CtxrelayError", "__version__"]


def __getattr__(name: str) -> type[CtxrelayError]:
    # PEP 562: every ``ctxrelay-hook`` process imports this package; the errors module
    # loads when something names an error, not at every hook start.
    if name == "CtxrelayError":
        from ctxrelay.errors import CtxrelayError

        return CtxrelayError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
