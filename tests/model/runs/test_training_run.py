"""One concrete run's step, memory and throughput (pipeline/model/runs/training_run.py; docs/model.md R.6)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.network.ring import ring_exchange_s
from pipeline.model.records.run import RunCost, RunLayout, RunSpec
from pipeline.model.records.switches import Recompute
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.training_run import RunLayouts, evaluate_run, run_costs
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(list(Recompute)[:3]),
    st.sampled_from([1, 2, 4, 8]),
    st.floats(1.0, 4.0),
)
def test_more_hbm_never_makes_a_feasible_run_infeasible(
    mode: Recompute, micro: int, scale: float
) -> None:
    """A run that fits in a GPU's HBM still fits when the HBM grows."""
    hw = preset("a100_sxm")
    physics = load_scenario(compose_config(["run=gpt_7p5b", "physics=realistic"])).physics
    shape = TransformerShape(36, 4096, 16384, 32, 32, 51200, 2048)
    run = RunSpec("r", shape, 512, RunLayout(4, 1, 32, micro, recompute=mode))
    small = evaluate_run(hw, physics, run).fits_memory
    large = evaluate_run(dataclasses.replace(hw, hbm_bytes=hw.hbm_bytes * scale), physics, run)
    assert large.fits_memory or not small


def test_ring_attention_exchange_is_exposed_past_the_attention_core() -> None:
    """On a slow network the K/V ring, not the core, sets a context-parallel run's attention time."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    slow = dataclasses.replace(hw, net_bandwidth_bytes_per_s=(1e6, 1e6))
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 8192)
    run = RunSpec("r", shape, 8, RunLayout(1, 1, 2, 1, cp=4))
    fast_t = evaluate_run(hw, physics, run).t_attention_s
    slow_t = evaluate_run(slow, physics, run).t_attention_s
    assert fast_t is not None
    assert slow_t is not None
    one = np.ones(1)
    link = (1e6 * physics.efficiency.network * one, slow.net_latency_s[0] * one)
    ring = ring_exchange_s(1 * 8192 / 4 * one, float(shape.kv_width), one, 4 * one, *link)[0]
    assert slow_t > fast_t
    assert slow_t >= 3.0 * ring * 4 * 4  # (forward + 2 x forward) x 4 layers x 4 microbatches


def test_run_alone_equals_its_row_in_a_batch() -> None:
    """A run evaluated alone (a batch of one) costs exactly what its row costs among others."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048)
    layouts = [
        RunLayout(2, 2, 4, 2, sequence_parallel=True),
        RunLayout(1, 4, 4, 1, interleave=2, recompute=Recompute.FULL, zero_stage=1),
        RunLayout(4, 1, 8, 1, cp=2, recompute=Recompute.SELECTIVE),
    ]
    batch = run_costs(hw, physics, shape, 64, RunLayouts.of(layouts))
    for i, layout in enumerate(layouts):
        assert evaluate_run(hw, physics, RunSpec("r", shape, 64, layout)) == batch.row(i)


