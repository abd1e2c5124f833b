"""A grid candidate and the concrete run of the same model and layout cost the same: both go
through one implementation of each quantity (docs/model.md R.7, "Step")."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import (
    RECOMPUTE_ORDER,
    Physics,
    Precision,
    Recompute,
    TensorParallel,
)
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.run_point import run_counts
from pipeline.model.runs.training_run import (
    RunCosts,
    RunLayouts,
    evaluate_run,
    run_costs,
    run_microbatches,
)
from pipeline.model.search.candidates import Candidates, _with_ring, enumerate_candidates
from pipeline.model.search.counts import grid_cost, grid_counts, grid_shape, grid_transformer
from pipeline.model.search.fixed import fixed_point
from pipeline.model.search.grid import GRID_HEAD_DIM, grid_memory_by_mode_bytes
from pipeline.model.search.realistic import realistic_steps
from pipeline.model.search.search import optimal_layout, physics_hardware
from pipeline.model.step.assembly import StepParts
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

N_GPU = 64
SCHEDULES = [
    SearchOptions(overlap_tp=False, overlap_pp_ep=False, overlap_dp=False),
    SearchOptions(overlap_tp=False, overlap_pp_ep=True, overlap_dp=True),
]
"""Grid options a run can match: no TP overlap (a run has none); asynchronous sends and an
overlapped gradient all-reduce as a run's `overlap_p2p` and `overlap_dp`, or neither."""


def realistic(**changes: object) -> Physics:
    """The shipped realistic physics with `changes`."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    return dataclasses.replace(physics, **changes)  # type: ignore[arg-type]


def grid_model() -> ModelShape:
    """A dense model of the paper's grid small enough for 64 GPUs."""
    return model_shape(6144, ScalingLaws(), SearchOptions().quirks)


def run_model(shape: ModelShape) -> TransformerShape:
    """The grid model as a run: d_head = 128, as many K/V heads, GeLU, no vocabulary."""
    heads = shape.d_model // GRID_HEAD_DIM
    return TransformerShape(
        shape.n_layers, shape.d_model, shape.d_ff, heads, heads, 0, shape.seq_len
    )


def one_d_rows(c: Candidates) -> np.ndarray:
    """Candidates a Megatron run can express: 1-D tensor parallelism, 1F1B, no experts, no
    context parallelism (whose K/V ring the candidates here leave out; the rows of every kind,
    context-parallel ones with their ring, are `candidate_runs`')."""
    _, tpm, _, _, ep = c.degrees.T
    cp = np.ones(c.degrees.shape[0]) if c.cp is None else np.asarray(c.cp)
    return np.flatnonzero((tpm == 1) & (ep == 1) & ~c.zero_bubble & (cp == 1))


def matched_run(c: Candidates, row: int, shape: ModelShape, physics: Physics) -> RunCosts:
    """The run with candidate `row`'s layout and recomputation mode, evaluated as a run."""
    return scheduled_run(c, row, shape, physics, SCHEDULES[0])


def grid_rows(physics: Physics) -> tuple[Candidates, np.ndarray]:
    """The grid's candidates at 64 GPUs and those a run can express."""
    c = enumerate_candidates(preset("h100_sxm"), grid_model(), N_GPU, SearchOptions(), physics)
    assert isinstance(c, Candidates)
    rows = one_d_rows(c)
    assert rows.size > 0
    return c, rows


@pytest.mark.parametrize("ops", [False, True])
def test_parity_layer_time_without_tensor_parallelism(ops: bool) -> None:
    """On one tensor-parallel rank a candidate's layer time equals the matched run's, exactly,
    with and without memory-bound operators."""
    physics = realistic(memory_bound_ops=ops)
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] == 1]
    assert rows.size > 0
    for row in rows:
        run = matched_run(c, int(row), grid_model(), physics)
        assert run.t_layer_s[0] == c.t_layer_s[row]


def test_parity_layer_time_with_tensor_parallelism_without_operators() -> None:
    """With t > 1 and no memory-bound operators the layer times are equal, exactly."""
    physics = realistic(memory_bound_ops=False)
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] > 1]
    assert rows.size > 0
    for row in rows:
        assert matched_run(c, int(row), grid_model(), physics).t_layer_s[0] == c.t_layer_s[row]


