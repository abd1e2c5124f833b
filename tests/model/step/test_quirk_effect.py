"""Quirk Q1's effect on a row: the latency per step it drops, found by evaluating the row's layout
with the quirk off (docs/model.md §11), and never a change to the paper's rows."""

from __future__ import annotations

import pytest

from pipeline.execute.series import evaluate_series
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.step.evaluate import evaluate_layout, q1_latency_hidden_s
from pipeline.schema import compose_config, load_scenario

Q1_OFF = SearchOptions(quirks=Quirks(zb_hides_latency_correctly=True))


def series(*overrides: str):  # type: ignore[no-untyped-def]
    """The scenario and the evaluated series of these overrides (paper physics)."""
    scenario = load_scenario(compose_config(list(overrides)))
    return scenario, evaluate_series(scenario)


def test_q1_latency_hidden_is_the_step_with_the_quirk_off_minus_the_step() -> None:
    """At 100 µs of network latency some zero-bubble rows drop latency, each by exactly their
    layout's step with Q1 off minus its step with Q1 on."""
    scenario, outcome = series("hardware.network.latency_us=[100,100]")
    hidden = [p for p in outcome.points if p.q1_latency_hidden_s]
    assert hidden
    for p in hidden:
        assert p.layout is not None
        assert p.layout.zero_bubble
        on = evaluate_layout(scenario.hardware, p.shape, p.layout, scenario.options)
        off = evaluate_layout(scenario.hardware, p.shape, p.layout, Q1_OFF)
        assert p.q1_latency_hidden_s == pytest.approx(off.step_time_s - on.step_time_s, rel=1e-12)


def test_q1_latency_hidden_shortcut_agrees_with_evaluating_every_row() -> None:
    """Rows not evaluated a second time (latency within compute) lose nothing to Q1: the full
    evaluation gives 0 for each of them too, at the default latency and at 100 µs."""
    for overrides in ([], ["hardware.network.latency_us=[100,100]"]):
        scenario, outcome = series(*overrides)
        for p in outcome.points:
            if p.layout is None or p.cost is None:
                continue
            full = q1_latency_hidden_s(scenario.hardware, p.shape, p.layout, scenario.options)
            assert p.q1_latency_hidden_s == pytest.approx(full, abs=0.0)


def test_q1_latency_hidden_is_zero_with_the_quirk_off() -> None:
    """With Q1 off the column is 0 on every row: the latency is already charged."""
    _, outcome = series(
        "hardware.network.latency_us=[100,100]",
        "parallelism.quirks.zb_hides_latency_correctly=true",
    )
    assert all(p.q1_latency_hidden_s == 0.0 for p in outcome.points if p.cost is not None)


def test_q1_latency_hidden_is_null_under_realistic_physics() -> None:
    """Realistic rows pay their latency inside their communication terms: no Q1 column."""
    _, outcome = series("physics=realistic", "scaling.grid.max_d_model=16384")
    assert all(p.q1_latency_hidden_s is None for p in outcome.points)