def test_context_parallel_ranks_join_the_gradient_reduction_and_its_level() -> None:
    """With context parallelism the gradient all-reduce runs over d·c ranks spanning t·c·d GPUs:
    on a node of 8, t = 2, c = 4, d = 2 leaves the node although t·d = 4 would not, holding 4
    ranks in each node, which `physics.nic_striping` (on in realistic) stripes over 4 NICs."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 8192)
    run = RunSpec("r", shape, 8, RunLayout(2, 1, 2, 1, cp=4))
    cost = evaluate_run(hw, physics, run)
    params = (4 * (4096 * (4096 + 2 * 1024) + 4096**2 + 2 * 4096 * 16384) + 51200 * 4096) / 2
    assert physics.nic_striping
    bw = 4 * hw.net_bandwidth_bytes_per_s[1] * physics.efficiency.network
    ring = 2 * 7 / 8 * 2 * params / (bw / 2) + 2 * 7 * hw.net_latency_s[1]
    assert hw.level_sizes[0] == 8
    assert cost.t_dp_comm_s == pytest.approx(ring, rel=1e-12)


def test_one_microbatch_passes_once_through_every_stage() -> None:
    """With one microbatch a pipeline's step is one pass through every stage (the fill and drain
    skip only the slowest stage): 3 layers on 2 uneven stages take what 1 stage takes."""
    physics = load_scenario(
        compose_config(["physics=realistic", "physics.memory_bound_ops=false"])
    ).physics
    hw = preset("a100_sxm")
    shape = TransformerShape(3, 4096, 16384, 32, 32, 51200, 2048)

    def step(pp: int) -> float:
        layout = RunLayout(1, pp, 1, 1, overlap_p2p=True)
        return evaluate_run(hw, physics, RunSpec("r", shape, 1, layout)).step_time_s

    assert step(2) == pytest.approx(step(1), rel=1e-12)


def test_all_gather_context_parallelism_exposes_the_kv_exchange() -> None:
    """All-gather based context parallelism (Llama 3) adds the whole K/V exchange to each layer:
    once forward and twice backward (K, V gathered again; their gradients reduce-scattered),
    where ring attention hides it behind the attention core on a fast network."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 8192)
    ring_layout = RunLayout(1, 1, 2, 1, cp=4)
    gather_layout = dataclasses.replace(ring_layout, cp_all_gather=True)
    ring_t = evaluate_run(hw, physics, RunSpec("r", shape, 8, ring_layout)).t_attention_s
    gather_t = evaluate_run(hw, physics, RunSpec("r", shape, 8, gather_layout)).t_attention_s
    assert ring_t is not None
    assert gather_t is not None
    one = np.ones(1)
    link = (
        hw.net_bandwidth_bytes_per_s[0] * physics.efficiency.network * one,
        hw.net_latency_s[0] * one,
    )
    ring = ring_exchange_s(8192 / 4 * one, float(shape.kv_width), one, 4 * one, *link)[0]
    layer_calls = 4 * 4  # 4 layers x 4 microbatches
    assert gather_t - ring_t == pytest.approx(3.0 * ring * layer_calls, rel=1e-9)


def test_run_tp_comm_overlap_hides_tensor_parallelism_inside_nvlink_only() -> None:
    """`tp_comm_overlap` shortens a run's exposed TP communication when its group lies in one
    8-GPU NVLink node, and changes nothing when the group (t = 16) spans nodes."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 8192, 32768, 64, 8, 51200, 4096)

    def tp_comm_s(tp: int, overlap: bool) -> float:
        layout = RunLayout(tp, 1, 2, 1, sequence_parallel=True, tp_comm_overlap=overlap)
        return evaluate_run(hw, physics, RunSpec("r", shape, 8, layout)).t_tp_comm_s

    assert tp_comm_s(8, True) < tp_comm_s(8, False)
    assert tp_comm_s(16, True) == tp_comm_s(16, False)


def test_run_dp_overlap_is_the_distributed_optimizers_exposed_part() -> None:
    """`dp_overlap` charges a sharded run the distributed optimizer's exposed reduction
    (`distributed_optimizer_exposed_s`): less than the whole exposed reduce-scatter and
    all-gather, at least the last and first bucket (so more than zero)."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 4096)

    def dp_comm_s(overlap: bool) -> float:
        layout = RunLayout(8, 1, 16, 1, sequence_parallel=True, zero_stage=1, dp_overlap=overlap)
        return evaluate_run(hw, physics, RunSpec("r", shape, 64, layout)).t_dp_comm_s

    assert 0.0 < dp_comm_s(True) < dp_comm_s(False)


