"""Lower bounds on the step time of every layout of a model on N GPUs under realistic physics,
from compute, from the tensor-parallel collectives, and from each enumerated layout's own
network times: the cluster walk (`search.smallest_cluster`) sets aside the clusters they prove
too slow without timing their candidates (docs/model.md §9.4)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached, register
from pipeline.model.compute.efficiency import fp8_weights_only
from pipeline.model.compute.matmul import TENSOR_CORE_WIDTH
from pipeline.model.compute.memory_ops import WORD_BYTES
from pipeline.model.memory.gpu_memory import ParamsPerGpu
from pipeline.model.network.groups import (
    GradientGroups,
    Levels,
    TensorGroups,
    expert_all_to_all_s,
    gradient_allreduce_s,
    pipeline_send_s,
    tensor_parallel_s,
)
from pipeline.model.network.levels import adjusted_level_sizes, divisors
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.kept_hash import first_equal
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import Physics
from pipeline.model.search.counts import (
    busiest_rank_weight_flop,
    layer_weight_flop_per_token,
    matmul_rate_flop_per_s,
    weight_training_flop,
)
from pipeline.model.search.enumeration import (
    context_parallel_degrees,
    realistic_layout_rows,
    tries_context_parallel,
)
from pipeline.model.search.grid import (
    grid_kv_width,
    grid_layer_floor_s,
    grid_layer_launch_s,
    grid_layer_launches_s,
    grid_non_gemm_launch_s,
    grid_params_per_gpu,
    sequence_parallel_degree,
    table_shards,
)
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes
from pipeline.model.step.assembly import (
    dp_bucket_params,
    gradient_reduction_s,
    reduction_total_s,
)
from pipeline.model.step.pipeline import StageLayers, pipeline_step_s
from pipeline.model.step.schedule import interleave_degrees

Array = NDArray[np.float64]

TENSOR_PARALLEL_TERMS_CACHE_SIZE = 256
"""(network, cover) whose tensor-parallel floor terms a process keeps: a few per series."""
FLOOR_HARDWARE_CACHE_SIZE = 256
"""Hardware (GPU and network) whose `floor_hardware` a process keeps: one per series."""


def batch_share_floor(physics: Physics, opts: SearchOptions, shape: ModelShape) -> float:
    """ρ ≤ N_DP·m·S·nanobatch / B_tok for every layout the search enumerates: the share of the
    batch's tokens its rounded-down nanobatch keeps (`search.enumeration`).

    With x = B_tok/(N_DP·m·S) the nanobatch is ⌊x⌋ > x − 1, so the share ⌊x⌋/x exceeds
    1 − 1/x, and is at least 1/2 when x ≥ 1. S = 1: x is an integer (N_DP·m divides the batch:
    N_DP its split unit, m the quotient, a context-parallel c the sequence), ρ = 1. Whole
    sequences: d·m divides B_seqs, so x = k·s/(c·S) ≥ x0 = s/(c_max·S) for an integer k ≥ 1.
    Token-granular: m ≤ ⌊B_tok/(S·N_DP)⌋, so x ≥ x0 = 1. ρ = max(1 − 1/x0, 1/2) when x0 ≥ 1,
    else 0 (a nanobatch may be empty).
    """
    s = shape.sparsity
    if s == 1:
        return 1.0
    cp = _most_context_parallel(physics, opts, shape)
    x0 = 1.0 if cp is None else shape.seq_len / (cp * s)
    return max(1.0 - 1.0 / x0, 0.5) if x0 >= 1.0 else 0.0


def _most_context_parallel(physics: Physics, opts: SearchOptions, shape: ModelShape) -> int | None:
    """The largest context-parallel degree c a layout may have with whole-sequence microbatches
    (1 when the physics tries none); None when microbatches split tokens (`search.enumeration`)."""
    if not (opts.quirks.whole_sequences or physics.whole_sequences):
        return None
    if tries_context_parallel(physics):
        return max((1, *context_parallel_degrees(shape, physics.max_context_parallel)))
    return 1


def experts_split(shape: ModelShape, n_gpu: int) -> bool:
    """Whether every layout of the model on n_gpu GPUs splits its experts over N_EP > 1 ranks:
    N_EP = gcd(N, S) for every layout the search enumerates (`search.enumeration`)."""
    return math.gcd(n_gpu, shape.sparsity) > 1


def step_floor_terms_s(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    split: bool = False,
) -> tuple[float, float]:
    """(a, b) such that every layout of the model on N GPUs has a step time ≥ a + b/N, from
    compute alone (network-free), under realistic physics; (0, 0) under the paper's. With
    `split`, b of the cluster sizes whose layouts split their experts over N_EP > 1 ranks
    (`experts_split`): the busiest rank's experts' FLOP at 1 + x times the balanced share.

    a = L · K, with K the fixed time of a layer call (`search.grid.grid_layer_launch_s`: its
    kernel launches times their overheads); b = ρ · 6 · L · W_l · B_tok / R with W_l the
    weights one token meets per layer (`weight_training_flop` / steps), R the matmul rate
    (`matmul_rate_flop_per_s`) and ρ the share of the batch a layout's nanobatches keep
    (`batch_share_floor`; 1 for a dense model). With `split`, W_l counts the experts' MLP
    at 1 + x (`counts.busiest_rank_weight_flop`, x = `physics.expert_imbalance`).

    Proof. A layout's step runs its critical stage's (L/N_PP)·m layers, so
    t_step ≥ (L/N_PP)·m · t_layer (docs/model.md §7, R.6; recomputation and the
    ring only add to t_layer). Each layer takes at least K (S/N_EP local experts only add
    launches, `search.grid.grid_layer_launches_s`) plus its weight matmuls' FLOP over
    R (`matmul_calls_s`: every call's time is overhead plus a maximum that includes its padded
    FLOP ≥ 2·d1·d2·b over F_eff·e = R, e = `matmul_efficiency`, the same product), and
    those FLOP are at least 6 · (S/N_EP) · nanobatch · W_l / N_TP: the layer is timed on the
    busiest expert rank, whose experts compute 1 + x times the nanobatch where N_EP > 1 and
    the nanobatch where N_EP = 1 (`compute.experts`, x ≥ 0), so W_l may count the MLP at
    1 + x at every size where N_EP = gcd(N, S) > 1 (`split`), and at 1 everywhere. Every
    schedule has m ≥ N_PP (1F1B m ≥ N_PP,
    zero-bubble m ≥ 2·N_PP), so the layers number at least L: a. Plain 1F1B with m < N_PP
    (`Physics.few_microbatches`, v = 1) runs its m passes of L/N_PP layers and fills and drains
    through the other N_PP − 1 stages (`step.pipeline.pipeline_step_s`: (m + N_PP − 1)·(L/N_PP)
    ≥ L layers' time, m ≥ 1): at least L layers again, of which the m·(L/N_PP) real ones carry
    the FLOP. The FLOP terms
    add to 6·L·W_l·(N_DP·m·S·nanobatch)/(N·R) ≥ b/N, as N = N_DP·N_TP·N_PP·N_EP. The bound is
    computed by another floating-point sequence than the step, so the walk compares it with
    the relative slack `search.PRUNE_SLACK`.
    """
    if physics.is_paper:
        return 0.0, 0.0
    fixed_s = shape.n_layers * grid_layer_launch_s(hw, physics, shape)
    steps = shape.n_tokens / float(shape.batch_tokens)
    flop = (
        busiest_rank_weight_flop(physics, shape) if split else weight_training_flop(physics, shape)
    )
    work = batch_share_floor(physics, opts, shape) * flop / steps
    return fixed_s, work / matmul_rate_flop_per_s(hw, physics)


def tensor_parallel_floor_s(
    hw: HardwareSpec, physics: Physics, opts: SearchOptions, shape: ModelShape, n_gpu: int
) -> float:
    """A lower bound on the step time of every realistic layout on n_gpu GPUs from its tensor-
    parallel collectives alone: L · min over (N_TPm, N_TPff) of t_tp(ρ·B_tok·N_TP/N), t_tp the
    collectives of one layer pass (`network.groups.tensor_parallel_s`, no recomputation) on
    that many tokens, over every pair whose product N_TP divides N/N_EP and is at least t_min,
    the fewest tensor-parallel ranks a layout on N GPUs has; 0 under the paper's physics.

    Proof. t_min: N = N_EP·N_TP·N_DP·N_PP (c inside N_DP) and every schedule has m ≥ N_PP, so
    with whole sequences d·N_PP ≤ d·m ≤ B_seqs (d divides B_seqs, m the quotient) and
    N_DP·N_PP ≤ c_max·B_seqs; token-granular, N_DP·m·S ≤ B_tok, so N_DP·N_PP ≤ B_tok/S; N_EP =
    gcd(N, S). With `Physics.few_microbatches` plain 1F1B may have m < N_PP: then only m ≥ 1
    and N_PP ≤ L hold, and both bounds on N_DP·N_PP take a factor L. The step runs its
    critical stage's (L/N_PP)·m ≥ L layer passes (`step.pipeline.pipeline_step_s`: the
    slowest stage m times, the rest non-negative; with m < N_PP and v = 1 the fill and drain
    add (N_PP − 1)·(L/N_PP) passes' time, (m + N_PP − 1)·(L/N_PP) ≥ L, of which the m·(L/N_PP)
    real ones carry the tokens counted below), each
    at least its tensor-parallel collectives (`search.realistic`: t_full = t_layer + what of
    them outlasts the layer's GEMMs + t_ep, and t_layer ≥ the GEMMs), which recomputation only
    adds to. For a given pair they are α·tokens + β with α, β ≥ 0 (ring all-reduces: bytes in
    proportion to the pass's tokens over a bandwidth, plus hops times a latency), and a pass
    holds nanobatch·S/N_EP tokens, so the passes' tokens add to L·(N_DP·m·S·nanobatch/B_tok)·
    B_tok·N_TP/N ≥ L·ρ·B_tok·N_TP/N (`batch_share_floor`): the passes take at least
    L·(α·ρ·B_tok·N_TP/N + β). The layout's pair is among those minimized over. α and β come
    from `_tensor_parallel_terms`, kept per network for the pairs of a power of 2^8 that the
    clusters of a walk, and the sizes of a series, share: α = d_model·α_h + kv·α_kv +
    d_ff·α_f, every collective's bytes being in proportion to d_model (the hidden width and
    the QKV width's d_model), to the K/V width kv (the QKV width's 2·kv,
    `search.grid.grid_kv_width`) or to d_ff. Rounding (α·x + β is not the exact floating-point sequence of t_tp(x)): the
    walk compares with the slack `search.PRUNE_SLACK`.
    """
    if physics.is_paper:
        return 0.0
    s = shape.sparsity
    cp = _most_context_parallel(physics, opts, shape)
    # the most N_DP·N_PP
    ranks = shape.batch_tokens / float(s) if cp is None else float(cp * shape.batch_seqs)
    if physics.few_microbatches:  # m ≥ 1 only: N_PP ≤ L is all that bounds the pipeline
        ranks *= shape.n_layers
    q = n_gpu // math.gcd(n_gpu, s)
    t_min = q / ranks
    if t_min <= 1.0:
        return 0.0  # one tensor rank may do: no collective is certain
    cover = _tensor_parallel_cover(q)
    tp, per_hidden, per_kv, per_ffn, beta = _tensor_parallel_terms(
        floor_hardware(hw), physics.attention, physics.nic_striping, cover
    )
    keep = (q % tp == 0) & (tp >= t_min)
    if not keep.any():
        return 0.0  # no layout at all: nothing to bound
    kv = grid_kv_width(shape)
    alpha = (
        float(shape.d_model) * per_hidden[keep]
        + kv * per_kv[keep]
        + float(shape.d_ff) * per_ffn[keep]
    )
    share = batch_share_floor(physics, opts, shape)
    tokens = share * shape.batch_tokens * tp[keep].astype(np.float64) / n_gpu
    return shape.n_layers * float((alpha * tokens + beta[keep]).min())


def _tensor_parallel_cover(q: int) -> int:
    """The integer whose divisor pairs `tensor_parallel_floor_s` reads its terms for at q (N/N_EP):
    q itself, or for a power of two the next power of 2^8 at or above it, 2^62 past 2^56 (the
    largest whose pair products stay in int64), so that the clusters of a walk (q = 2^i)
    share a few tables."""
    if q & (q - 1) or q > 1 << 62:
        return q
    bits = -(-(q.bit_length() - 1) // 8) * 8
    return 1 << min(bits, 62)


@cached(maxsize=TENSOR_PARALLEL_TERMS_CACHE_SIZE)
def _tensor_parallel_terms(
    hw: HardwareSpec, attention: bool, striped: bool, cover: int
) -> tuple[NDArray[np.int64], Array, Array, Array, Array]:
    """For every (N_TPm, N_TPff) whose product N_TP divides `cover`: N_TP, and α_h, α_kv, α_f
    (s per token and unit of width) and β (s) such that one layer pass's tensor-parallel
    collectives on x tokens of a model of widths d_model, K/V width kv and d_ff = f, without
    recomputation, take (d_model·α_h + kv·α_kv + f·α_f)·x + β
    (`network.groups.tensor_parallel_s`, ring all-reduces: bytes in proportion to x and to one
    width over a level's bandwidth, plus hops times its latency). α_h is the pass at one token
    on levels without latency of a model whose hidden width is 1 (QKV 1) and MLP 0, α_kv of
    one whose QKV width is 2 and the rest 0, α_f of one whose MLP is 1 and the rest 0, β the
    pass at no tokens (no bytes: the widths do not enter), on the network striped as
    `physics.nic_striping` says (`striped`). Kept per (network, striping, cover), `hw` without
    its HBM (`floor_hardware`: the series of a sweep over HBM share them); read only."""
    divs = np.array(divisors(cover), dtype=np.int64)
    fits = divs[None, :] <= (cover // divs)[:, None]  # N_TPm·N_TPff ≤ cover, without overflow
    products = np.ones(fits.shape, dtype=np.int64)
    np.multiply(divs[:, None], divs[None, :], out=products, where=fits)
    model_at, ff_at = np.nonzero(fits & (cover % products == 0))
    tp_model, tp_ff = divs[model_at].astype(np.float64), divs[ff_at].astype(np.float64)
    hidden = TensorGroups(tp_model, tp_ff, np.ones_like(tp_model), 1.0, 0.0, 1.0)
    kv = dataclasses.replace(hidden, hidden=0.0, qkv=2.0)
    ffn = dataclasses.replace(hidden, hidden=0.0, ffn=1.0, qkv=0.0)
    levels = Levels.as_given(hw, striped)
    hop_free = Levels(levels.bandwidth, np.zeros_like(levels.latency), levels.sizes, levels.striped)
    none = np.zeros(tp_model.shape[0], dtype=np.int64)  # no recomputation: fewest collectives
    per_hidden = tensor_parallel_s(hop_free, hidden, none, attention)
    per_kv = tensor_parallel_s(hop_free, kv, none, attention)
    per_ffn = tensor_parallel_s(hop_free, ffn, none, attention)
    empty = dataclasses.replace(hidden, tokens=np.zeros_like(tp_model))
    beta = tensor_parallel_s(levels, empty, none, attention)
    tp = products[model_at, ff_at]
    for a in (tp, per_hidden, per_kv, per_ffn, beta):
        a.setflags(write=False)
    return tp, per_hidden, per_kv, per_ffn, beta


LAYOUT_FLOORS_CACHE_BYTES = 16 * 2**20
"""Bytes of per-row step floors (`layout_step_floors_s`) a process keeps, least recently used
out: the cluster sizes of the series that share a network and differ in HBM (docs/model.md
§9.4)."""


def layout_step_floors_s(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int = 0,
) -> Array | None:
    """`_layout_step_floors_s`, kept per GPU without its HBM (`floor_hardware`), network,
    physics, options, model, cluster size and N_TP unit, read only: the floors read neither
    the HBM's bandwidth nor its capacity, so the series of a sweep whose axes vary only those
    share them."""
    if physics.is_paper:
        return None
    return _layout_floors(floor_hardware(hw), physics, opts, shape, n_gpu, tp_unit)


@cached(maxsize=FLOOR_HARDWARE_CACHE_SIZE)
def floor_hardware(hw: HardwareSpec) -> HardwareSpec:
    """The hardware as the layout floors read it: HBM bandwidth and capacity 0 (neither enters
    a floor: its compute is launches, `grid.grid_layer_launches_s`, on a GPU with unbounded
    HBM, and FLOP over the matmul rate, `matmul_rate_flop_per_s`; its network times read the
    levels), so that a floor that read either would divide by 0 and fail loudly. Kept per
    hardware: the walk asks at every cluster size it bounds."""
    return first_equal(dataclasses.replace(hw, hbm_bandwidth_bytes_per_s=0.0, hbm_bytes=0.0))


def _layout_floors_set(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
) -> Array | None:
    """`_layout_step_floors_s`, read only."""
    out = _layout_step_floors_s(hw, physics, opts, shape, n_gpu, tp_unit)
    if out is not None:
        out.setflags(write=False)
    return out


def keep_layout_step_floors(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    sizes: tuple[int, ...],
    tp_unit: int = 0,
) -> None:
    """Compute the `layout_step_floors_s` of the cluster sizes `sizes` not yet kept in one
    pass over all their rows (`_sizes_step_floors_s`) and keep them: the walk asks for the
    sizes of a refinement pass one by one, and each size's floors alone cost mostly the
    fixed cost of their array operations (docs/model.md §9.4). Equal, bit for bit, to each
    size's own. Nothing when the first size's floors are kept already: a series before this
    one on the same model and network computed them, and most likely the others with them."""
    if physics.is_paper or not sizes:
        return
    hw = floor_hardware(hw)
    if _layout_floors.holds(hw, physics, opts, shape, sizes[0], tp_unit):
        return
    wanted = tuple(
        n for n in sizes if not _layout_floors.holds(hw, physics, opts, shape, n, tp_unit)
    )
    if len(wanted) < 2:
        return  # one size: as cheap on its own, when the walk asks
    for n_gpu, out in zip(
        wanted, _sizes_step_floors_s(hw, physics, opts, shape, wanted, tp_unit), strict=True
    ):
        if out is not None:
            out.setflags(write=False)
        _layout_floors.keep((hw, physics, opts, shape, n_gpu, tp_unit), out)


def _layout_floors_nbytes(floors: Array | None) -> int:
    """Bytes of a floor array."""
    return 0 if floors is None else floors.nbytes


_layout_floors = ByteBoundedMemo(
    _layout_floors_set, LAYOUT_FLOORS_CACHE_BYTES, _layout_floors_nbytes
)
register(f"{__name__}._layout_floors", _layout_floors, f"{LAYOUT_FLOORS_CACHE_BYTES} bytes")


def _layout_step_floors_s(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int = 0,
) -> Array | None:
    """A lower bound on the realistic step time (s) of each layout the search enumerates on
    n_gpu GPUs, per row of `enumeration.realistic_layout_rows` (before the memory check, so a
    superset of the candidates; with `tp_unit`, of its rows whose N_TP divides it); None when
    there is none, and under the paper's physics. The
    walk sets a cluster aside when the smallest exceeds the duration, and times only the
    candidates whose own bound does not (`search._realistic_choice`). `hw`'s bandwidths are at the
    physics' achieved fraction (`search.physics_hardware`), as `search.realistic` reads them.

    Each row is `step.pipeline.pipeline_step_s` of the row's own degrees and schedule with
      t_full ≥ max(C, T + K_ng) + E  (TP overlap on; C + T + E without it),
    t_p2p and t_dp exact (under `physics.dp_overlap` t_dp what of the reduction must outlast
    a stage's pass, `_exposed_reduction_floor_s`; else 0 with `overlap_dp`) and the optimizer step 0, where, per layer and microbatch on one GPU with e = S/N_EP local
    experts, C = K_e + e·6·W_l·b̂/N_TP / R (K_e the launches of a layer with e experts,
    `search.grid.grid_layer_launches_s`; W_l, R as in `step_floor_terms_s`; b̂ = 8·⌈b/8⌉ the
    nanobatch b padded to the tensor-core width when e = 1, b when e > 1) or, where more, the
    row's layer at unbounded HBM bandwidth (`search.grid.grid_layer_floor_s`), K_ng the launches
    of a layer's kernels other than its weight GEMMs (`search.grid.grid_non_gemm_launch_s`),
    T the tensor-parallel collectives and E the expert all-to-alls of the row without
    recomputation (`network.groups`, the arguments `search.realistic` passes).

    Proof. `search.realistic` times a candidate (a row that passed the memory check, under
    its recomputation mode) as pipeline_step_s of t_full = t_layer + t_tp' + t_ep (its layer
    on the GPU's e·b tokens, `search.grid.grid_layer_work`), with the same p2p sends and
    (without `overlap_dp` or `physics.dp_overlap`) the same gradient all-reduce as here, an
    exposed reduction ≥ 0 with `overlap_dp` and, with `dp_overlap` (which takes its place
    where both are set), one whose step is at least the floor's (`_exposed_reduction_floor_s`), and an optimizer step ≥ 0; the step never decreases in
    any of these (`step.pipeline`'s module docstring). t_layer ≥ C (`step_floor_terms_s`:
    launches plus weight FLOP over the matmul rate, each call's FLOP padded,
    `compute.matmul.matmul_flop`: ≥ 2·d1·d2·b̂ for its b tokens; the e experts' on b tokens
    each, or (1 + x)·b ≥ b on the busiest expert rank (`compute.experts`), the projections on e·b, padded to at least b̂ when e = 1 and at least e·b always;
    recomputation and the ring only add), and t_layer ≥ the layer at unbounded HBM bandwidth
    (`grid_layer_floor_s`: the same shard's layer, every HBM term at its least). With TP
    overlap t_tp' = max(t_tp − t_gemm, 0) (or t_tp, where `tp_overlap_in_domain` exposes it), and t_layer − t_gemm ≥ K_ng (the layer's
    forward and backward hold its GEMMs' and its other kernels', each at least its launches,
    which run once a layer whatever e, and a rerun reruns at least the GEMMs it counts:
    `candidates._layer_parts`, `grid_non_gemm_launch_s`), so t_layer + t_tp' ≥ max(C,
    t_tp + K_ng); without overlap the sum is ≥ C + t_tp. t_tp ≥ T
    and t_ep ≥ E: recomputation only adds collectives (`network.groups.collectives_per_layer`,
    the same per-collective times). A row `tp_in_domain` rejects is inf, as the search's.
    The bound is computed by another floating-point sequence than the step: the walk compares
    it with the slack `search.PRUNE_SLACK`.
    """
    if physics.is_paper:
        return None
    return _sizes_step_floors_s(hw, physics, opts, shape, (n_gpu,), tp_unit)[0]


def _sizes_step_floors_s(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    sizes: tuple[int, ...],
    tp_unit: int,
) -> list[Array | None]:
    """`_layout_step_floors_s` of each cluster size of `sizes`, computed over the rows of all
    of them at once (`FloorRows` of the sizes): every term is elementwise in the rows, so each
    size's floors are its own, bit for bit; each a new array. The layer term (compute, the
    tensor-parallel collectives) reads only a row's shard, so it is computed once per distinct
    shard and gathered: the same values, on a tenth of the rows."""
    r = _floor_rows(shape, sizes, opts, physics, tp_unit)
    if r is None:
        return [None] * len(sizes)
    levels = Levels.as_given(hw, physics.nic_striping)
    # the layer term per shard (`FloorRows.shards`), each row's gathered
    compute = grid_layer_launches_s(hw, physics, shape, r.shard_local) + r.shard_work / (
        matmul_rate_flop_per_s(hw, physics)
    )
    compute = np.maximum(compute, grid_layer_floor_s(hw, physics, shape, r.shards))
    t_tp = tensor_parallel_s(levels, r.shard_groups, r.shard_none, physics.attention)
    if opts.overlap_tp:  # the collectives past the GEMMs, beside the rest of the layer
        layer = np.maximum(compute, t_tp + grid_non_gemm_launch_s(hw, physics, shape))
    else:
        layer = compute + t_tp
    t_ep = expert_all_to_all_s(levels, r.none, r.ep, r.ep_span, r.dispatch)
    t_p2p = pipeline_send_s(levels, r.message, r.tp, r.every, r.pp, r.interleave, r.async_p2p)
    fp8_gather = fp8_weights_only(hw, physics)
    t_full = layer[r.shard_of] + t_ep
    if physics.dp_overlap:  # what outlasts a stage's pass (`distributed_optimizer_exposed_s`)
        t_dp = _exposed_reduction_floor_s(physics, levels, r, fp8_gather, r.stages.full * t_full)
    elif opts.overlap_dp:  # exposed part ≥ 0 (`step.assembly`)
        t_dp = np.zeros_like(r.tp)
    else:
        t_dp = gradient_allreduce_s(levels, r.gradient, r.replicated, r.expert)
        if fp8_gather:  # sharded: the reduce-scatter at ≥ 16 bits, the all-gather at 8
            sharded = np.full(r.tp.shape, physics.zero_stage >= 1)
            t_dp = reduction_total_s(
                t_dp, _fp8_gather_s(levels, r, r.replicated, r.expert), sharded
            )
    zero = np.zeros_like(r.tp)
    step = pipeline_step_s(r.stages, t_full, zero, r.m, r.interleave, r.zb, t_p2p, t_dp, None)
    out: Array = step.t_step_s
    if physics.tp_in_domain and hw.level_sizes:  # the group inside the fastest level
        level0 = np.repeat(
            [float(adjusted_level_sizes(hw.level_sizes, n)[0]) for n in sizes], r.counts
        )
        inside = (r.tp <= level0) & (np.mod(level0, r.tp) == 0.0)  # aligned: never straddling
        out = np.where(inside, out, np.inf)
    if len(sizes) == 1:
        return [out]
    ends = np.cumsum(r.counts).tolist()
    return [out[end - n : end].copy() if n else None for n, end in zip(r.counts, ends, strict=True)]


@dataclass(frozen=True, slots=True)
class FloorRows:
    """What `layout_step_floors_s` reads of the rows of one or more cluster sizes beside the
    GPU and the network, per row of `enumeration.realistic_layout_rows` (each size's rows in
    turn, `counts` of them): kept per (model, cluster sizes, options, physics, N_TP unit) for
    every GPU and network (`_floor_rows`)."""

    counts: tuple[int, ...]
    """Each size's rows, in the order of the sizes (0: none)."""

    tp: Array
    pp: Array
    ep: Array
    m: Array
    zb: NDArray[np.bool_]
    interleave: Array
    shard_local: Array
    """S/N_EP, the GPU's local experts, per shard (row of `shards`)."""
    shard_work: Array
    """e·6·W_l·b̂/N_TP: the weight FLOP of a layer pass on the GPU (`layout_step_floors_s`),
    per shard."""
    shard_groups: TensorGroups
    """The tensor-parallel groups of a layer pass, per shard."""
    shard_none: NDArray[np.int64]
    """No recomputation, per shard."""
    none: NDArray[np.int64]
    """No recomputation: the fewest collectives."""
    ep_span: Array
    message: Array
    dispatch: Array
    every: Array
    async_p2p: NDArray[np.bool_]
    stages: StageLayers
    gradient: GradientGroups
    replicated: Array
    """Gradients reduced over the dense group: all a GPU holds."""
    expert: Array | None
    """The same over the expert-data-parallel group (None for a dense model)."""
    shards: NDArray[np.int64]
    """Distinct (N_TPm, N_TPff, nanobatch, local experts) of the rows: what their layers'
    times, weight FLOP and tensor-parallel collectives depend on (`search.grid.table_shards`)."""
    shard_of: NDArray[np.intp]
    """Each row's index in `shards`."""


def _floor_rows_nbytes(rows: FloorRows | None) -> int:
    """Bytes of a row set's arrays."""
    if rows is None:
        return 0
    groups = rows.shard_groups
    arrays = [groups.tp_model, groups.tp_ff, groups.tokens, rows.stages.full]
    return arrays_nbytes(rows) + sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def _floor_row_set(
    shape: ModelShape,
    sizes: tuple[int, ...],
    opts: SearchOptions,
    physics: Physics,
    tp_unit: int,
) -> FloorRows | None:
    """`FloorRows` of the cluster sizes `sizes` uncached; None without rows."""
    tables: list[NDArray[np.int64]] = []
    rings: list[NDArray[np.int64] | None] = []
    counts: list[int] = []
    for n in sizes:
        rows = realistic_layout_rows(shape, n, opts, physics, tp_unit)
        counts.append(0 if rows is None else rows[0].shape[0])
        if rows is not None:
            tables.append(rows[0])
            rings.append(rows[1])
    if not tables:
        return None
    table = tables[0] if len(tables) == 1 else np.concatenate(tables)
    with_cp = [c for c in rings if c is not None]
    assert len(with_cp) in (0, len(rings))  # the physics tries context parallelism or not
    cps = np.concatenate(with_cp) if with_cp else None
    dp, tpm, tpff, pp, ep, m, zero_bubble, nano = np.array(table.T, dtype=np.float64, order="C")
    zb = zero_bubble > 0.0
    interleave = interleave_degrees(pp, zb, opts.interleaving, shape.n_layers, m)
    tp = tpm * tpff
    ring = cps is not None and physics.attention  # the EP span counts c as `search.realistic`
    cp = cps.astype(np.float64) if ring and cps is not None else np.ones_like(tp)
    local = float(shape.sparsity) / ep  # N_EP = gcd(N, S) divides S: exact
    tokens = nano * local
    d = float(shape.d_model)
    message = WORD_BYTES * tokens * d
    params = grid_params_per_gpu(physics, shape, tp, pp, ep)
    dense_dp = dp * ep
    span = tp * dense_dp  # the data-parallel group's ranks sit at stride N_TP
    expert = None if shape.sparsity == 1 else params.expert
    layers = shape.n_layers / pp
    shards, shard_of = table_shards(table, shape.sparsity)
    s_tpm, s_tpff, s_nano, s_local = np.array(shards.T, dtype=np.float64, order="C")
    padded = TENSOR_CORE_WIDTH * np.ceil(s_nano / TENSOR_CORE_WIDTH)  # tokens a GEMM is charged
    # with more than one local expert the projections run once on local·nano tokens, whose
    # padding can be less than local times nano's: their tokens unpadded
    charged = np.where(s_local == 1.0, padded, s_nano)
    per_expert = layer_weight_flop_per_token(physics, shape) * charged / (s_tpm * s_tpff)
    s_tokens = s_nano * s_local
    kv = grid_kv_width(shape)
    groups = TensorGroups(s_tpm, s_tpff, s_tokens, d, float(shape.d_ff), d + 2.0 * kv)
    return FloorRows(
        counts=tuple(counts),
        tp=tp,
        pp=pp,
        ep=ep,
        m=m,
        zb=zb,
        interleave=interleave,
        shard_local=s_local,
        shard_work=s_local * per_expert,
        shard_groups=groups,
        shard_none=np.zeros(s_local.shape, dtype=np.int64),
        none=np.zeros(tp.shape, dtype=np.int64),
        ep_span=tp * cp * ep,
        message=message,
        dispatch=message / sequence_parallel_degree(physics, tpm, tpff),
        every=np.repeat(np.asarray(sizes, dtype=np.float64), counts),
        async_p2p=np.full(tp.shape, opts.overlap_pp_ep),
        stages=StageLayers(layers, layers, float(shape.n_layers)),
        gradient=GradientGroups(dense_dp, span, dp, span),
        replicated=params.replicated,
        expert=expert,
        shards=shards,
        shard_of=shard_of,
    )


FLOOR_ROWS_CACHE_BYTES = 64 * 2**20
"""Bytes of `FloorRows` a process keeps, least recently used out: the cluster sizes of the
models a sweep's GPUs and networks share (docs/model.md §9.4)."""
_floor_rows = ByteBoundedMemo(_floor_row_set, FLOOR_ROWS_CACHE_BYTES, _floor_rows_nbytes)
register(f"{__name__}._floor_rows", _floor_rows, f"{FLOOR_ROWS_CACHE_BYTES} bytes")


def _fp8_gather_s(levels: Levels, r: FloorRows, replicated: Array, expert: Array | None) -> Array:
    """The all-reduce of `replicated` and `expert` parameters (all a row's GPU holds, or a
    bucket's, `FloorRows`) at 1 byte a weight, whose half is their all-gather where the weights
    are held in FP8 only: the candidates' (`search.realistic._gathered`,
    `step.assembly.Schedule.gather_width`), from the same values."""
    half = None if expert is None else 0.5 * expert
    out: Array = gradient_allreduce_s(levels, r.gradient, 0.5 * replicated, half)
    return out


def _reductions_s(
    physics: Physics,
    levels: Levels,
    r: FloorRows,
    fp8_gather: bool,
    replicated: Array,
    expert: Array | None,
) -> tuple[Array, Array]:
    """(t, t'): the all-reduce of `replicated` and `expert` parameters (one row per row of the
    rows, or a stack of such rows, each reduced alike) over the rows' groups at
    the width the gradients are reduced at (`step.assembly.gradient_reduction_s` under
    `physics.grad_reduce_fp32`) and at the width the parameters are gathered at (1 byte a
    weight with `fp8_gather`, `_fp8_gather_s`): `step.assembly.step_comm`'s t_grad and t_gather
    (of a bucket: t_grad_bucket and t_gather_bucket), from the same values."""
    t_reduce = gradient_allreduce_s(levels, r.gradient, replicated, expert)
    t_grad = t_reduce
    if physics.grad_reduce_fp32:
        wide = np.ones(r.tp.shape, dtype=bool)
        params = ParamsPerGpu(replicated, np.zeros_like(r.tp) if expert is None else expert)
        t_grad = gradient_reduction_s(levels, r.gradient, params, expert, wide)
    t_gather = _fp8_gather_s(levels, r, replicated, expert) if fp8_gather else t_reduce
    return t_grad, t_gather


def _exposed_reduction_floor_s(
    physics: Physics, levels: Levels, r: FloorRows, fp8_gather: bool, stage_pass_s: Array
) -> Array:
    """A lower bound on the gradient reduction a realistic candidate exposes under
    `physics.dp_overlap` (`step.assembly.distributed_optimizer_exposed_s`), as the step floor
    adds it to the pipeline of the row's floor x on t_full; `stage_pass_s` is X = F·x, F = L/N_PP
    the first stage's layers. From the same groups, parameters and buckets
    (`dp_bucket_params`, `FloorRows`) as the candidate's step (`search.realistic`), with t, t'
    the whole reduction at the gradients' and at the gathered width and t_b, t'_b a bucket's
    (`_reductions_s`, both in one pass):
      sharded:   max(max(t/2 − X, t_b/2) + t'_b/2,  t_b/2 + max(t'/2 − X, t'_b/2),
                     t/2 + t'/2 − X)
      unsharded: max(t − X, t_b)

    Proof. The candidate exposes E = max(t/2 − y, t_b/2) + max(t'/2 − z, t'_b/2) sharded
    (max(t − y, t_b) unsharded) with y = F·t_bwd and z = F·t_fwd, a microbatch's backward
    (its rerun included) and forward through the first stage, whose sum F·t_layer is at most
    X_c = F·t_full of the candidate (`step.assembly.step_from_comm`: t_bwd = t_layer −
    t_fwd). So y, z ≤ X_c, each maximum is at least its operands, and E is at least each
    term above at X = X_c; each term falls by at most F·δ when the candidate's t_full is
    δ larger, one X in it. The step's pipeline (`step.pipeline.pipeline_step_s` with t_last
    0: the floor's) rises by at least m·L_full·δ ≥ F·δ (m ≥ 1; the grid's stages are even,
    L_full = F), so the floor's pipeline at x plus a term at X = F·x is at most the candidate's
    pipeline plus that term at X_c, which is at most its step (t_full ≥ x,
    `_layout_step_floors_s`). Every operation but the subtractions rounds monotonically; the
    walk compares with the slack `search.PRUNE_SLACK`."""
    bucket = dp_bucket_params(r.gradient.dense)  # the whole gradient and one bucket's, at once
    replicated = np.stack([r.replicated, np.minimum(r.replicated, bucket)])
    expert = None if r.expert is None else np.stack([r.expert, np.minimum(r.expert, bucket)])
    (t, t_b), (t_prime, t_prime_b) = _reductions_s(
        physics, levels, r, fp8_gather, replicated, expert
    )
    x = stage_pass_s
    if physics.zero_stage < 1:
        unsharded: Array = np.maximum(t - x, t_b)
        return unsharded
    last, first = 0.5 * t_b, 0.5 * t_prime_b
    reduce, gather = 0.5 * t, 0.5 * t_prime
    out: Array = np.maximum(
        np.maximum(np.maximum(reduce - x, last) + first, last + np.maximum(gather - x, first)),
        reduce + gather - x,
    )
    return out
