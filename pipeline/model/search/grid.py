"""The scaling-law grid's candidates as rows of the realistic model (docs/model.md R.7).

The grid's models are the paper's (docs/model.md §3): L blocks of width d, d_ff = 4·d, S experts
of top-1 routing, no vocabulary. Under realistic physics each block is a transformer layer
with d_head = 128 (a = d / 128 heads; K/V heads by the scaling laws' rule, `grid_kv_heads`;
dropout by `scaling.dropout`, `ModelShape.dropout`); a candidate's layer, memory, optimizer
step and ring exchange come from the same functions as a concrete run's (`compute.layer`,
`memory.gpu_memory`, `compute.memory_ops`, `network.ring`): this module only says what a
candidate's rows are. The tensor-parallel split is the paper's 2-D one (N_TPm · N_TPff), of
which Megatron's 1-D layouts are the N_TPm = 1 case.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached
from pipeline.model.compute.efficiency import fp8_gemms, holds_fp8_weights
from pipeline.model.compute.experts import busiest_rank_expert_tokens
from pipeline.model.compute.layer import (
    LayerTimes,
    LayerTraffic,
    LayerWork,
    layer_launch_times,
    layer_matmul_bound,
    layer_times_s,
    layer_traffic,
    traffic_of_rows,
    traffic_rows,
)
from pipeline.model.compute.memory_ops import OpTimes
from pipeline.model.memory.gpu_memory import (
    LayerShape,
    ParamsPerGpu,
    fp8_weight_copy_bytes,
    gradient_bytes_per_param,
    in_flight_microbatches,
    state_bytes,
    stored_activation_bytes_per_layer,
)
from pipeline.model.network.comm_table import unique_rows
from pipeline.model.records.hardware import HardwareSpec, gpu_only
from pipeline.model.records.kept_hash import first_equal
from pipeline.model.records.results import MatmulBound
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import (
    RECOMPUTE_ORDER,
    Fusion,
    Physics,
    Recompute,
    TensorParallel,
)
from pipeline.model.records.switches import recompute_modes as recompute_modes

Array = NDArray[np.float64]
LAUNCH_CACHE_SIZE = 256
"""(GPU, physics) whose layer launch times a process keeps (`grid_layer_launch_s`,
`grid_non_gemm_launch_s`)."""
SHARD_TIMES_CACHE_SIZE = 256
SHARD_TRAFFIC_CACHE_SIZE = 64
"""(GPU without HBM bandwidth, physics, model) whose layer traffic per shard a process keeps
(`_grid_layer_traffic`): the models of the series a sweep's HBM axis shares, under 1 kB a
shard."""
"""(GPU, physics, model) whose layer times per shard a process keeps (`grid_layer_times_s`): the
models of a few series, each with the few hundred shards its walk meets."""
GRID_HEAD_DIM = 128
"""d_head of the grid's models (a = d_model / 128), as in GPT-3 and Llama models above 6B."""
GRID_TOP_K = 1
"""Experts each token of a grid model meets: the paper's S experts of top-1 routing (§3)."""


def grid_heads(shape: ModelShape) -> int:
    """a of the grid's model: d_model / 128 heads, one head when 128 does not divide d_model."""
    d = shape.d_model
    return d // GRID_HEAD_DIM if d % GRID_HEAD_DIM == 0 else 1


def grid_kv_heads(shape: ModelShape) -> int:
    """K/V heads of the grid's model: min(`ModelShape.kv_heads`, a), or a (multi-head
    attention) when the scaling laws give none (grouped-query attention, Ainslie et al. 2023)."""
    heads = grid_heads(shape)
    return heads if shape.kv_heads is None else min(shape.kv_heads, heads)