def test_parity_layer_time_with_tensor_parallelism_and_operators() -> None:
    """With t > 1 and memory-bound operators the layer times are equal, exactly."""
    physics = realistic()
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] > 1]
    assert rows.size > 0
    for row in rows:
        assert matched_run(c, int(row), grid_model(), physics).t_layer_s[0] == c.t_layer_s[row]


@pytest.mark.parametrize(
    ("precision", "fp32", "fp8_params"),
    [
        (Precision.BF16, False, False),
        (Precision.FP8, False, False),
        (Precision.FP8, False, True),
        (Precision.BF16, True, False),
    ],
    ids=["bf16", "fp8_copies", "fp8_weights_only", "bf16_fp32_grads"],
)
def test_parity_memory_and_optimizer_step(
    precision: Precision, fp32: bool, fp8_params: bool
) -> None:
    """A candidate's bytes per GPU under its chosen mode and its optimizer step equal the
    matched run's, exactly (ZeRO state, activations, microbatches in flight), under BF16 and
    under FP8 (1-byte GEMM inputs, and either the layers' FP8 weight copies beside 16-bit
    weights or FP8 weights only, docs/model.md R.11), with 16-bit and FP32 gradients."""
    physics = realistic(precision=precision, grad_reduce_fp32=fp32, fp8_params=fp8_params)
    shape = grid_model()
    c, rows = grid_rows(physics)
    assert c.recompute is not None
    assert c.t_step_extra_s is not None
    for row in rows:
        run = matched_run(c, int(row), shape, physics)
        mode = RECOMPUTE_ORDER[int(c.recompute[row])]
        factors = tuple(c.degrees[row : row + 1, i].astype(float) for i in range(5))
        schedule = (
            c.microbatches[row : row + 1],
            c.interleave[row : row + 1],
            c.zero_bubble[row : row + 1],
        )
        nano = c.nanobatch[row : row + 1].astype(float)
        (grid_bytes,) = grid_memory_by_mode_bytes(
            preset("h100_sxm"),
            physics,
            shape,
            factors,  # type: ignore[arg-type]
            nano,
            schedule,
            (mode,),
        )
        assert run.memory_per_gpu_bytes[0] == grid_bytes[0]
        assert run.t_optimizer_s is not None
        assert run.t_optimizer_s[0] == c.t_step_extra_s[row]


def test_parity_counts_of_grid_and_run() -> None:
    """A realistic grid size counts the same parameters, tokens and training FLOP as the run
    of the same model and batch, exactly (`search.counts.grid_counts`, `runs.run_point.run_counts`)."""
    physics = realistic()
    shape = grid_model()
    layout = RunLayout(tp=1, pp=1, dp=N_GPU, microbatch_seqs=1)
    run = RunSpec("grid", run_model(shape), shape.batch_seqs, layout)
    assert grid_counts(physics, shape) == run_counts(physics, run, shape.tokens_per_param)


def test_parity_grid_cost_of_grid_and_run() -> None:
    """At the run's step time a candidate's MFU and HFU equal the matched run's, and its
    memory per GPU is the run's (the FLOP of both come from `compute.flop.flop_per_step`)."""
    physics = realistic()
    shape = grid_model()
    c, rows = grid_rows(physics)
    for row in rows:
        run = matched_run(c, int(row), shape, physics)
        used = grid_cost(
            preset("h100_sxm"), physics, shape, c, int(row), N_GPU, float(run.step_time_s[0])
        )
        assert used.mfu == pytest.approx(float(run.mfu[0]), rel=1e-12)
        assert used.hfu == pytest.approx(float(run.hfu[0]), rel=1e-12)
        assert used.memory_per_gpu_bytes == run.memory_per_gpu_bytes[0]


def scheduled_run(
    c: Candidates, row: int, shape: ModelShape, physics: Physics, opts: SearchOptions
) -> RunCosts:
    """The run of candidate `row` with the grid options' schedule choices as the run's."""
    layout = dataclasses.replace(
        run_layout_of(c, row, shape, physics),
        overlap_p2p=opts.overlap_pp_ep,
        overlap_dp=opts.overlap_dp,
    )
    rows = RunLayouts.of([layout])
    return run_costs(preset("h100_sxm"), physics, run_model(shape), shape.batch_seqs, rows)


