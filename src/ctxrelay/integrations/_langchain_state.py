"""The graph state of ctxrelay's LangChain middleware: the agent's state plus the private
key that names an invocation's run. Imported only when the middleware is built (it needs
LangChain); LangChain evaluates these annotations against this module's names."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentState
from langchain.agents.middleware.types import PrivateStateAttr

__all__ = ["RUN_KEY", "RelayState"]

RUN_KEY = "ctxrelay_run"
"""The state key naming an invocation's run (private: not in the agent's input or
output)."""


class RelayState(AgentState[Any]):
    ctxrelay_run: NotRequired[Annotated[str | None, PrivateStateAttr]]
