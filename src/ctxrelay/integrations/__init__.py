"""ctxrelay's policy inside the agent frameworks people already use.

One module per framework, each behind its own extra and importing its framework only
when used:

- :mod:`ctxrelay.integrations.openai_agents` (``ctxrelay[openai-agents]``): the OpenAI
  Agents SDK, through ``RunConfig.call_model_input_filter``, ``RunHooks.on_llm_end`` and
  two ``FunctionTool`` values;
- :mod:`ctxrelay.integrations.pydantic_ai` (``ctxrelay[pydantic-ai]``): pydantic-ai,
  through one capability (``before_model_request``, ``after_model_request``, a toolset);
- :mod:`ctxrelay.integrations.langchain` (``ctxrelay[langchain]``): LangChain's
  ``create_agent``, through one agent middleware (``wrap_model_call`` and its tools).

Each puts the same policy in front of every model call as the runtime (the runtime's
``plan_dispatch``), publishes advisories the same way (a durable row and its claim before
the request), offers ``new_context`` and ``session_history`` as the framework's own tools
and opens the next window with the same lead-in. See ``docs/integrations.md``.
"""

from __future__ import annotations

from ctxrelay.errors import DispatchBlockedError
from ctxrelay.integrations._relay import Codec, ItemRow, Relay, SentRequest
from ctxrelay.integrations._support import IntegrationWarning, budget_for, require

__all__ = [
    "Codec",
    "DispatchBlockedError",
    "IntegrationWarning",
    "ItemRow",
    "Relay",
    "SentRequest",
    "budget_for",
    "require",
]