KINDS: dict[str, tuple[bool, int, int, int, Callable[[Candidates], NDArray[np.bool_]]]] = {
    "1d": (False, 6144, 1, N_GPU, lambda c: (c.degrees[:, 1] == 1) & (c.degrees[:, 2] > 1)),
    "2d": (False, 6144, 1, N_GPU, lambda c: c.degrees[:, 1] > 1),
    "context": (False, 6144, 4, N_GPU, lambda c: np.asarray(c.cp) > 1),
    "experts": (True, 6144, 1, 4 * N_GPU, lambda c: c.degrees[:, 4] > 1),
    "local_experts": (True, 8192, 1, 6 * N_GPU, lambda c: c.degrees[:, 4] == 1),
    "interleaved": (False, 6144, 1, N_GPU, lambda c: c.interleave > 1),
    "zero_bubble": (False, 6144, 1, N_GPU, lambda c: c.zero_bubble),
}
"""Each candidate kind: (sparse model, d_model, the largest context-parallel degree, GPUs, its
rows). The sparse model of d_model 6144 (4 experts) fits 256 GPUs with one expert a GPU; that
of 8192 (5 experts) on 384 GPUs has all five on every GPU (N_EP = 1)."""
OVERLAPS = [
    SearchOptions(overlap_tp=False, overlap_pp_ep=False, overlap_dp=False),
    SearchOptions(overlap_tp=True, overlap_pp_ep=True, overlap_dp=True),
]


def candidate_runs(
    c: Candidates, rows: NDArray[np.intp], shape: ModelShape, physics: Physics, o: SearchOptions
) -> RunLayouts:
    """Candidates `rows` as the layouts of one run, in a run's terms: t = N_TPm·N_TPff (1-D
    with sequence parallelism when N_TPm = 1), d·c = N_DP·N_EP (the expert ranks inside the
    data-parallel ones), b·s/c the GPU's N_EP/S·nanobatch tokens, the grid's schedule and
    recomputation mode and the options' overlaps."""
    assert c.recompute is not None
    dp, tpm, tpff, pp, ep = (c.degrees[rows, k].astype(np.float64) for k in range(5))
    cp = np.ones_like(dp) if c.cp is None else c.cp[rows].astype(np.float64)
    local = shape.sparsity // ep
    tokens = c.nanobatch[rows] * local
    tp = tpm * tpff
    flags = np.ones(rows.shape, dtype=bool)
    return RunLayouts(
        tp=tp,
        pp=pp,
        dp=dp * ep / cp,
        microbatch_seqs=tokens * cp / shape.seq_len,
        cp=cp,
        ep=ep,
        interleave=c.interleave[rows],
        sequence_parallel=(tpm == 1) & (tp > 1),
        recompute=c.recompute[rows],
        zero_stage=np.full(rows.shape, physics.zero_stage),
        microbatch_group=pp,
        overlap_p2p=flags & o.overlap_pp_ep,
        overlap_dp=flags & o.overlap_dp,
        cp_all_gather=~flags,
        tp_model=tpm,
        zero_bubble=c.zero_bubble[rows],
        overlap_tp=flags & o.overlap_tp,
        dp_overlap=flags & physics.dp_overlap,
        tp_overlap_in_domain=flags & physics.tp_overlap_in_domain,
        grad_reduce_fp32=flags & physics.grad_reduce_fp32,
        fp8_params=flags & physics.fp8_params,
        expert_imbalance=np.full(rows.shape, physics.expert_imbalance),
    )


