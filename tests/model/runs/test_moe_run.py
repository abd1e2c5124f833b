"""Check values and properties of a mixture-of-experts run with expert parallelism
(docs/model.md, "R.5 Communication" and "Mixture of experts")."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.compute.flop import linear_forward_flop
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.switches import Physics, Recompute
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.run_point import run_layout
from pipeline.model.runs.run_search import best_run_layout, candidate_layouts
from pipeline.model.runs.training_run import (
    RunLayouts,
    evaluate_run,
    expert_tokens,
    run_memory_bytes,
    run_params_per_gpu,
)
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.errors import ConfigError
from tests.presets import preset

TINY_MOE = TransformerShape(
    layers=2, hidden=4, ffn_hidden=16, heads=2, kv_heads=2, vocab=10, seq_len=8, experts=8, top_k=2
)
MOE = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048, experts=16, top_k=2)


def realistic() -> Physics:
    """The shipped realistic physics."""
    return load_scenario(compose_config(["physics=realistic"])).physics


def test_moe_linear_forward_flop_counts_top_k_experts() -> None:
    """h=4, f=16, top-2 of 8 experts: QKV 48 + out 16 + 2 · (2·4·16) = 320 weights a token meets."""
    assert linear_forward_flop(TINY_MOE, 1.0) == 2 * (4 * 12 + 16 + 2 * (2 * 4 * 16))


def test_moe_expert_tokens_tiny_run() -> None:
    """e = 4 ranks of 16 tokens, top-2 over 8 experts: 4·16·2/8 = 16 tokens per expert (GShard)."""
    assert expert_tokens(TINY_MOE, np.array([16.0]), np.array([4.0]))[0] == 16.0


def test_moe_expert_parameters_per_gpu_tiny_run() -> None:
    """L/p = 2 layers · 8/4 local experts · 2·4·16 weights / t = 2: 256 expert parameters."""
    layout = RunLayout(tp=2, pp=1, dp=4, microbatch_seqs=1, ep=4)
    params = run_params_per_gpu(TINY_MOE, RunLayouts.of([layout]))
    assert params.expert[0] == 2 * 2 * (2 * 4 * 16) / 2


def test_moe_all_to_all_tiny_run() -> None:
    """e = 4, b = 2, s = 8, h = 4, top-2: one all-to-all sends 3/4 of 2·8·4·2 words of 2 B = 192 B
    at half the level's bandwidth plus 3 hops; 4 per layer and microbatch (DeepSpeed-MoE), over
    m = 1 microbatch of L/p = 2 layers."""
    hw = preset("h100_sxm")
    run = RunSpec("r", TINY_MOE, 8, RunLayout(1, 1, 4, 2, ep=4))
    level = 0  # 4 GPUs fit in the 8-GPU node
    bw = hw.net_bandwidth_bytes_per_s[level] / 2.0
    one = 0.75 * (2 * 8 * 4 * 2 * 2.0) / bw + 3 * hw.net_latency_s[level]
    assert one == pytest.approx(192.0 / bw + 3 * hw.net_latency_s[level], rel=1e-12)
    assert evaluate_run(hw, Physics(), run).t_ep_comm_s == pytest.approx(2 * 4 * one, rel=1e-12)
    full = dataclasses.replace(
        run, layout=dataclasses.replace(run.layout, recompute=Recompute.FULL)
    )
    assert evaluate_run(hw, Physics(), full).t_ep_comm_s == pytest.approx(2 * 6 * one, rel=1e-12)


def test_moe_all_to_all_is_zero_without_expert_parallelism() -> None:
    """All experts on every GPU (e = 1): no token leaves its GPU."""
    run = RunSpec("r", TINY_MOE, 8, RunLayout(1, 1, 4, 2))
    assert evaluate_run(preset("h100_sxm"), Physics(), run).t_ep_comm_s == 0.0


def test_moe_run_layout_row_splits_expert_from_data_parallel() -> None:
    """t=2, c=1, d=8 with e=4 on 8-GPU nodes: the row's per-level degrees multiply to 16 GPUs, ep 4."""
    run = RunSpec("r", MOE, 64, RunLayout(tp=2, pp=1, dp=8, microbatch_seqs=1, ep=4))
    layout = run_layout(run, preset("h100_sxm"))
    assert layout.n_gpu == 16
    assert (layout.tp_ff[0], layout.ep[0]) == (2, 4)
    assert layout.dp[0] == 1  # the node is full: the d/e = 2 replicas sit above it
    assert math.prod(layout.dp) == 2
    assert math.prod(layout.ep) == 4


