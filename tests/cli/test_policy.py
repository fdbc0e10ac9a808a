"""``ctxrelay policy plan|simulate`` in-process: the JSON of ``docs/contracts.md``, the tables, the
advisory wording, and one clear sentence for every bad input of issue 2."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.cli import main

BASE = ["--limit", "200000", "--reserve", "32000", "--threshold", "60"]
DONE_WHEN_TOKENS = "90000,100000,110000,121000,125000,168001,50000"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(["policy", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return json.loads(out)  # the whole stdout is one JSON document


def run_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["policy", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return out


# -- the "Done when" example, exactly ------------------------------------------


def test_done_when_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "plan", *BASE) == {
        "limit": 200000,
        "output_reserve": 32000,
        "usable_limit": 168000,
        "threshold": 60,
        "effective_threshold": 60,
        "mode": "active",
        "handoff_target": 120000,
        "warning_at": 100000,
    }


def test_done_when_simulate(capsys: pytest.CaptureFixture[str]) -> None:
    steps = run_json(capsys, "simulate", *BASE, "--tokens", DONE_WHEN_TOKENS)
    assert steps == [
        {"tokens": 90000, "decision": "continue", "stage": None, "window": 1},
        {"tokens": 100000, "decision": "warn", "stage": "warning", "window": 1},
        {"tokens": 110000, "decision": "continue", "stage": None, "window": 1},
        {"tokens": 121000, "decision": "warn", "stage": "handoff", "window": 1},
        {"tokens": 125000, "decision": "continue", "stage": None, "window": 1},
        {"tokens": 168001, "decision": "rollover", "stage": None, "window": 1},
        {"tokens": 50000, "decision": "continue", "stage": None, "window": 2},
    ]


# -- JSON shapes (docs/contracts.md) -----------------------------------------------------

PLAN_KEYS = {
    "limit",
    "output_reserve",
    "usable_limit",
    "threshold",
    "effective_threshold",
    "mode",
    "handoff_target",
    "warning_at",
}


def test_plan_off_has_null_points(capsys: pytest.CaptureFixture[str]) -> None:
    plan = run_json(capsys, "plan", "--limit", "200000", "--reserve", "32000", "--threshold", "100")
    assert set(plan) == PLAN_KEYS
    assert plan["mode"] == "off"
    assert plan["handoff_target"] is None
    assert plan["warning_at"] is None
    assert plan["usable_limit"] == 168000


def test_plan_without_warning_stage(capsys: pytest.CaptureFixture[str]) -> None:
    # Threshold 5 -> the 10% floor: target 20000, and a 15-point lead puts the warning
    # below zero, so there is no warning stage.
    plan = run_json(
        capsys,
        "plan",
        "--limit",
        "200000",
        "--reserve",
        "32000",
        "--threshold",
        "5",
        "--warning-lead",
        "15",
    )
    assert plan["threshold"] == 5
    assert plan["effective_threshold"] == 10
    assert plan["handoff_target"] == 20000
    assert plan["warning_at"] is None
    assert plan["mode"] == "active"


def test_plan_decimal_threshold_floors_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    # 200000 x 60.1% is 120200 exactly; in binary floating point it is 120199.99999999999.
    plan = run_json(capsys, "plan", "--limit", "200000", "--reserve", "0", "--threshold", "60.1")
    assert plan["threshold"] == 60.1
    assert plan["handoff_target"] == 120200
    assert plan["warning_at"] == 100200


def test_plan_underscores_in_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    plan = run_json(
        capsys, "plan", "--limit", "200_000", "--reserve", "32_000", "--threshold", "60"
    )
    assert plan["usable_limit"] == 168000


def test_simulate_shape_and_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    # usable 168000 and a 60000-token advisory: at 110000 the warning does not fit, at
    # 125000 the handoff does not; at 105000 (a smaller estimate) the warning fits.
    steps = run_json(
        capsys,
        "simulate",
        *BASE,
        "--tokens",
        "110000,125000,105000,100000",
        "--advisory-tokens",
        "60000",
    )
    for step in steps:
        assert set(step) - {"skipped"} == {"tokens", "decision", "stage", "window"}
    assert [s["decision"] for s in steps] == ["continue", "continue", "warn", "continue"]
    assert [s.get("skipped") for s in steps] == ["warning", "handoff", None, None]
    assert steps[2]["stage"] == "warning"


def test_simulate_off_blocks_and_stays_in_window(capsys: pytest.CaptureFixture[str]) -> None:
    steps = run_json(
        capsys,
        "simulate",
        "--limit",
        "200000",
        "--reserve",
        "32000",
        "--threshold",
        "100",
        "--tokens",
        "100000,150000,168000,168001,10000",
    )
    assert [s["decision"] for s in steps] == ["continue"] * 3 + ["block", "continue"]
    assert {s["window"] for s in steps} == {1}
    assert all(s["stage"] is None for s in steps)


def test_simulate_inactive_never_warns(capsys: pytest.CaptureFixture[str]) -> None:
    steps = run_json(capsys, "simulate", *BASE, "--tokens", DONE_WHEN_TOKENS, "--inactive")
    assert [s["decision"] for s in steps] == ["continue"] * 5 + ["rollover", "continue"]
    assert [s["window"] for s in steps] == [1] * 6 + [2]


def test_simulate_rollover_resets_claims(capsys: pytest.CaptureFixture[str]) -> None:
    steps = run_json(capsys, "simulate", *BASE, "--tokens", "100000,120000,170000,100000,120000")
    assert [(s["decision"], s["stage"], s["window"]) for s in steps] == [
        ("warn", "warning", 1),
        ("warn", "handoff", 1),
        ("rollover", None, 1),
        ("warn", "warning", 2),
        ("warn", "handoff", 2),
    ]


def test_simulate_text_in_json_carries_wording(capsys: pytest.CaptureFixture[str]) -> None:
    steps = run_json(
        capsys,
        "simulate",
        *BASE,
        "--tokens",
        "100000,121000",
        "--capability",
        "conditional",
        "--text",
    )
    assert "handoff target of 120,000" in steps[0]["text"]
    assert "if the `new_context` tool is available" in steps[1]["text"]


# -- tables and wording for people --------------------------------------------------------


def test_plan_table(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_text(capsys, "plan", *BASE)
    assert not out.lstrip().startswith("{")
    for label, value in (
        ("usable limit", "168,000"),
        ("handoff target", "120,000"),
        ("warning at", "100,000"),
        ("mode", "active"),
    ):
        line = next(line for line in out.splitlines() if label in line)
        assert value in line


def test_simulate_table(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_text(capsys, "simulate", *BASE, "--tokens", DONE_WHEN_TOKENS)
    rows = [line for line in out.splitlines() if "│" in line and any(c.isdigit() for c in line)]
    assert len(rows) == 7
    assert "warn" in rows[1]
    assert "warning" in rows[1]
    assert "handoff" in rows[3]
    assert "rollover" in rows[5]
    assert "168,001" in rows[5]
    assert "usable limit 168,000" in out


def test_simulate_table_names_a_skipped_stage(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_text(capsys, "simulate", *BASE, "--tokens", "125000", "--advisory-tokens", "50000")
    assert "handoff skipped" in out
    assert "no headroom under the usable limit" in out


@pytest.mark.parametrize(
    ("capability", "phrase"),
    [
        ("full", "call `new_context` to continue in a fresh window"),
        ("conditional", "if the `new_context` tool is available to you"),
        ("degraded", "even though you cannot start a fresh window yourself"),
    ],
)
def test_plan_text_variants(
    capsys: pytest.CaptureFixture[str], capability: str, phrase: str
) -> None:
    out = run_text(capsys, "plan", *BASE, "--text", "--capability", capability)
    flat = " ".join(out.split())  # rich wraps long lines
    assert phrase in flat
    assert "Context warning" in flat
    assert "Context handoff requested" in flat


def test_plan_text_json(capsys: pytest.CaptureFixture[str]) -> None:
    plan = run_json(capsys, "plan", *BASE, "--text", "--capability", "degraded")
    assert set(plan) == PLAN_KEYS | {"texts"}
    assert set(plan["texts"]) == {"warning", "handoff"}
    assert "roll over when it reaches 168,000 tokens" in plan["texts"]["handoff"]


def test_plan_text_off_has_no_wording(capsys: pytest.CaptureFixture[str]) -> None:
    plan = run_json(
        capsys, "plan", "--limit", "1000", "--reserve", "0", "--threshold", "100", "--text"
    )
    assert plan["texts"] == {}


def test_simulate_text(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_text(capsys, "simulate", *BASE, "--tokens", DONE_WHEN_TOKENS, "--text")
    flat = " ".join(out.split())
    assert "dispatch at 100,000 tokens:" in flat
    assert "dispatch at 121,000 tokens:" in flat
    assert "call `new_context`" in flat


def test_text_tables_keep_the_bracketed_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    # rich would read "[ctxrelay]" (and any "[bold]") in the wording as a markup tag.
    plan = run_text(capsys, "plan", *BASE, "--text")
    assert plan.count("[ctxrelay] Context warning") == 1
    assert plan.count("[ctxrelay] Context handoff requested") == 1
    simulated = run_text(capsys, "simulate", *BASE, "--tokens", DONE_WHEN_TOKENS, "--text")
    assert "[ctxrelay] Context warning" in simulated
    assert "[ctxrelay] Context handoff requested" in simulated


# -- bad input: one sentence on stderr naming the value, non-zero exit, no traceback ------

BAD_INPUTS = [
    (["plan", "--limit", "0", "--reserve", "0", "--threshold", "60"], "--limit", "0"),
    (["plan", "--limit", "-5", "--reserve", "0", "--threshold", "60"], "--limit", "-5"),
    (["plan", "--limit", "abc", "--reserve", "0", "--threshold", "60"], "--limit", "'abc'"),
    (["plan", "--limit", "1.5", "--reserve", "0", "--threshold", "60"], "--limit", "1.5"),
    (["plan", "--limit", "100", "--reserve", "100", "--threshold", "60"], "--reserve", "100"),
    (["plan", "--limit", "100", "--reserve", "250", "--threshold", "60"], "--reserve", "250"),
    (["plan", "--limit", "100", "--reserve", "-1", "--threshold", "60"], "--reserve", "-1"),
    (["plan", "--limit", "100", "--reserve", "x", "--threshold", "60"], "--reserve", "'x'"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "101"], "--threshold", "101"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "100.5"], "--threshold", "100.5"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "-1"], "--threshold", "-1"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "-0.5"], "--threshold", "-0.5"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "nan"], "--threshold", "'nan'"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "inf"], "--threshold", "'inf'"),
    (["plan", "--limit", "100", "--reserve", "0", "--threshold", "6x"], "--threshold", "'6x'"),
    (
        ["plan", "--limit", "100", "--reserve", "0", "--threshold", "1e999999999"],
        "--threshold",
        "'1e999999999'",
    ),
    (
        ["plan", "--limit", "300", "--reserve", "0", "--threshold", "33.333333333333333333"],
        "--threshold",
        "33.333333333333333333",
    ),
    (
        ["plan", "--limit", "100", "--reserve", "0", "--threshold", "60", "--warning-lead", "200"],
        "--warning-lead",
        "200",
    ),
    (
        ["plan", "--limit", "100", "--reserve", "0", "--threshold", "60", "--warning-lead", "-1"],
        "--warning-lead",
        "-1",
    ),
    ([*["simulate", *BASE], "--tokens", "1,-2"], "--tokens", "-2"),
    ([*["simulate", *BASE], "--tokens", "-2,5"], "--tokens", "-2"),
    ([*["simulate", *BASE], "--tokens", "-7"], "--tokens", "-7"),
    ([*["simulate", *BASE], "--tokens", "1,x"], "--tokens", "'x'"),
    ([*["simulate", *BASE], "--tokens", "1,,2"], "--tokens", "''"),
    ([*["simulate", *BASE], "--tokens", "1.5"], "--tokens", "1.5"),
    ([*["simulate", *BASE], "--tokens", "\u00b2"], "--tokens", "'\u00b2'"),
    ([*["simulate", *BASE], "--tokens", "1", "--advisory-tokens", "-3"], "--advisory-tokens", "-3"),
    ([*["simulate", *BASE], "--tokens", "1", "--advisory-tokens", "a"], "--advisory-tokens", "'a'"),
]


@pytest.mark.parametrize(("argv", "flag", "shown"), BAD_INPUTS)
def test_bad_input_one_sentence(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, shown: str
) -> None:
    code = main(["policy", *argv])
    out, err = capsys.readouterr()
    assert code != 0
    assert out == ""
    assert err.endswith("\n")
    assert err.count("\n") == 1, err  # one line
    assert "Traceback" not in err
    assert f"{flag} must be" in err, err  # names the flag the user typed
    assert f"got {shown}" in err, err  # and the value


def test_bad_input_with_json_prints_no_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["policy", "plan", "--limit", "0", "--reserve", "0", "--threshold", "60", "--json"])
    out, err = capsys.readouterr()
    assert code != 0
    assert out == ""
    assert "--limit must be" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["plan"],
        ["plan", "--limit", "100"],
        ["simulate", *BASE],
        ["simulate", *BASE, "--tokens"],
        ["simulate", *BASE, "--tokens", "1", "--capability", "partial"],
        ["frobnicate"],
        [],
    ],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code = main(["policy", *argv])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


# -- help and the top-level command ------------------------------------------------------


def test_policy_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--help"]) == 0
    out = capsys.readouterr().out
    assert "ctxrelay policy simulate" in out
    assert "--tokens 90000,100000" in out


@pytest.mark.parametrize("sub", ["plan", "simulate"])
def test_subcommand_help(capsys: pytest.CaptureFixture[str], sub: str) -> None:
    assert main(["policy", sub, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--threshold" in out
    assert "--json" in out


def test_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: ctxrelay" in out
    assert "policy" in out
    assert "plan a budget" in out


def test_top_level_help_has_examples_of_real_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ctxrelay.cli import COMMANDS

    assert main(["--help"]) == 0
    examples = capsys.readouterr().out.split("Examples:")[1].split("\n\n")[0]
    lines = [line.split() for line in examples.strip().splitlines()]
    assert len(lines) >= 2
    assert all(words[0] == "ctxrelay" and words[1] in COMMANDS for words in lines)


def test_no_command_prints_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: ctxrelay" in capsys.readouterr().out


def test_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["polciy"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "unknown command 'polciy'" in err
    assert err.count("\n") == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxrelay import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ctxrelay {__version__}\n"
