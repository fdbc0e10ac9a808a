"""The one settings merge (``ctxrelay.hooks.install.merge``): merging a snippet then
taking it out again gives back the settings as they were, but for the hook groups of
ctxrelay's, which install replaces (never doubles) and uninstall removes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.entries import command_hooks, runs_ours
from ctxrelay.hooks.install.merge import Rule, changes, merge, unmerge

RULES = {"hooks": Rule.LISTS, "permissions": Rule.LISTS, "servers": Rule.LIST, "env": Rule.KEYS}
OURS = {"hooks": runs_ours(lambda command: isinstance(command, str) and "our-hook" in command)}
SNIPPET: dict[str, Any] = {
    "env": {"A": "1", "B": "2"},
    "hooks": command_hooks(["Stop", "PreToolUse"], "our-hook --new", matchers={"PreToolUse": "*"}),
    "permissions": {"allow": ["our-tool"]},
    "servers": ["ours"],
    "statusLine": {"type": "command", "command": "our-status"},
}
OLD_GROUP = command_hooks(["Stop"], "our-hook --old")["Stop"][0]
USER_GROUP = command_hooks(["Stop"], "my-hook")["Stop"][0]


def without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ctxrelay's hook groups gone, and the lists left empty by that."""
    out = {**data}
    if isinstance(data.get("hooks"), dict):
        hooks = {e: [g for g in gs if not OURS["hooks"](g)] for e, gs in data["hooks"].items()}
        out["hooks"] = {e: gs for e, gs in hooks.items() if gs or not data["hooks"][e]}
    return out


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "env": st.dictionaries(st.sampled_from(["FOO", "A", "B"]), st.text()),
        "hooks": st.dictionaries(
            st.sampled_from(["Stop", "PreToolUse", "Notification"]),
            st.lists(st.sampled_from([SNIPPET["hooks"]["Stop"][0], OLD_GROUP, USER_GROUP, {}])),
        ),
        "permissions": st.dictionaries(st.sampled_from(["allow", "deny"]), st.lists(st.text())),
        "servers": st.lists(st.sampled_from(["ours", "theirs"])),
        "model": _json,
        "statusLine": _json,
    },
)


@settings(max_examples=300, deadline=None)
@given(_settings)
def test_merge_then_unmerge_is_the_identity_but_for_ctxrelays_hooks(
    current: dict[str, Any],
) -> None:
    merged, record = merge(current, SNIPPET, RULES, OURS)
    again, _ = merge(merged, SNIPPET, RULES, OURS)
    assert again == merged  # idempotent
    for event, groups in merged["hooks"].items():
        ours = [g for g in groups if OURS["hooks"](g)]
        assert ours == SNIPPET["hooks"].get(event, []), event  # replaced, never doubled
    assert unmerge(merged, SNIPPET, record, RULES, OURS) == without_ours(current)


@settings(max_examples=100, deadline=None)
@given(_settings)
def test_without_a_record_what_equals_the_snippet_goes(current: dict[str, Any]) -> None:
    merged, _ = merge(current, SNIPPET, RULES, OURS)
    out = unmerge(merged, SNIPPET, None, RULES, OURS)
    assert not any(OURS["hooks"](g) for gs in out.get("hooks", {}).values() for g in gs)
    assert out.get("statusLine") != SNIPPET["statusLine"]


def test_the_users_groups_keep_their_place_and_ours_go_last() -> None:
    current = {"hooks": {"Stop": [OLD_GROUP, USER_GROUP]}}
    merged, record = merge(current, SNIPPET, RULES, OURS)
    assert merged["hooks"]["Stop"] == [USER_GROUP, *SNIPPET["hooks"]["Stop"]]
    said = changes(record)
    assert "ctxrelay's earlier hooks replaced for Stop" in said
    assert "hooks added for Stop, PreToolUse" in said
    assert "statusLine set" in said
    assert "env A set" in said
    assert "servers: added ours" in said
    assert "permissions.allow: added our-tool" in said


def test_a_value_replaced_is_put_back_and_one_changed_since_stays() -> None:
    current = {"statusLine": {"type": "command", "command": "mine"}, "env": {"A": "0"}}
    merged, record = merge(current, SNIPPET, RULES, OURS)
    assert "statusLine replaced (yours was mine; uninstall restores it)" in changes(record)
    assert "env A set (it was '0')" in changes(record)
    merged["env"]["B"] = "changed by the user"
    out = unmerge(merged, SNIPPET, record, RULES, OURS)
    assert out == {**current, "env": {"A": "0", "B": "changed by the user"}}


@pytest.mark.parametrize(
    ("current", "said"),
    [
        ({"hooks": [1]}, "its 'hooks' is not an object of lists"),
        ({"hooks": {"Stop": {}}}, "its 'hooks' is not an object of lists"),
        ({"servers": {}}, "its 'servers' is not a list"),
        ({"env": 3}, "its 'env' is not an object"),
    ],
)
def test_a_key_of_another_shape_is_refused(current: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        merge(current, SNIPPET, RULES, OURS)