def grid_kv_width(shape: ModelShape) -> float:
    """kv = kv_heads · d_head: the width of K and of V of the grid's model (d_model under
    multi-head attention)."""
    return float(shape.d_model // grid_heads(shape) * grid_kv_heads(shape))


def _grid_layer_shape(shape: ModelShape) -> LayerShape | None:
    """What a grid layer's stored activations depend on beyond h, a and s: None (a GPT
    layer, `activation_bytes_per_layer`) under multi-head attention with d_ff = 4·d_model and
    dropout, else its K/V width, d_ff (`scaling.ff_ratio`) and dropout (`scaling.dropout`), as
    a run's layer (`runs.training_run.run_memory_bytes`)."""
    kv = grid_kv_width(shape)
    if kv == shape.d_model and shape.d_ff == 4 * shape.d_model and shape.dropout:
        return None
    return LayerShape(kv, float(shape.d_ff), 2, shape.dropout)


def sequence_parallel_degree(physics: Physics, tp_model: Array, tp_ff: Array) -> Array:
    """Ways a layer's norm, dropout and residual activations are split on a TP group.

    The paper's 2-D layouts split them along d_model over N_TPm. A 1-D layout (N_TPm = 1)
    outside `tensor_parallel=2d` runs Megatron's sequence parallelism: split over tokens
    N_TP ways (Korthikanti et al. 2022 §4.2.2).
    """
    if physics.tensor_parallel is TensorParallel.TWO_D:
        return tp_model
    out: Array = np.where(tp_model == 1.0, tp_model * tp_ff, tp_model)
    return out


def grid_layer_work(
    physics: Physics,
    shape: ModelShape,
    tp_model: Array,
    tp_ff: Array,
    nano: Array,
    local: Array | None = None,
) -> LayerWork:
    """Rows of grid candidates (`nano`: tokens per expert per microbatch; `local`: S/N_EP, the
    experts on one GPU, default 1): one layer on the GPU's local·nano tokens, its attention
    once, its `local` experts one after another on `nano` tokens each, as a run's E/e experts
    (`runs.training_run.run_layer_work`); on the busiest of the N_EP = S/local expert ranks
    (`compute.experts.busiest_rank_expert_tokens`); its dropout kernels the model's
    (`ModelShape.dropout`)."""
    d = float(shape.d_model)
    one = np.ones_like(nano)
    experts = one if local is None else local
    ranks = float(shape.sparsity) / experts  # N_EP
    return LayerWork(
        hidden=d * one,
        ffn=float(shape.d_ff) * one,
        kv_width=grid_kv_width(shape) * one,
        heads=d / GRID_HEAD_DIM * one,
        seq_len=float(shape.seq_len) * one,
        tp_model=tp_model,
        tp_ff=tp_ff,
        sp=sequence_parallel_degree(physics, tp_model, tp_ff),
        tokens=nano * experts,
        expert_tokens=busiest_rank_expert_tokens(nano, ranks, physics.expert_imbalance),
        local_experts=experts,
        dropout=shape.dropout,
    )


Shard = tuple[int, int, int, int]
"""(N_TPm, N_TPff, nanobatch, local experts): what a grid row's layer times depend on."""


def table_shards(
    table: NDArray[np.int64], sparsity: int
) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """The distinct shards (`Shard`: N_TPm, N_TPff, nanobatch, S/N_EP local experts) of a
    layout table's rows (`enumeration.realistic_layout_rows`' columns), in `unique_rows`'
    order, and each row's index among them."""
    local = sparsity // table[:, 4]  # the experts on one GPU
    return unique_rows(np.stack([table[:, 1], table[:, 2], table[:, 7], local], axis=1))


@cached(maxsize=SHARD_TIMES_CACHE_SIZE)
def _shard_times(
    gpu: HardwareSpec, physics: Physics, shape: ModelShape
) -> dict[Shard, list[float]]:
    """The layer times met so far of each shard of a model on a GPU (`grid_layer_times_s`), as
    `LayerTimes` fields in order: filled by `grid_layer_times_s`, never changed once set."""
    return {}


@cached(maxsize=LAUNCH_CACHE_SIZE)
def timing_gpu(hw: HardwareSpec) -> HardwareSpec:
    """The GPU as a layer's times read it: `gpu_only(hw)` with no memory capacity (0 bytes; no
    layer time reads it), so that GPUs that differ only in HBM capacity share their layer
    times."""
    return first_equal(dataclasses.replace(gpu_only(hw), hbm_bytes=0.0))


def grid_layer_times_s(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, shards: NDArray[np.int64]
) -> LayerTimes:
    """`compute.layer.layer_times_s` of the grid rows (`grid_layer_work`) of each shard row
    (N_TPm, N_TPff, nanobatch, local experts) of `shards`, on the GPU of `hw`. The times are
    element-wise in the rows (batching changes no value, `compute.layer.weight_matmul_s`), so
    each shard's are kept per (GPU without its memory capacity, `_timing_gpu`, physics, model) and
    only shards not met before are timed, from their traffic (`_grid_layer_traffic`, shared by
    GPUs that differ in HBM bandwidth):
    the cluster sizes of a walk, and the series of a sweep over the network, share most
    shards (docs/model.md §9.2)."""
    gpu = timing_gpu(hw)
    store = _shard_times(gpu, physics, shape)
    keys: list[Shard] = [(a, b, c, d) for a, b, c, d in shards.tolist()]
    missing = [k for k in dict.fromkeys(keys) if k not in store]
    if missing:
        _time_shards(gpu, physics, shape, missing)
    table = np.array([store[k] for k in keys], dtype=np.float64).reshape(len(keys), -1)
    return LayerTimes(table[:, 0], table[:, 1], table[:, 2], table[:, 3], OpTimes(*table[:, 4:].T))


def _time_shards(
    gpu: HardwareSpec, physics: Physics, shape: ModelShape, missing: list[Shard]
) -> None:
    """Time the shards `missing` (distinct, none in `gpu`'s store) on `gpu` and on every GPU
    met so far that differs from it only in HBM bandwidth (`_bandwidth_family`) where its
    store lacks them, as one batch of rows, each at its own GPU's bandwidth
    (`compute.layer.layer_times_s`'s `hbm`: each row's times are its GPU's, bit for bit), and
    keep each in its GPU's store (`_shard_times`). The series of a sweep over HBM bandwidth
    meet the same shards, so a shard is timed in one batch for all of them instead of once
    per bandwidth (docs/model.md §9.2)."""
    family = _bandwidth_family(traffic_gpu(gpu))
    family[gpu] = None
    stores = [(g, _shard_times(g, physics, shape)) for g in family]
    index = {k: i for i, k in enumerate(missing)}
    pairs = [(g, store, k) for g, store in stores for k in missing if k not in store]
    work = grid_layer_work(physics, shape, *np.array(missing, dtype=np.float64).T)
    traffic = _grid_layer_traffic(gpu, physics, shape, missing, work)
    if len(pairs) > len(missing):  # the rows of every GPU's shards, each shard's traffic
        rows = np.array([index[k] for _, _, k in pairs])
        work = grid_layer_work(physics, shape, *np.array(missing, dtype=np.float64)[rows].T)
        traffic = traffic_of_rows(traffic, traffic_rows(traffic)[rows])
    hbm = np.array([g.hbm_bandwidth_bytes_per_s for g, _, _ in pairs])
    times = layer_times_s(gpu, physics, work, traffic, hbm)
    columns = [
        times.matmul_forward_s,
        times.matmul_backward_s,
        times.attention_forward_s,
        times.attention_backward_s,
        *(getattr(times.ops, f) for f in OpTimes.__slots__),
    ]
    timed = np.stack(np.broadcast_arrays(*columns), axis=1).tolist()
    for (_, store, k), row in zip(pairs, timed, strict=True):
        store[k] = row


def grid_matmul_bound(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, shard: Shard
) -> MatmulBound:
    """`compute.layer.layer_matmul_bound` of the grid row (`grid_layer_work`) of one shard
    (N_TPm, N_TPff, nanobatch, local experts) on the GPU of `hw`, as `grid_layer_times_s`
    times it: on `timing_gpu(hw)`, from the shard's kept traffic (`_grid_layer_traffic`)."""
    gpu = timing_gpu(hw)
    work = grid_layer_work(physics, shape, *np.array([shard], dtype=np.float64).T)
    traffic = _grid_layer_traffic(gpu, physics, shape, [shard], work)
    return layer_matmul_bound(gpu, physics, work, traffic.calls)


def grid_layer_floor_s(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, shards: NDArray[np.int64]
) -> Array:
    """Each shard row's layer (`grid_layer_times_s`), forward and backward without a rerun,
    on the GPU of `hw` at unbounded HBM bandwidth: at most the layer's `t_layer_s` on that GPU
    at any HBM bandwidth, under any recomputation mode (docs/model.md §9.4). Reads of the GPU
    its sizes and on-chip rates, not its HBM, so the GPUs that differ only in HBM share it:
    each shard's kept per (`traffic_gpu`, physics, model).

    Proof. Every part of `compute.layer.layer_times_s` is a maximum of bytes or FLOP over a
    rate, each ≥ 0, plus fixed launches; HBM bytes over an unbounded bandwidth are 0, the
    least such a term takes, and sums and maxima never decrease in a term (rounding is
    monotone). A rerun (`with_rerun_s`) only adds."""
    gpu = traffic_gpu(hw)
    store = _shard_layer_floors(gpu, physics, shape)
    keys: list[Shard] = [(a, b, c, d) for a, b, c, d in shards.tolist()]
    missing = [k for k in dict.fromkeys(keys) if k not in store]
    if missing:
        work = grid_layer_work(physics, shape, *np.array(missing, dtype=np.float64).T)
        traffic = _grid_layer_traffic(gpu, physics, shape, missing, work)
        unbounded = np.full(len(missing), np.inf)
        times = layer_times_s(gpu, physics, work, traffic, unbounded)
        store.update(zip(missing, (times.forward_s + times.backward_s).tolist(), strict=True))
    return np.array([store[k] for k in keys], dtype=np.float64)


@cached(maxsize=SHARD_TRAFFIC_CACHE_SIZE)
def _shard_layer_floors(
    gpu: HardwareSpec, physics: Physics, shape: ModelShape
) -> dict[Shard, float]:
    """The layer floors met so far of each shard of a model on a GPU without its HBM
    (`grid_layer_floor_s`), never changed once set."""
    return {}


@cached(maxsize=SHARD_TRAFFIC_CACHE_SIZE)
def _bandwidth_family(gpu: HardwareSpec) -> dict[HardwareSpec, None]:
    """The GPUs met so far (`timing_gpu`s, in order) whose traffic GPU (`traffic_gpu`) is
    `gpu`: those that differ only in HBM bandwidth, whose shards `_time_shards` times
    together."""
    return {}


def _grid_layer_traffic(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, shards: list[Shard], work: LayerWork
) -> LayerTraffic:
    """`compute.layer.layer_traffic` of `shards` (distinct), whose grid rows are `work`: each
    shard's kept per (GPU without its HBM bandwidth and capacity, `traffic_gpu`, physics,
    model) and only shards not met before computed. A layer's traffic reads of the GPU only
    its sizes, so the series of a sweep over HBM bandwidth share it, and each times it at its
    own rates (docs/model.md §9.2)."""
    gpu = traffic_gpu(hw)
    store = _shard_traffic(gpu, physics, shape)
    absent = [i for i, k in enumerate(shards) if k not in store.rows]
    if absent:
        if len(absent) < len(shards):  # the grid rows of the shards not met before
            new = np.array([shards[i] for i in absent], dtype=np.float64)
            work = grid_layer_work(physics, shape, *new.T)
        fresh = layer_traffic(gpu, physics, work)
        if store.template is None:
            store.template = fresh
        store.rows.update(zip([shards[i] for i in absent], traffic_rows(fresh), strict=True))
        if len(absent) == len(shards):
            return fresh
    assert store.template is not None  # set with the first rows
    return traffic_of_rows(store.template, np.stack([store.rows[k] for k in shards]))


@dataclass(slots=True)
class _TrafficStore:
    """The layer traffic met so far of each shard of a model on a GPU (`_grid_layer_traffic`):
    each shard's row of `compute.layer.traffic_rows`, never changed once set, and the first
    traffic computed, the layout of every row (`traffic_of_rows`)."""

    rows: dict[Shard, Array]
    template: LayerTraffic | None = None


@cached(maxsize=SHARD_TRAFFIC_CACHE_SIZE)
def _shard_traffic(gpu: HardwareSpec, physics: Physics, shape: ModelShape) -> _TrafficStore:
    """The traffic store of a model's shards on a GPU (`_grid_layer_traffic`), empty at first."""
    return _TrafficStore({})


@cached(maxsize=LAUNCH_CACHE_SIZE)
def traffic_gpu(hw: HardwareSpec) -> HardwareSpec:
    """The GPU as a layer's traffic reads it: `timing_gpu(hw)` without HBM bandwidth (0 B/s;
    no traffic reads a rate, `compute.layer.LayerTraffic`), so that GPUs that differ only in
    HBM bandwidth and capacity share their layers' traffic."""
    return dataclasses.replace(timing_gpu(hw), hbm_bandwidth_bytes_per_s=0.0)


def grid_layer_launch_s(hw: HardwareSpec, physics: Physics, shape: ModelShape) -> float:
    """The fixed time of one grid layer of `shape` with one local expert, forward and backward,
    on any candidate: forward and backward of `compute.layer.layer_launch_times` of a unit row
    (every width, shard and token count 1, the model's dropout). A grid row's launches depend
    on neither its widths, shards nor tokens (the layer's matrices, the attention core's passes
    and the fusion's kernels are set by the physics, the dropout kernels by the model's
    `ModelShape.dropout`), only on its local experts, and never fall with more
    (`grid_layer_launches_s`): the unit row's is a lower bound on every candidate's
    `t_layer_s` (docs/model.md §9.4). Kept per GPU without its HBM (`traffic_gpu`: no launch
    reads its bandwidth or capacity), physics and dropout."""
    return _layer_launch_s(traffic_gpu(hw), physics, shape.dropout)[0]


def grid_layer_launches_s(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, local: Array
) -> Array:
    """The fixed time of a grid layer with `local` experts on the GPU, forward and backward:
    K_1 + (local − 1) · (K_2 − K_1), K_e `grid_layer_launch_s`'s for e local experts. Only the
    experts' weight GEMMs repeat per expert (`compute.layer.weight_matmul_s`; the attention,
    its projections and the memory-bound kernels run once on the GPU's tokens), so the launches
    grow linearly in `local` and this is each row's, to rounding (the walk's slack covers it)."""
    one, _, two = _layer_launch_s(traffic_gpu(hw), physics, shape.dropout)
    out: Array = one + (local - 1.0) * (two - one)
    return out


def grid_non_gemm_launch_s(hw: HardwareSpec, physics: Physics, shape: ModelShape) -> float:
    """The fixed time of one grid layer call's kernels other than its weight GEMMs (the
    attention core's passes and the memory-bound kernels), forward and backward, on any
    candidate of any model: `LayerTimes.non_gemm_s` of `compute.layer.layer_launch_times` of
    a unit row, every row's as for `grid_layer_launch_s`: a lower bound on every candidate's
    `t_layer_s − t_gemm_s`, the layer's forward and backward less its GEMMs (a rerun reruns
    at least the GEMMs `t_gemm_s` counts for it). Kept per GPU without its HBM, physics and
    dropout, as `grid_layer_launch_s`."""
    return _layer_launch_s(traffic_gpu(hw), physics, shape.dropout)[1]


@cached(maxsize=LAUNCH_CACHE_SIZE)
def _layer_launch_s(
    hw: HardwareSpec, physics: Physics, dropout: bool
) -> tuple[float, float, float]:
    """(`grid_layer_launch_s`, `grid_non_gemm_launch_s`, the first with two local experts)
    uncached: the unit row with one local expert and with two, in one call (every term is
    elementwise in the rows), with or without the dropout kernels."""
    one = np.ones(2)
    unit = LayerWork(*(one,) * 10, local_experts=np.array([1.0, 2.0]), dropout=dropout)
    t = layer_launch_times(hw, physics, unit)
    total = t.forward_s + t.backward_s
    return float(total[0]), float(t.non_gemm_s[0]), float(total[1])


def grid_params_per_gpu(
    physics: Physics, shape: ModelShape, tp: Array, pp: Array, ep: Array
) -> ParamsPerGpu:
    """Parameters one GPU holds: (L/N_PP) layers over N_TP, of which the attention's
    d·(d + 2·kv) + d² per layer (4·d² under multi-head attention; with `physics.attention`) are replicated over N_DP and the S/N_EP local experts'
    2·d·d_ff each over the N_DP replicas of the same experts; a dense model's are all
    replicated, as a dense run's (`runs.training_run.run_params_per_gpu`)."""
    layers = shape.n_layers / pp
    mlp = 2.0 * shape.d_model * shape.d_ff * (shape.sparsity / ep)
    d, kv = float(shape.d_model), grid_kv_width(shape)
    attention = d * (d + 2.0 * kv) + d * d if physics.attention else 0.0
    if shape.sparsity == 1:
        dense: Array = layers * (attention + mlp) / tp
        return ParamsPerGpu(replicated=dense, expert=np.zeros_like(dense))
    return ParamsPerGpu(replicated=layers * attention / tp, expert=layers * mlp / tp)


def grid_memory_by_mode_bytes(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    factors: tuple[Array, Array, Array, Array, Array],
    nano: Array,
    schedule: tuple[Array, Array, NDArray[np.bool_]],
    modes: tuple[Recompute, ...],
) -> list[Array]:
    """Bytes on one GPU under each of `modes`: model state (ZeRO over the N_DP·N_EP ranks
    holding the same dense weights, the experts' over the N_DP holding the same shard) plus in-flight
    activations of the first stage (`memory.gpu_memory`); schedule = (m, v, zero-bubble).
    With FP8 GEMMs (`fp8_gemms`, docs/model.md R.11) the state includes the layers' FP8 weight
    copies and the activations their 1-byte GEMM inputs, as a run's (`runs.training_run.run_memory_bytes`).
    The model state and the microbatches in flight, which no mode changes, are computed once."""
    fp8 = fp8_gemms(hw, physics)
    return memory_by_mode_bytes(fp8, physics, shape, factors, nano, schedule, modes)


def memory_by_mode_bytes(
    fp8: bool,
    physics: Physics,
    shape: ModelShape,
    factors: tuple[Array, Array, Array, Array, Array],
    nano: Array,
    schedule: tuple[Array, Array, NDArray[np.bool_]],
    modes: tuple[Recompute, ...],
) -> list[Array]:
    """`grid_memory_by_mode_bytes` on a GPU whose weight GEMMs run in FP8 or not (`fp8`,
    `compute.efficiency.fp8_gemms`): all it reads of the GPU."""
    dp, tp_model, tp_ff, pp, ep = factors
    microbatches, interleave, zero_bubble = schedule
    tp = tp_model * tp_ff
    params = grid_params_per_gpu(physics, shape, tp, pp, ep)
    gradient_bytes = gradient_bytes_per_param(physics.grad_reduce_fp32)
    model_state = state_bytes(params, physics.zero_stage, dp * ep, dp, gradient_bytes)
    if fp8 and not holds_fp8_weights(fp8, physics):  # no vocabulary: every weight a layer's
        model_state = model_state + fp8_weight_copy_bytes(params.total)
    tokens = nano * shape.sparsity / ep
    split = (sequence_parallel_degree(physics, tp_model, tp_ff), tp)
    heads = shape.d_model / GRID_HEAD_DIM
    layer = _grid_layer_shape(shape)
    stored = physics.attention and physics.fusion is not Fusion.FLASH
    layers = shape.n_layers / pp
    held = in_flight_microbatches(pp, microbatches, interleave, zero_bubble)
    out: list[Array] = []
    for mode in modes:
        per_layer = stored_activation_bytes_per_layer(
            tokens,
            float(shape.d_model),
            heads,
            float(shape.seq_len),
            split,
            mode,
            stored,
            layer,
            GRID_TOP_K,
            fp8,
        )
        out.append(model_state + per_layer * layers * held)
    return out


def fitting_mode(
    need: Sequence[Array], modes: tuple[Recompute, ...], hbm_bytes: float
) -> NDArray[np.int64]:
    """Each row's first mode of `modes` (index into `RECOMPUTE_ORDER`) whose bytes `need`
    (one array per mode, `grid_memory_by_mode_bytes`) fit in `hbm_bytes`, −1 where none does."""
    out = np.full(need[0].shape, -1, dtype=np.int64)
    for mode, bytes_ in zip(reversed(modes), reversed(need), strict=True):
        out = np.where(bytes_ <= hbm_bytes, RECOMPUTE_ORDER.index(mode), out)
    return out
