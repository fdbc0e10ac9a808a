"""Integration benchmark: per-dispatch overhead of ctxrelay inside each framework.

For each framework whose package is installed, an agent makes DISPATCHES model calls,
each answered at once by a scripted in-process model with one call of a no-op tool (the
last with text): TRIALS times without ctxrelay and TRIALS times with its integration (a
fresh SQLite store in a temporary directory), alternating, in the same run.

The overhead of a dispatch is the time spent in ctxrelay's seams in the framework, from
entry to return with the model's call taken out: the Agents SDK's input filter and
``on_llm_end`` hook, pydantic-ai's ``before_model_request`` and ``after_model_request``,
LangChain's ``awrap_model_call``. That is recording the response and the tool results,
assembling and estimating the window's request, asking the policy, publishing when due,
returning the items to send, and the adapter's own work around them. Its median is held
to at most 2 ms on SQLite, as for the runtime; what the store's writes take of it is
shown too, and the CPU time of the same seams (on a loaded machine the wall time is mostly
waiting for a core: the CPU time is the work, the load average at the end says how busy
the machine was). The gap between model calls with and without ctxrelay is printed as
well (the framework's own work dominates it, and on a shared machine it is noisy).

    python bench/integrations.py                   # a table
    python bench/integrations.py --json            # one JSON object
    python bench/integrations.py --dispatches 400  # a longer history

It also checks ctxrelay's median against the framework's own gap (at most 0.25x of it)
and traces the memory ctxrelay adds to a run's peak at the given dispatches and at half
as many: it must grow with the history (about 2x), not with dispatches x history.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxrelay.budget import Budget
from ctxrelay.store import open_store

TARGET_MEDIAN_MS = 2.0
TARGET_SHARE_OF_GAP = 0.25
"""ctxrelay's median time per dispatch, as a share of the framework's own median gap
between model calls without ctxrelay, measured in the same run."""
MEMORY_GROWTH_MAX = 2.5
"""What ctxrelay adds to a run's peak memory at twice the dispatches, at most, as a
ratio: linear growth (its history) is 2, dispatches x history would be 4."""
TRIALS = 3
BUDGET = Budget(limit=1_000_000, output_reserve=32_000)


class Meter:
    """ctxrelay's own time at each dispatch: what its seams in the framework spend, from
    entry to return, the model's call excluded. A dispatch's time is its pre-call seam's
    and the post-call seam's of the response before it (the two run back to back around
    the framework's own work). Of that, ``stored`` is what the store's writes took (the
    reply, then the tool results, each committed before the framework goes on)."""

    def __init__(self) -> None:
        self.spent: list[float] = []
        self.cpu: list[float] = []
        self.stored: list[float] = []
        self._after = (0.0, 0.0)
        self._store = 0.0

    def before(self, seconds: float, cpu: float) -> None:
        self.spent.append(seconds + self._after[0])
        self.cpu.append(cpu + self._after[1])
        self.stored.append(self._store)
        self._after, self._store = (0.0, 0.0), 0.0

    def after(self, seconds: float, cpu: float) -> None:
        self._after = (seconds, cpu)

    def watch(self, store: Any) -> None:
        """Time the writes of ``store`` (a store's own ``append``, on this instance)."""
        append = store.append

        def timed_append(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return append(*args, **kwargs)
            finally:
                self._store += time.perf_counter() - start

        store.append = timed_append

    def timed(self, seam: Callable[..., Any], *, before: bool) -> Callable[..., Any]:
        """``seam`` (a coroutine function) timed as the pre-call or the post-call seam."""
        record = self.before if before else self.after

        async def timed_seam(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return await seam(*args, **kwargs)
            finally:
                record(time.perf_counter() - start, time.thread_time() - cpu)

        return timed_seam


async def _openai_agents(dispatches: int, db: Path | None) -> tuple[list[float], Meter]:
    """Gaps between model calls (seconds) of one Agents SDK run, with ctxrelay when
    ``db`` is given, and the time spent in ctxrelay at each dispatch."""
    from agents import (
        Agent,
        FunctionTool,
        Model,
        ModelResponse,
        Runner,
        Usage,
        set_tracing_disabled,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)
    gaps: list[float] = []
    state: dict[str, Any] = {"left": None, "n": 0}
    meter = Meter()

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            now = time.perf_counter()
            if state["left"] is not None:
                gaps.append(now - state["left"])
            n = state["n"] = int(state["n"] or 0) + 1
            usage = Usage(requests=1, input_tokens=2_000 + 150 * n, output_tokens=20)
            if n < dispatches:
                output: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"call_{n}",
                        name="noop",
                        arguments="{}",
                        id=f"fc_{n}",
                    )
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = [
                    ResponseOutputMessage(
                        type="message",
                        id=f"msg_{n}",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            state["left"] = time.perf_counter()
            return ModelResponse(output=output, usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    async def noop(_ctx: Any, _args: str) -> str:
        return "ok " * 40

    tool = FunctionTool(
        name="noop",
        description="does nothing",
        params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
        on_invoke_tool=noop,
        strict_json_schema=False,
    )
    tools: list[Any] = [tool]
    kwargs: dict[str, Any] = {}
    store = None
    if db is not None:
        from ctxrelay.integrations.openai_agents import AgentsRelay

        store = open_store(str(db))
        meter.watch(store)
        relay = AgentsRelay.open(store, budget=BUDGET, model="gpt-4.1")
        tools += relay.tools
        kwargs = relay.run_kwargs()
        config, hooks = kwargs["run_config"], kwargs["hooks"]
        kwargs["run_config"] = dataclasses.replace(
            config, call_model_input_filter=meter.timed(config.call_model_input_filter, before=True)
        )
        hooks.on_llm_end = meter.timed(hooks.on_llm_end, before=False)
    agent: Agent[Any] = Agent(name="bench", instructions="bench", tools=tools, model=Scripted())
    try:
        await Runner.run(agent, "go", max_turns=dispatches + 5, **kwargs)
    finally:
        if store is not None:
            store.close()
    return gaps, meter


async def _pydantic_ai(dispatches: int, db: Path | None) -> tuple[list[float], Meter]:
    """The same for pydantic-ai, its ``FunctionModel`` answering in process."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    gaps: list[float] = []
    state: dict[str, Any] = {"left": None, "n": 0}
    meter = Meter()

    def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
        now = time.perf_counter()
        if state["left"] is not None:
            gaps.append(now - state["left"])
        n = state["n"] = int(state["n"]) + 1
        usage = RequestUsage(input_tokens=2_000 + 150 * n, output_tokens=20)
        parts: list[Any] = (
            [ToolCallPart("noop", {}, tool_call_id=f"call_{n}")]
            if n < dispatches
            else [TextPart("done")]
        )
        state["left"] = time.perf_counter()
        return ModelResponse(parts=parts, usage=usage)

    async def noop() -> str:
        return "ok " * 40

    capabilities: list[Any] = []
    store = None
    if db is not None:
        from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

        store = open_store(str(db))
        meter.watch(store)
        relay = PydanticAIRelay.open(store, budget=BUDGET, model="gpt-4.1")
        capability = relay.capability
        seams = type(capability)  # the instance of each run is made by for_run
        seams.before_model_request = meter.timed(seams.before_model_request, before=True)
        seams.after_model_request = meter.timed(seams.after_model_request, before=False)
        capabilities = [capability]
    agent: Agent[None, str] = Agent(
        FunctionModel(answer), tools=[Tool(noop)], capabilities=capabilities
    )
    try:
        await agent.run("go", usage_limits=UsageLimits(request_limit=dispatches + 5))
    finally:
        if store is not None:
            store.close()
    return gaps, meter


async def _langchain(dispatches: int, db: Path | None) -> tuple[list[float], Meter]:
    """The same for a LangChain ``create_agent`` graph, a scripted chat model answering."""
    from langchain.agents import create_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import StructuredTool

    gaps: list[float] = []
    state: dict[str, Any] = {"left": None, "n": 0}
    meter = Meter()

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            now = time.perf_counter()
            if state["left"] is not None:
                gaps.append(now - state["left"])
            n = state["n"] = int(state["n"]) + 1
            usage = {
                "input_tokens": 2_000 + 150 * n,
                "output_tokens": 20,
                "total_tokens": 2_020 + 150 * n,
            }
            calls = [{"name": "noop", "args": {}, "id": f"call_{n}"}] if n < dispatches else []
            message = AIMessage(
                content="" if calls else "done", tool_calls=calls, usage_metadata=usage
            )
            state["left"] = time.perf_counter()
            return ChatResult(generations=[ChatGeneration(message=message)])

    async def noop() -> str:
        return "ok " * 40

    tool = StructuredTool.from_function(coroutine=noop, name="noop", description="does nothing")
    middleware: list[Any] = []
    store = None
    if db is not None:
        from ctxrelay.integrations.langchain import LangChainRelay

        store = open_store(str(db))
        meter.watch(store)
        relay = LangChainRelay.open(store, budget=BUDGET, model="gpt-4.1")
        mine = relay.middleware
        wrap = mine.awrap_model_call

        async def timed_wrap(request: Any, handler: Any) -> Any:
            # One seam around the model's call: its time is taken out.
            model = model_cpu = 0.0

            async def timed_handler(sent: Any) -> Any:
                nonlocal model, model_cpu
                start, cpu = time.perf_counter(), time.thread_time()
                try:
                    return await handler(sent)
                finally:
                    model = time.perf_counter() - start
                    model_cpu = time.thread_time() - cpu

            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return await wrap(request, timed_handler)
            finally:
                meter.before(
                    time.perf_counter() - start - model, time.thread_time() - cpu - model_cpu
                )

        mine.awrap_model_call = timed_wrap
        middleware = [mine]
    agent: Any = create_agent(Scripted(), tools=[tool], middleware=middleware)
    try:
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": "go"}]},
            {"recursion_limit": 2 * dispatches + 10},
        )
    finally:
        if store is not None:
            store.close()
    return gaps, meter


BenchRun = Callable[[int, Path | None], Coroutine[Any, Any, tuple[list[float], Meter]]]
FRAMEWORKS: dict[str, tuple[str, BenchRun]] = {
    "openai-agents": ("agents", _openai_agents),
    "pydantic-ai": ("pydantic_ai", _pydantic_ai),
    "langchain": ("langchain", _langchain),
}


def _peak_kib(run: BenchRun, dispatches: int, db: Path | None) -> float:
    """The peak of memory Python allocated during one run (KiB), traced."""
    tracemalloc.start()
    try:
        asyncio.run(run(dispatches, db))
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def memory(run: BenchRun, dispatches: int, tmp: Path) -> dict[str, Any]:
    """What ctxrelay adds to a run's peak memory at ``dispatches`` and at half as many:
    a run's state must grow with its history (about 2x for twice the dispatches), never
    with dispatches x history (about 4x), even when the framework rebuilds its items at
    every call (the Agents SDK)."""
    added = []
    for n in (dispatches // 2, dispatches):
        bare = _peak_kib(run, n, None)
        relayed = _peak_kib(run, n, tmp / f"memory-{n}.db")
        added.append(max(relayed - bare, 1.0))
    return {
        "memory_added_kib": round(added[1], 1),
        "memory_added_half_kib": round(added[0], 1),
        "memory_growth": round(added[1] / added[0], 2),
        "memory_growth_target": MEMORY_GROWTH_MAX,
        "memory_within_target": added[1] / added[0] <= MEMORY_GROWTH_MAX,
    }


def measure(dispatches: int, only: list[str] | None = None) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (module, run) in FRAMEWORKS.items():
            if only and name not in only:
                continue
            if importlib.util.find_spec(module) is None:
                results[name] = {"skipped": f"{module} is not installed"}
                continue
            asyncio.run(run(5, Path(tmp) / f"{name}-warm.db"))  # warm the imports
            bare: list[float] = []
            relayed: list[float] = []
            inner: list[float] = []
            cpu: list[float] = []
            stored: list[float] = []
            for trial in range(TRIALS):  # alternate, so load on the machine hits both
                bare += asyncio.run(run(dispatches, None))[0]
                gaps, meter = asyncio.run(run(dispatches, Path(tmp) / f"{name}-{trial}.db"))
                if len(meter.spent) < dispatches:  # a seam the meter missed: say so
                    raise SystemExit(f"{name}: {len(meter.spent)} of {dispatches} dispatches timed")
                relayed += gaps
                inner += meter.spent
                cpu += meter.cpu
                stored += meter.stored
            bare_ms = statistics.median(bare) * 1000
            relay_ms = statistics.median(relayed) * 1000
            inner_ms = statistics.median(inner) * 1000
            share = inner_ms / bare_ms if bare_ms > 0 else 0.0
            results[name] = {
                "dispatches": dispatches * TRIALS,
                "ctxrelay_median_ms": round(inner_ms, 3),
                "ctxrelay_p90_ms": round(statistics.quantiles(inner, n=10)[-1] * 1000, 3),
                "ctxrelay_cpu_median_ms": round(statistics.median(cpu) * 1000, 3),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "store_median_ms": round(statistics.median(stored) * 1000, 3),
                "gap_median_without_ms": round(bare_ms, 3),
                "gap_median_with_ms": round(relay_ms, 3),
                "target_ms": TARGET_MEDIAN_MS,
                "within_target": inner_ms <= TARGET_MEDIAN_MS,
                "share_of_gap": round(share, 3),
                "share_target": TARGET_SHARE_OF_GAP,
                "share_within_target": share <= TARGET_SHARE_OF_GAP,
                **memory(run, dispatches, Path(tmp)),
            }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatches", type=int, default=100, help="per trial")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--framework", action="append", choices=list(FRAMEWORKS), help="only these (repeat)"
    )
    args = parser.parse_args()
    results = measure(args.dispatches, args.framework)
    if args.json:
        print(json.dumps(results))
        return 0
    for name, r in results.items():
        if "skipped" in r:
            print(f"{name}: skipped ({r['skipped']})")
            continue
        print(
            f"{name}: {r['dispatches']} dispatches; ctxrelay's own time per dispatch: median "
            f"{r['ctxrelay_median_ms']:.3f} ms, p90 {r['ctxrelay_p90_ms']:.3f} ms, CPU "
            f"{r['ctxrelay_cpu_median_ms']:.3f} ms "
            f"(target {TARGET_MEDIAN_MS} ms median), of which its writes to the store: median "
            f"{r['store_median_ms']:.3f} ms. Gap between model calls: median "
            f"{r['gap_median_without_ms']:.3f} ms without ctxrelay, "
            f"{r['gap_median_with_ms']:.3f} ms with it; ctxrelay's share of the framework's "
            f"gap {r['share_of_gap']:.2f}x (target {TARGET_SHARE_OF_GAP}x). Memory ctxrelay "
            f"adds to the run's peak: {r['memory_added_kib']:,.0f} KiB, "
            f"{r['memory_growth']:.2f}x what it adds at half the dispatches "
            f"(target {MEMORY_GROWTH_MAX}x: its history, not dispatches x history). Load "
            f"average at the end: {', '.join(str(x) for x in r['load_average'])}."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