@pytest.mark.parametrize(
    ("cp", "ep", "tokens"),
    [(1, 4, 512), (2, 4, 256), (1, 8, 1024), (1, 1, 128)],
    ids=["ep4", "ep4_cp2", "ep8", "ep1"],
)
def test_moe_run_layout_nanobatch_is_the_schemas_per_expert_count(
    cp: int, ep: int, tokens: int
) -> None:
    """64 sequences of 2048 tokens on d = 8 ranks of 1-sequence micro-batches (m = 8), 16
    experts: b = B_tok / (N_DP · N_CP · m · S) with N_DP = d/e, e.g. 131072 / (2·1·8·16) = 512
    tokens at e = 4: the micro-batch's 2048 tokens on a GPU times e/E, not all of them."""
    run = RunSpec("r", MOE, 64, RunLayout(tp=2, pp=1, dp=8, microbatch_seqs=1, cp=cp, ep=ep))
    layout = run_layout(run, preset("h100_sxm"))
    n_dp, n_cp = math.prod(layout.dp), math.prod(layout.cp)
    formula = 64 * MOE.seq_len // (n_dp * n_cp * layout.microbatches * MOE.experts)
    assert layout.nanobatch_tokens == formula == tokens


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    ep_exp=st.integers(min_value=0, max_value=3),
    more=st.integers(min_value=1, max_value=4),
    zero=st.integers(min_value=0, max_value=3),
)
def test_moe_more_expert_parallelism_never_adds_expert_memory(
    ep_exp: int, more: int, zero: int
) -> None:
    """Doubling e (up to the 16 experts and d = 16) never raises a GPU's expert parameters or bytes."""
    small, large = 2**ep_exp, min(2 ** (ep_exp + more), 16)
    base = RunLayout(tp=1, pp=1, dp=16, microbatch_seqs=1, zero_stage=zero)
    lo, hi = dataclasses.replace(base, ep=small), dataclasses.replace(base, ep=large)
    rows = RunLayouts.of([lo, hi])
    assert run_params_per_gpu(MOE, rows).expert[1] <= run_params_per_gpu(MOE, rows).expert[0]
    memory = run_memory_bytes(MOE, rows, np.array([4.0, 4.0]), realistic().fusion)
    assert memory[1] <= memory[0]


def test_moe_one_expert_is_the_dense_run() -> None:
    """experts = top_k = 1 (the defaults) gives the dense run's cost field for field."""
    dense = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048)
    one = dataclasses.replace(dense, experts=1, top_k=1)
    run = RunSpec("r", dense, 64, RunLayout(2, 2, 4, 2, sequence_parallel=True))
    physics = realistic()
    hw = preset("h100_sxm")
    assert evaluate_run(hw, physics, run) == evaluate_run(
        hw, physics, dataclasses.replace(run, shape=one)
    )


def test_moe_top_1_of_one_expert_per_rank_runs_dense_gemms() -> None:
    """e = E experts, top-1: each GPU's one expert sees its own tokens, so the matmul time is the
    dense layer's (Switch routing, balanced: a run's `expert_imbalance` 0, its default)."""
    physics = realistic()
    hw = preset("h100_sxm")
    dense = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048)
    moe = dataclasses.replace(dense, experts=8, top_k=1)
    lay = RunLayout(1, 1, 8, 2)
    t_dense = evaluate_run(hw, physics, RunSpec("r", dense, 64, lay)).t_matmul_s
    t_moe = evaluate_run(
        hw, physics, RunSpec("r", moe, 64, dataclasses.replace(lay, ep=8))
    ).t_matmul_s
    assert t_moe == pytest.approx(t_dense, rel=1e-12)


def test_busiest_expert_rank_runs_the_experts_on_more_tokens() -> None:
    """Under a run's `expert_imbalance` x the experts split over e > 1 ranks compute 1 + x times
    the balanced tokens (docs/model.md R.5.1). e = E, top-1 and attention off (a layer is its
    MLP): a microbatch of 2 sequences under x = 0.5 runs the GEMMs of one of 3 sequences
    balanced, and the run is slower than balanced."""
    hw = preset("h100_sxm")
    physics = dataclasses.replace(realistic(), attention=False)
    moe = dataclasses.replace(TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048), experts=8)
    two = RunSpec("r", moe, 64, RunLayout(1, 1, 8, 2, ep=8, expert_imbalance=0.5))
    balanced = dataclasses.replace(two, layout=dataclasses.replace(two.layout, expert_imbalance=0))
    three = RunSpec("r", moe, 96, RunLayout(1, 1, 8, 3, ep=8))
    assert evaluate_run(hw, physics, two).t_matmul_s == pytest.approx(
        evaluate_run(hw, physics, three).t_matmul_s, rel=1e-12
    )
    assert (
        evaluate_run(hw, physics, two).step_time_s > evaluate_run(hw, physics, balanced).step_time_s
    )


