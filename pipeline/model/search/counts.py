"""What a realistic grid row counts of the model it times (docs/model.md R.7, "What a grid
row counts").

The grid stays indexed by the paper's model-size axis (d_model, and from it L, d_ff, S and the
batch; spec §2). Under realistic physics the model a candidate's step times is the transformer
of that shape (`grid_transformer`: d_head = 128, as many K/V heads, GeLU, top-1 experts, no
vocabulary), and its row counts that model: its parameters (`compute.flop.model_params`:
attention projections with `physics.attention`), D = tokens_per_param times them, and the
model FLOP of the whole training (`compute.flop.flop_per_step` times the steps). The batch
law is read at the axis's C (the paper's 6·N·D/S), so a grid size has the same shape and
batch under either physics, unless `physics.batch_at_row_flop` reads it at the row's own
FLOP (`series_shape`). A concrete run of the same model counts the same
(`runs.run_point.run_counts`, `tests/model/test_parity.py`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pipeline.model.caches import cached
from pipeline.model.compute.efficiency import matmul_efficiency, precision_speedup
from pipeline.model.compute.flop import (
    active_weight_params,
    attention_weight_params,
    expert_weight_params,
    flop_per_step,
    model_params,
)
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.records.hardware import HardwareSpec, effective_flop_per_s, peak_flop_per_s
from pipeline.model.records.options import Quirks
from pipeline.model.records.results import GridCost, ModelCounts
from pipeline.model.records.scaling import ModelShape, ScalingLaws, batch_seqs, model_shape
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics, Recompute, recompute_modes
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.search.candidates import Candidates
from pipeline.model.search.grid import (
    GRID_TOP_K,
    grid_heads,
    grid_kv_heads,
    grid_memory_by_mode_bytes,
)

GRID_COUNTS_CACHE_SIZE = 4096
"""(physics, model) whose grid shape, counts and FLOP per step a process keeps
(`series_shape`, `grid_shape_counts`, `grid_flop_per_step`): the grid sizes of a sweep's
models, which every GPU and network of the sweep shares."""


def grid_transformer(shape: ModelShape) -> TransformerShape:
    """The grid's model as a transformer: L layers of width d, d_ff, S experts of top-1
    routing, d / 128 heads (`search.grid.grid_heads`; one head when 128 does not divide d:
    heads enter no count) and the scaling laws' K/V heads (`search.grid.grid_kv_heads`; as
    many as heads without a rule), no vocabulary (`search.grid`)."""
    return TransformerShape(
        layers=shape.n_layers,
        hidden=shape.d_model,
        ffn_hidden=shape.d_ff,
        heads=grid_heads(shape),
        kv_heads=grid_kv_heads(shape),
        vocab=0,
        seq_len=shape.seq_len,
        experts=shape.sparsity,
        top_k=GRID_TOP_K,
    )


@cached(maxsize=GRID_COUNTS_CACHE_SIZE)
def series_shape(d_model: int, laws: ScalingLaws, quirks: Quirks, physics: Physics) -> ModelShape:
    """The grid size at `d_model` (`records.scaling.model_shape`), its batch read by the batch
    law at the FLOP the realistic row trains with `physics.batch_at_row_flop`: B_seq of
    `batch_seqs` at C_r = `grid_counts(...).training_flop` and N_r = its parameters, where
    the paper reads C = 6·N·D/S and N. C_r does not depend on the batch (the FLOP per step are
    in proportion to it, the steps in inverse proportion), so one reading is exact. Kept per
    (width, laws, quirks, physics)."""
    shape = model_shape(d_model, laws, quirks)
    if not physics.batch_at_row_flop or physics.is_paper:
        return shape
    counts = grid_counts(physics, shape)
    params = round(counts.n_params)
    b = batch_seqs(params, shape.sparsity, counts.training_flop, laws, quirks)
    return dataclasses.replace(shape, batch_seqs=b)


def grid_counts(physics: Physics, shape: ModelShape) -> ModelCounts:
    """Parameters, training tokens and model FLOP of the grid model a realistic step times:
    N = `model_params` of `grid_transformer`, D = tokens_per_param · N, C = model FLOP per
    step (no recomputation) · D / B_tok."""
    params = model_params(physics, grid_transformer(shape))
    tokens = shape.tokens_per_param * params
    per_step, _ = grid_flop_per_step(physics, shape)  # the model count: no recomputation
    return ModelCounts(params, tokens, per_step * (tokens / shape.batch_tokens))


@cached(maxsize=GRID_COUNTS_CACHE_SIZE)
def grid_flop_per_step(physics: Physics, shape: ModelShape) -> tuple[float, tuple[float, ...]]:
    """`compute.flop.flop_per_step` of the grid's model (`grid_transformer`) at its batch: the
    model FLOP of a step and the hardware FLOP under each mode of `RECOMPUTE_ORDER`, kept per
    (physics, model): every candidate and row of a model reads them."""
    modes = np.arange(len(RECOMPUTE_ORDER), dtype=np.int64)
    model_flop, hw_flop = flop_per_step(physics, grid_transformer(shape), shape.batch_seqs, modes)
    return model_flop, tuple(float(f) for f in hw_flop)


def grid_shape(physics: Physics, shape: ModelShape) -> ModelShape:
    """The grid size as a realistic search times it: training on `grid_counts`' tokens (the
    step count is tokens / B_tok) and holding its parameters (the data-parallel gradient
    all-reduce and the aggregate memory check move them); under paper physics the shape as
    given."""
    return grid_shape_counts(physics, shape)[0]


@cached(maxsize=GRID_COUNTS_CACHE_SIZE)
def grid_shape_counts(physics: Physics, shape: ModelShape) -> tuple[ModelShape, ModelCounts | None]:
    """`grid_shape` and, under realistic physics, its `grid_counts` (None under the paper's),
    counted once: the counts read none of the fields `grid_shape` sets (D, N), so the shape's
    counts are the given shape's. Kept per (physics, model)."""
    if physics.is_paper:
        return shape, None
    counts = grid_counts(physics, shape)
    return dataclasses.replace(shape, tokens=counts.n_tokens, weights=counts.n_params), counts


def weight_training_flop(physics: Physics, shape: ModelShape) -> float:
    """FLOP of the weight matmuls of the whole training a search times: 6 · L · (weights one
    token meets) · D. Every realistic step runs them at most at the matmul rate
    (`matmul_rate_flop_per_s`); under paper physics C = 6·N·D/S."""
    if physics.is_paper:
        return shape.training_flop
    model = grid_transformer(shape)
    return 6.0 * model.layers * _layer_weights_per_token(physics, model) * shape.n_tokens


def busiest_rank_weight_flop(physics: Physics, shape: ModelShape) -> float:
    """`weight_training_flop` counted on the busiest expert-parallel rank of a layout that
    splits its experts over N_EP > 1 ranks: the experts' MLP FLOP at 1 + x times the balanced
    share (x = `physics.expert_imbalance`, `compute.experts.busiest_rank_expert_tokens`), the
    attention projections' at it. `weight_training_flop` itself for a dense model or x = 0."""
    if physics.is_paper or not physics.expert_imbalance or shape.sparsity == 1:
        return weight_training_flop(physics, shape)
    model = grid_transformer(shape)
    experts = model.top_k * expert_weight_params(model)
    attention = attention_weight_params(model) if physics.attention else 0.0
    busiest = attention + (1.0 + physics.expert_imbalance) * experts
    return 6.0 * model.layers * busiest * shape.n_tokens


def layer_weight_flop_per_token(physics: Physics, shape: ModelShape) -> float:
    """FLOP of one layer's weight matmuls per token, forward and backward, under realistic
    physics: 6 · (weights one token meets in a layer), as `weight_training_flop` counts them
    (attention projections with `physics.attention`, one expert's MLP)."""
    return 6.0 * _layer_weights_per_token(physics, grid_transformer(shape))


def _layer_weights_per_token(physics: Physics, model: TransformerShape) -> float:
    """The weights one token meets in a layer under realistic physics: attention projections
    and one expert's MLP per routed choice with `physics.attention`, else the MLP's alone."""
    if physics.attention:
        return active_weight_params(model)
    return model.top_k * expert_weight_params(model)


def grid_cost(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    c: Candidates,
    row: int,
    n_gpu: int,
    t_step_s: float,
) -> GridCost:
    """MFU, HFU and bytes per GPU of candidate `row` at the step time the search gave it:
    FLOP per step (`flop_per_step`, its recomputation mode for HFU) over peak · N_GPU · t_step,
    and R.4's bytes under that mode (`grid_memory_by_mode_bytes`, as the search checked them:
    the candidate's row's `Candidates.row_need` when the search kept them)."""
    if c.recompute is None:
        raise ValueError("candidates without recomputation modes: not a realistic search")
    mode = int(c.recompute[row])
    model_flop, hw_by_mode = grid_flop_per_step(physics, shape)
    hw_flop = hw_by_mode[mode]
    per_gpu_s = n_gpu * t_step_s
    if c.row_need and c.rows is not None:  # the row's, as the memory check read them
        position = recompute_modes(physics).index(RECOMPUTE_ORDER[mode])
        bytes_ = float(c.row_need[position][c.rows[row]])
    else:
        bytes_ = _memory_bytes(hw, physics, shape, c, row, RECOMPUTE_ORDER[mode])
    peak = peak_flop_per_s(hw)
    return GridCost(
        mfu=model_flop / (peak * per_gpu_s),
        hfu=hw_flop / (peak * per_gpu_s),
        model_flop_per_s_per_gpu=model_flop / per_gpu_s,
        hardware_flop_per_s_per_gpu=hw_flop / per_gpu_s,
        memory_per_gpu_bytes=bytes_,
        fits_memory=bytes_ <= memory_capacity_bytes(hw, physics),
    )


def _memory_bytes(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, c: Candidates, row: int, mode: Recompute
) -> float:
    """R.4's bytes on one GPU of candidate `row` under `mode` (`grid_memory_by_mode_bytes`)."""
    dp, tp_model, tp_ff, pp, ep = (c.degrees[row : row + 1, k].astype(np.float64) for k in range(5))
    schedule = (
        c.microbatches[row : row + 1],
        c.interleave[row : row + 1],
        c.zero_bubble[row : row + 1],
    )
    nano = c.nanobatch[row : row + 1].astype(np.float64)
    factors = (dp, tp_model, tp_ff, pp, ep)
    (bytes_,) = grid_memory_by_mode_bytes(hw, physics, shape, factors, nano, schedule, (mode,))
    return float(bytes_[0])


def matmul_rate_flop_per_s(hw: HardwareSpec, physics: Physics) -> float:
    """The fastest rate a GPU runs the model's weight matmuls at: F_eff in the paper's model
    (spec §11), F_eff·e·speedup under realistic physics (e the software's `matmul_efficiency`),
    whose weight GEMMs take at least their FLOP time over that (`compute.efficiency`,
    docs/model.md R.7; speedup: `precision_speedup`, the sustained FP8 matmul rate over the
    16-bit one under precision fp8)."""
    rate = effective_flop_per_s(hw)
    if physics.is_paper:
        return rate
    return rate * matmul_efficiency(hw, physics) * precision_speedup(hw, physics)