def test_run_grad_reduce_fp32_doubles_an_unoverlapped_reduce_scatter() -> None:
    """`grad_reduce_fp32` lengthens a sharded run's unoverlapped reduction to under 1.5 times
    the 16-bit one (the reduce-scatter's bytes doubled, not the all-gather's nor any latency)
    and an unsharded run's all-reduce to under twice."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 4096)

    def dp_comm_s(zero_stage: int, fp32: bool) -> float:
        layout = RunLayout(8, 1, 16, 1, zero_stage=zero_stage, grad_reduce_fp32=fp32)
        return evaluate_run(hw, physics, RunSpec("r", shape, 64, layout)).t_dp_comm_s

    for zero_stage, ratio in ((1, 1.5), (0, 2.0)):
        narrow, wide = dp_comm_s(zero_stage, False), dp_comm_s(zero_stage, True)
        assert narrow < wide < ratio * narrow


def test_run_grad_reduce_fp32_holds_four_byte_gradients() -> None:
    """With `grad_reduce_fp32` a run holds 2 more bytes per parameter of gradients than with
    16-bit ones: all of its parameters' under ZeRO-1, a 1/d share under ZeRO-2."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 4096)

    def memory(zero_stage: int, fp32: bool) -> float:
        layout = RunLayout(8, 1, 16, 1, zero_stage=zero_stage, grad_reduce_fp32=fp32)
        return evaluate_run(hw, physics, RunSpec("r", shape, 64, layout)).memory_per_gpu_bytes

    params = (
        shape.layers * (4096 * (4096 + 2 * 1024) + 4096**2 + 2 * 4096 * 16384) + 51200 * 4096
    ) / 8
    assert memory(1, True) - memory(1, False) == pytest.approx(2.0 * params, rel=1e-9)
    assert memory(2, True) - memory(2, False) == pytest.approx(2.0 * params / 16, rel=1e-9)


def test_run_fp8_params_hold_the_weights_in_fp8_only() -> None:
    """Under FP8, `fp8_params` drops the FP8 copy and transpose beside each 16-bit layer weight
    (the FP8 weight and its transpose take the 16-bit one's 2 bytes): 2 bytes per layer
    parameter on the GPU less, the embedding's unchanged. Unoverlapped and sharded, the
    reduction is a reduce-scatter of the gradients and an all-gather of the parameters, half
    the all-reduce's bytes each; with FP8 layer weights the all-gather moves fewer, so the
    reduction shortens, by less than a quarter (the all-gather's half of half)."""
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 4096)
    layer_params = shape.layers * (4096 * (4096 + 2 * 1024) + 4096**2 + 2 * 4096 * 16384) / 8
    held, copied = (
        _fp8_run(shape, RunLayout(8, 1, 16, 1, zero_stage=1, fp8_params=f)) for f in (True, False)
    )
    assert copied.memory_per_gpu_bytes - held.memory_per_gpu_bytes == pytest.approx(
        2.0 * layer_params, rel=1e-9
    )
    assert 0.75 * copied.t_dp_comm_s < held.t_dp_comm_s < copied.t_dp_comm_s


def test_run_fp8_params_gather_the_layers_in_fp8_and_the_embedding_at_16_bits() -> None:
    """Unoverlapped and sharded, a step's reduction is the reduce-scatter of the gradients and
    the all-gather of the parameters, half an all-reduce each. With FP8 weights the layers'
    are gathered at 1 byte and the embedding's at 2: a model of layers alone loses nearly a
    quarter of its reduction (the gather halves), one that is nearly all embedding almost
    nothing."""

    def ratio(vocab: int) -> float:
        shape = TransformerShape(8, 4096, 16384, 32, 8, vocab, 4096)
        held, copied = (
            _fp8_run(shape, RunLayout(1, 1, 64, 1, zero_stage=1, fp8_params=f)).t_dp_comm_s
            for f in (True, False)
        )
        return held / copied

    assert ratio(1024) < 0.76
    assert ratio(4_000_000) > 0.95


def test_run_fp8_params_need_a_sharded_optimizer() -> None:
    """Without a sharded optimizer (ZeRO 0) there is no FP8 parameter gather: `fp8_params`
    changes nothing (the schema refuses it there, as Megatron-LM does)."""
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 4096)
    held, copied = (
        _fp8_run(shape, RunLayout(8, 1, 16, 1, zero_stage=0, fp8_params=f)) for f in (True, False)
    )
    assert held == copied


def _fp8_run(shape: TransformerShape, layout: RunLayout) -> RunCost:
    """`layout`'s run of `shape` on an H100 under realistic physics with FP8 GEMMs."""
    physics = load_scenario(compose_config(["physics=realistic", "physics.precision=fp8"])).physics
    return evaluate_run(preset("h100_sxm"), physics, RunSpec("r", shape, 64, layout))