def expressible(
    c: Candidates, rows: NDArray[np.intp], shape: ModelShape, physics: Physics, o: SearchOptions
) -> NDArray[np.bool_]:
    """Which candidates `rows` a run expresses (`candidate_runs`) with the grid's microbatch
    count m. A run counts ⌊B_seqs/(d·b)⌋ microbatches of b sequences (`run_microbatches`), b
    from the GPU's tokens; a nanobatch the grid rounds down to whole tokens per expert (S not
    dividing a micro-batch's tokens, spec §10 step 7) makes b a little short of the grid's
    B_seqs/(d·m) sequences, and a run then counts one microbatch more where B_seqs/(d·m) is
    large (micro-batches of 1 sequence, `Physics.small_microbatches`): those rows are no
    run's layout. Every row left out is checked to be such a rounded one."""
    lay = candidate_runs(c, rows, shape, physics, o)
    same = run_microbatches(shape.batch_seqs, lay) == c.microbatches[rows]
    tokens = c.nanobatch[rows] * shape.sparsity * c.degrees[rows, 0] * c.microbatches[rows]
    exact = tokens == shape.batch_tokens  # N_DP·m·S·nanobatch = B_tok
    assert not (exact & ~same).any()  # an exact nanobatch is always a run's layout
    out: NDArray[np.bool_] = same
    return out


NUMBERS: dict[str, dict[str, object]] = {
    "bf16_grads": {},
    "fp32_grads": {"grad_reduce_fp32": True},
    "fp8_weights": {"precision": Precision.FP8, "fp8_params": True},
    "fp8_current_scaling": {
        "precision": Precision.FP8,
        "fp8_params": True,
        "fp8_current_scaling": True,
    },
}
"""Number formats the step parity is checked under: 16-bit and FP32 gradients, and FP8 GEMMs
with the weights held (and all-gathered) in FP8 only, scaled from the amax history or in the
current step (its amax pass, docs/model.md R.11)."""