def test_expert_imbalance_leaves_one_expert_rank_alone() -> None:
    """With every expert on one rank (e = 1) routing moves no work between GPUs: the run is the
    same under any `expert_imbalance`."""
    hw = preset("h100_sxm")
    lay = RunLayout(2, 2, 4, 2, sequence_parallel=True)
    run = RunSpec("r", MOE, 64, lay)
    physics = realistic()
    assert (
        evaluate_run(hw, physics, run).step_time_s
        == evaluate_run(
            hw,
            physics,
            dataclasses.replace(run, layout=dataclasses.replace(lay, expert_imbalance=0.4)),
        ).step_time_s
    )


def test_run_reads_its_own_imbalance_not_the_grids() -> None:
    """A run routes as its layout says (`RunLayout.expert_imbalance`, default 0), whatever
    `physics.expert_imbalance` (the grid's, 0.41 in physics=realistic)."""
    hw = preset("h100_sxm")
    run = RunSpec("r", MOE, 64, RunLayout(1, 1, 8, 2, ep=8))
    physics = realistic()
    assert physics.expert_imbalance == 0.41
    assert evaluate_run(hw, physics, run) == evaluate_run(
        hw, dataclasses.replace(physics, expert_imbalance=0.0), run
    )


def test_moe_run_search_tries_expert_parallel_sizes() -> None:
    """At d = 16 the run search tries every e dividing both the 16 experts and d; at d = 4 up to 4."""
    shape = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048, experts=16, top_k=2)
    run = RunSpec("r", shape, 64, RunLayout(1, 1, 16, 1), layout_search=True)
    layouts = list(candidate_layouts(preset("h100_sxm"), run))
    assert {lay.ep for lay in layouts if lay.dp == 16} == {1, 2, 4, 8, 16}
    assert {lay.ep for lay in layouts if lay.dp == 4} == {1, 2, 4}


def test_moe_run_search_is_never_slower_than_the_given_expert_layout() -> None:
    """The searched layout of a 16-expert run is at least as fast as its given e = 16 layout."""
    physics = realistic()
    hw = preset("h100_sxm")
    shape = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048, experts=16, top_k=2)
    run = RunSpec("r", shape, 64, RunLayout(1, 1, 16, 1, ep=16), layout_search=True)
    given_cost = evaluate_run(hw, physics, run)
    found = best_run_layout(hw, physics, run)
    assert given_cost.fits_memory
    assert found is not None
    assert found[1].step_time_s <= given_cost.step_time_s


def test_moe_run_keys_ep_must_divide_experts() -> None:
    """ep = 3 of 8 experts is bad input, named by its key."""
    overrides = ["run=gpt_1p7b", "run.experts=8", "run.ep=3", "run.dp=3"]
    with pytest.raises(ConfigError, match=r"run\.ep"):
        load_scenario(compose_config(overrides))


def test_moe_run_keys_default_to_dense() -> None:
    """A run file without `experts` and `top_k` is a dense transformer."""
    run = load_scenario(compose_config(["run=gpt_1p7b"])).run
    assert run is not None
    assert (run.shape.experts, run.shape.top_k) == (1, 1)


def test_moe_zero_and_expert_groups_count_context_ranks() -> None:
    """ZeRO-1 shards the dense and the expert state over the ranks holding the same weights,
    context ranks included (c·d and c·d/e): t = 2, p = 1, e = 2, (c, d) = (2, 2) updates as
    many parameters per GPU as (1, 4), so its optimizer step takes as long."""
    physics = realistic()
    hw = preset("h100_sxm")
    layouts = [RunLayout(2, 1, d, 1, cp=c, ep=2, zero_stage=1) for c, d in [(2, 2), (1, 4)]]
    costs = [evaluate_run(hw, physics, RunSpec("r", MOE, 8, lay)) for lay in layouts]
    assert costs[0].t_optimizer_s is not None
    assert costs[0].t_optimizer_s == costs[1].t_optimizer_s
