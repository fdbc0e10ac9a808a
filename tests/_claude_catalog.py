"""The model catalog inside the Claude Code CLI that claude-agent-sdk bundles: the windows,
largest outputs and prices Claude Code itself uses, read from the binary so the project's
model and price tables are checked against the real thing (skipped when it is absent)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW
from tests.conftest import claude_cli

_ENTRY = re.compile(rb'\{id:"(claude-[a-z0-9-]+)",family:"(\w+)",display_name:')
_CONTEXT = re.compile(rb"context:\{window:([0-9e.]+)")
_OUTPUT = re.compile(rb"max_output_tokens:\{default:(\d+),upper:(\d+)\}")
_PRICING = re.compile(rb'pricing:"(\w+)"')
_TIERS = re.compile(rb"pricing_tiers:\{(.*?)\}\},models:")
_TIER = re.compile(rb"(\w+):\{([^{}]*)")
_FIELD = re.compile(rb"(\w+):([0-9e.]+)")


@dataclass(frozen=True)
class CatalogModel:
    window: int
    max_output_tokens: int
    tier: str


def _number(raw: bytes) -> float:
    return float(raw.decode())  # the bundle writes 1,000,000 as 1e6


@cache
def _data() -> bytes:
    return claude_cli().read_bytes()


def models() -> dict[str, CatalogModel]:
    """Model id -> its catalog entry; a model without a ``context`` entry gets the CLI's
    default window."""
    data = _data()
    found: dict[str, CatalogModel] = {}
    for match in _ENTRY.finditer(data):
        # An entry ends where the next one starts; the fields of interest come before.
        end = data.find(b'{id:"', match.end())
        entry = data[match.end() : end if end > 0 else match.end() + 4_000]
        output, pricing = _OUTPUT.search(entry), _PRICING.search(entry)
        if output is None or pricing is None:
            continue
        window = _CONTEXT.search(entry)
        size = DEFAULT_CONTEXT_WINDOW if window is None else int(_number(window.group(1)))
        model = CatalogModel(size, int(output.group(2)), pricing.group(1).decode())
        found.setdefault(match.group(1).decode(), model)
    return found


def tiers() -> dict[str, dict[str, float]]:
    """Pricing tier -> its rates in USD per million tokens (a long-prompt tier's nested
    rates are left out)."""
    block = _TIERS.search(_data())
    assert block is not None, "the catalog's pricing_tiers layout changed"
    return {
        name.decode(): {k.decode(): _number(v) for k, v in _FIELD.findall(body)}
        for name, body in _TIER.findall(block.group(1))
    }