@pytest.mark.parametrize("numbers", list(NUMBERS))
@pytest.mark.parametrize("opts", OVERLAPS, ids=["exposed", "overlapped"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_parity_step_and_parts_of_every_candidate_kind(
    kind: str, opts: SearchOptions, numbers: str
) -> None:
    """Every candidate of each kind (1-D and 2-D tensor parallelism, context parallelism,
    experts one or several a GPU, interleaved and zero-bubble schedules) that a run expresses
    with its microbatch count (`expressible`) has the step time and every part of it
    (compute, TP, EP, PP and DP communication, bubble, optimizer) of the run of its layout,
    exactly, with the overlaps off and on, with 16-bit and FP32 gradients and with FP8
    weights (`NUMBERS`)."""
    sparse, d_model, max_cp, n_gpu, select = KINDS[kind]
    physics = realistic(
        max_context_parallel=max_cp,
        tensor_parallel=TensorParallel.BOTH,
        tp_in_domain=False,
        **NUMBERS[numbers],
    )
    laws = ScalingLaws(sparse=sparse)
    shape = grid_shape(physics, model_shape(d_model, laws, SearchOptions().quirks))
    hw = physics_hardware(preset("h100_sxm"), physics)
    c = enumerate_candidates(hw, shape, n_gpu, opts, physics)
    assert isinstance(c, Candidates)
    c = _with_ring(c, hw, shape)
    steps = realistic_steps(hw, physics, shape, n_gpu, c, opts)
    rows = np.flatnonzero(select(c) & steps.usable)  # `tp_in_domain` rejects the rest
    rows = rows[expressible(c, rows, shape, physics, opts)]
    assert rows.size > 0
    grid = steps.parts
    lay = candidate_runs(c, rows, shape, physics, opts)
    run = run_costs(preset("h100_sxm"), physics, grid_transformer(shape), shape.batch_seqs, lay)
    for field in StepParts.__slots__:
        ours, theirs = getattr(grid, field), getattr(run.step, field)
        assert (ours is None) == (theirs is None), field
        if ours is not None:
            np.testing.assert_array_equal(ours[rows], theirs, err_msg=field)


def test_parity_step_time_through_the_entry_points() -> None:
    """The grid's search (`optimal_layout`) and a fixed layout (`fixed_point`) report for the
    layout they time the step time of the run of that layout (`evaluate_run`), exactly, and
    its MFU to rounding; the grid's 1-D layouts on one network level, without the distributed
    optimizer's overlap (a run gives its own `overlap_dp`), are runs' layouts."""
    physics = realistic(tensor_parallel=TensorParallel.ONE_D, dp_overlap=False)
    opts = SearchOptions(overlap_tp=False, overlap_pp_ep=False, zero_bubble=False)
    hw = preset("h100_sxm")
    found = optimal_layout(hw, grid_model(), N_GPU, opts, physics=physics)
    assert found is not None
    layout, cost = found
    tp, pp, dp = (math.prod(getattr(layout, k)) for k in ("tp_ff", "pp", "dp"))
    assert math.prod(layout.tp_model) == 1
    shape = grid_shape(physics, grid_model())
    c = enumerate_candidates(physics_hardware(hw, physics), shape, N_GPU, opts, physics)
    assert isinstance(c, Candidates)
    row = int(
        np.flatnonzero(
            (c.degrees[:, 0] == dp)
            & (c.degrees[:, 2] == tp)
            & (c.degrees[:, 3] == pp)
            & (c.microbatches == layout.microbatches)
        )[0]
    )
    run = scheduled_run(c, row, shape, physics, opts)
    assert cost.step_time_s == run.step_time_s[0]
    assert cost.utilization == pytest.approx(float(run.mfu[0]), rel=1e-12)
    spec = RunSpec(
        "grid", run_model(shape), shape.batch_seqs, run_layout_of(c, row, shape, physics)
    )
    assert evaluate_run(hw, physics, spec).step_time_s == cost.step_time_s
    fixed = fixed_point(hw, grid_model(), layout, opts, math.inf, physics)
    assert fixed.cost is not None
    assert fixed.cost.step_time_s == cost.step_time_s


def run_layout_of(c: Candidates, row: int, shape: ModelShape, physics: Physics) -> RunLayout:
    """Candidate `row`'s layout as a run's (exposed sends and gradients): N_DP = d·c data-
    and context-parallel ranks, micro-batches of nanobatch·c/s sequences."""
    assert c.recompute is not None
    dp, _, tp, pp, _ = (int(v) for v in c.degrees[row])
    cp = 1 if c.cp is None else int(c.cp[row])
    return RunLayout(
        tp=tp,
        pp=pp,
        dp=dp // cp,
        cp=cp,
        microbatch_seqs=int(c.nanobatch[row]) * cp // shape.seq_len,
        interleave=int(c.interleave[row]),
        sequence_parallel=tp > 1,
        recompute=RECOMPUTE_ORDER[int(c.recompute[row])],
        zero_stage=physics.zero_stage,
        grad_reduce_fp32=physics.grad_reduce_fp32,
        fp8_params=physics.fp8_params,
        expert_imbalance=physics.expert_imbalance,
    )


@pytest.mark.parametrize("mode", [Recompute.NONE, Recompute.SELECTIVE])
def test_parity_memory_of_a_wide_mlp(mode: Recompute) -> None:
    """With d_ff = 8·d_model and multi-head attention a candidate's bytes per GPU under each
    recomputation mode equal the matched run's (activations d_ff wide, not a GPT layer's 4·d_model)."""
    physics = realistic()
    laws = dataclasses.replace(ScalingLaws(), ff_ratio=8, kv_heads=None)
    shape = model_shape(4096, laws, SearchOptions().quirks)
    c = enumerate_candidates(preset("h100_sxm"), shape, N_GPU, SearchOptions(), physics)
    assert isinstance(c, Candidates)
    assert c.recompute is not None
    c = dataclasses.replace(c, recompute=np.full_like(c.recompute, RECOMPUTE_ORDER.index(mode)))
    rows = one_d_rows(c)
    assert rows.size > 0
    for row in rows:
        run = matched_run(c, int(row), shape, physics)
        factors = tuple(c.degrees[row : row + 1, i].astype(float) for i in range(5))
        schedule = (
            c.microbatches[row : row + 1],
            c.interleave[row : row + 1],
            c.zero_bubble[row : row + 1],
        )
        nano = c.nanobatch[row : row + 1].astype(float)
        (grid_bytes,) = grid_memory_by_mode_bytes(
            preset("h100_sxm"),
            physics,
            shape,
            factors,  # type: ignore[arg-type]
            nano,
            schedule,
            (mode,),
        )
        assert run.memory_per_gpu_bytes[0] == grid_bytes[0]
