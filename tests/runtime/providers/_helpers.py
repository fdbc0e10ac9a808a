"""What the server-backed provider tests share: fast retries, and one completion run to
the end with the provider's client closed after it."""

from __future__ import annotations

import asyncio
from typing import Any

from ctxrelay.runtime.model import ModelRequest
from ctxrelay.runtime.providers._common import RetryPolicy

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)


def complete_once(p: Any, request: ModelRequest, **kwargs: Any) -> Any:
    """``p.complete(request)`` to the end, then ``p.aclose()`` (a real provider)."""

    async def go() -> Any:
        try:
            return await p.complete(request, **kwargs)
        finally:
            await p.aclose()

    return asyncio.run(go())
