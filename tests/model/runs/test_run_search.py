"""The run layout search within a GPU budget: monotone in the budget (a larger one never finds a
slower step, nor none where a smaller one found one), and given a published run's GPU count
it finds that run's layout or one at least as fast."""

from __future__ import annotations

from dataclasses import replace
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.memory.gpu_memory import megatron_group_microbatches
from pipeline.model.records.run import RunSpec
from pipeline.model.runs.run_search import best_run_layout, candidate_layouts
from pipeline.model.runs.training_run import evaluate_run
from pipeline.schema import Scenario, compose_config, load_scenario

RUN_PRESETS = tuple(sorted(p.stem for p in Path("conf/run").glob("*.yaml")))
PUBLISHED = tuple(p for p in RUN_PRESETS if p.startswith(("llama3_", "gpt_")))
"""The Llama 3 405B runs (Llama Team 2024, Table 4) and the GPT runs (Narayanan et al. 2021,
Table 1) of conf/run/."""
REL = 1e-12
"""Relative slack for comparing two step times computed by the same functions."""


@cache
def scenario(name: str) -> Scenario:
    """The run preset searched with realistic physics on the hardware it ran on (H100 with the
    flash kernel for Llama 3, as its preset's command says; A100 80GB for the others)."""
    hw = ["hardware=h100_sxm", "physics.fusion=flash"] if name.startswith("llama3_") else []
    hw = hw or ["hardware=a100_sxm_80gb"]
    overrides = [*hw, "physics=realistic", f"run={name}", "run.layout_search=true"]
    return load_scenario(compose_config(overrides))


def run_of(name: str) -> RunSpec:
    """The preset's run."""
    run = scenario(name).run
    assert run is not None
    return run


@lru_cache(maxsize=256)
def best_step_s(name: str, budget: int) -> float | None:
    """The step time of the fastest layout within `budget` GPUs, or None when none fits."""
    s = scenario(name)
    found = best_run_layout(s.hardware, s.physics, replace(run_of(name), gpu_budget=budget))
    if found is None:
        return None
    assert found[0].layout.n_gpu <= budget
    return found[1].step_time_s


@settings(max_examples=8, deadline=None)
@given(
    name=st.sampled_from(RUN_PRESETS),
    small=st.floats(0.0, 4.0),
    grow=st.floats(1.0, 64.0),
)
def test_run_search_is_monotone_in_its_gpu_budget(name: str, small: float, grow: float) -> None:
    """A larger GPU budget never finds a slower step, nor none where a smaller budget found one."""
    n_gpu = run_of(name).layout.n_gpu
    low = max(1, round(small * n_gpu))
    high = max(low, round(grow * low))
    before, after = best_step_s(name, low), best_step_s(name, high)
    if before is not None:
        assert after is not None
        assert after <= before * (1 + REL)


@pytest.mark.parametrize(
    ("name", "budgets"),
    [("llama3_405b_8k_16384", (16384, 32768, 100000)), ("gpt_1t", (3072, 12288, 49152))],
)
def test_run_search_large_budgets_keep_a_layout(name: str, budgets: tuple[int, ...]) -> None:
    """Budgets past the batch's largest useful data parallelism still find a layout (Llama 3
    405B at 32,768 and 100,000 H100s, GPT 1T at 49,152 A100s), never a slower one."""
    steps = [best_step_s(name, b) for b in budgets]
    assert all(s is not None for s in steps)
    assert all(b <= a * (1 + REL) for a, b in pairwise(s for s in steps if s is not None))


def test_run_search_budget_layouts_grow_with_the_budget() -> None:
    """Every layout tried within 8,192 GPUs is tried within 32,768, and more besides."""
    s, run = scenario("llama3_405b_8k_16384"), run_of("llama3_405b_8k_16384")
    small = set(candidate_layouts(s.hardware, replace(run, gpu_budget=8192)))
    large = set(candidate_layouts(s.hardware, replace(run, gpu_budget=32768)))
    assert small < large


@pytest.mark.parametrize("name", PUBLISHED)
def test_run_search_at_a_published_gpu_count_is_at_least_as_fast(name: str) -> None:
    """Given a published run's GPU count as its budget, the search finds a layout at least as
    fast as the published one, which fits memory."""
    s = scenario(name)
    run = run_of(name)
    published = evaluate_run(s.hardware, s.physics, run)
    assert published.fits_memory
    found = best_step_s(name, run.layout.n_gpu)
    assert found is not None
    assert found <= published.step_time_s * (1 + REL)


def test_run_search_finds_llama3_table4_layout() -> None:
    """On 16,384 H100s the search picks Llama 3 405B's published t = 8, p = 16, d = 128 (Llama
    Team 2024, Table 4)."""
    s, run = scenario("llama3_405b_8k_16384"), run_of("llama3_405b_8k_16384")
    found = best_run_layout(s.hardware, s.physics, replace(run, gpu_budget=16384))
    assert found is not None
    lay = found[0].layout
    assert (lay.tp, lay.pp, lay.dp) == (8, 16, 128)


def test_run_search_interleaves_microbatches_that_are_no_multiple_of_the_stages() -> None:
    """Interleaving needs m ≥ p, at the group Megatron-Core's schedule accepts (docs/model.md
    R.4), not m a multiple of p: GPT 39.1B at t = 4, p = 5, d = 32 runs 48 microbatches a
    rank, 5 chunks each, in groups of 6. The search on 640 GPUs tries that layout and is at
    least as fast as it (it found 7.7 s at MFU 0.50, uninterleaved, while only multiples of p
    could interleave)."""
    s, run = scenario("gpt_39p1b"), replace(run_of("gpt_39p1b"), gpu_budget=640)
    tried = [
        lay
        for lay in candidate_layouts(s.hardware, run)
        if (lay.tp, lay.pp, lay.dp, lay.microbatch_seqs, lay.interleave) == (4, 5, 32, 1, 5)
    ]
    assert tried, "the interleaved layout of 48 microbatches over 5 stages is a candidate"
    assert megatron_group_microbatches(5, 48) == 6
    costs = [evaluate_run(s.hardware, s.physics, replace(run, layout=lay)) for lay in tried]
    fitting = [c.step_time_s for c in costs if c.fits_memory]
    assert fitting
    found = best_run_layout(s.hardware, s.physics, run)
    assert found is not None
    assert found[1].step_time_s <= min(fitting) * (1 + REL)
