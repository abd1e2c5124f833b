"""Time of one layer on one GPU: the paper's MLP block (spec §7), and the realistic layer of
a batch of rows (docs/model.md R.2, R.3, R.7), vectorized.

A row is one layout of one model: grid candidates (`search/grid.py`) and concrete runs
(`runs/training_run.py`) both describe their layers as `LayerWork` rows and get their
times from `layer_times_s`, the one implementation of a realistic layer's compute.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.attention import attention_core_s
from pipeline.model.compute.efficiency import (
    CallTraffic,
    call_terms_s,
    call_traffic,
    fp8_gemms,
    matmul_overhead_s,
    traffic_calls_s,
)
from pipeline.model.compute.matmul import (
    OnChipTraffic,
    matmul_time_s,
    on_chip_traffic,
    slowest_call_bound,
)
from pipeline.model.compute.memory_ops import (
    MemoryOp,
    OpBytes,
    OpTimes,
    fp8_amax_op,
    layer_op_bytes,
    layer_tensors,
    op_times_s,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.results import MatmulBound
from pipeline.model.records.switches import Physics

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class LayerWork:
    """One layer and one microbatch on one GPU, per row (arrays that broadcast together).

    Widths are the model's (h, f, kv = kv_heads · d_head, a heads); the shards follow from the
    tensor-parallel degrees: d_model over t_m, d_ff (and the QKV columns) over t_ff, the
    norms' and dropouts' tokens or columns over sp (docs/model.md R.3).
    """

    hidden: Array
    ffn: Array
    """f: the MLP's inner width (of one expert)."""
    kv_width: Array
    heads: Array
    seq_len: Array
    tp_model: Array
    tp_ff: Array
    sp: Array
    """Ways norms, dropouts and residual adds are split: t with sequence parallelism, N_TPm
    in the paper's 2-D layouts, 1 when replicated."""
    tokens: Array
    """Tokens of the microbatch on this GPU (after context parallelism): attention and norms."""
    expert_tokens: Array
    """Tokens each local MLP (expert) computes."""
    local_experts: Array
    """MLPs this GPU runs one after another: E/e experts, 1 for a dense layer."""
    mlp_matrices: int = 2
    """Weight matrices of an MLP: 2 (GeLU) or 3 (SwiGLU)."""
    top_k: float = 1.0
    """Experts each token meets: its MLP activations come k times."""
    dropout: bool = True
    """Whether the layer runs dropout kernels and moves their masks (`memory_ops.layer_memory_ops`):
    a grid row's model's `ModelShape.dropout`, a run's `TransformerShape.dropout`
    (`runs.training_run.run_layer_work`)."""

    @property
    def tp(self) -> Array:
        """All tensor-parallel ways, t_m · t_ff."""
        out: Array = self.tp_model * self.tp_ff
        return out


@dataclass(frozen=True, slots=True)
class LayerTimes:
    """A layer's forward and backward times on one GPU, per row, by part: weight matmuls,
    attention core, memory-bound kernels (docs/model.md R.2, R.3)."""

    matmul_forward_s: Array
    matmul_backward_s: Array
    attention_forward_s: Array
    """The attention core's kernels (what a context-parallel ring overlaps with)."""
    attention_backward_s: Array
    ops: OpTimes

    @property
    def forward_s(self) -> Array:
        """Every forward kernel."""
        ops = self.ops
        out: Array = (self.matmul_forward_s + self.attention_forward_s) + (
            ops.norm_forward_s + ops.elementwise_forward_s
        )
        return out

    @property
    def backward_s(self) -> Array:
        """Every backward kernel."""
        ops = self.ops
        out: Array = (self.matmul_backward_s + self.attention_backward_s) + (
            ops.norm_backward_s + ops.elementwise_backward_s
        )
        return out

    @property
    def core_forward_s(self) -> Array:
        """The attention core's forward, its memory-bound kernels included: what selective
        recomputation reruns (Korthikanti et al. 2022 §5)."""
        out: Array = self.attention_forward_s + self.ops.core_forward_s
        return out

    @property
    def non_gemm_s(self) -> Array:
        """Every kernel but the weight GEMMs, forward and backward: the attention core and
        the memory-bound kernels."""
        ops = self.ops
        out: Array = (self.attention_forward_s + self.attention_backward_s) + (
            (ops.norm_forward_s + ops.elementwise_forward_s)
            + (ops.norm_backward_s + ops.elementwise_backward_s)
        )
        return out

    def take(self, rows: NDArray[np.intp]) -> LayerTimes:
        """The times of rows `rows`, in that order."""
        ops = OpTimes(*(getattr(self.ops, f)[rows] for f in OpTimes.__slots__))
        return LayerTimes(
            self.matmul_forward_s[rows],
            self.matmul_backward_s[rows],
            self.attention_forward_s[rows],
            self.attention_backward_s[rows],
            ops,
        )

    def with_recompute_s(self, modes: NDArray[np.int64]) -> Array:
        """Layer time under each row's mode (index into `RECOMPUTE_ORDER`): forward, backward,
        and the forward run again (full: all of it; selective: the attention core's)."""
        return with_rerun_s(modes, self.forward_s, self.backward_s, self.core_forward_s)


def with_rerun_s(
    modes: NDArray[np.int64], forward_s: Array, backward_s: Array, core_forward_s: Array
) -> Array:
    """Forward, backward and the forward rerun under each row's mode (`rerun_forward_s`)."""
    out: Array = forward_s + backward_s + rerun_forward_s(modes, forward_s, core_forward_s)
    return out


def rerun_forward_s(modes: NDArray[np.int64], forward_s: Array, core_forward_s: Array) -> Array:
    """Forward time run again in the backward pass under each row's recomputation mode (index
    into `RECOMPUTE_ORDER`): full reruns the whole forward, selective the attention core's,
    none nothing (Korthikanti et al. 2022 §5)."""
    out: Array = np.where(modes == 2, forward_s, np.where(modes == 1, core_forward_s, 0.0))
    return out


def _projection_shapes(w: LayerWork) -> list[tuple[Array, Array]]:
    """(rows, cols) of the attention projections on one GPU: QKV ((h + 2kv)/t_ff, h/t_m),
    column-parallel, and the output (h/t_m, h/t_ff), row-parallel (Shoeybi et al. 2019)."""
    h_m = w.hidden / w.tp_model
    return [((w.hidden + 2.0 * w.kv_width) / w.tp_ff, h_m), (h_m, w.hidden / w.tp_ff)]


def _mlp_shapes(w: LayerWork) -> list[tuple[Array, Array]]:
    """(rows, cols) of one MLP on one GPU: up (and gate) ((k − 1)·f/t_ff, h/t_m), column-parallel,
    and down (h/t_m, f/t_ff), row-parallel."""
    h_m = w.hidden / w.tp_model
    return [((w.mlp_matrices - 1) * w.ffn / w.tp_ff, h_m), (h_m, w.ffn / w.tp_ff)]


@dataclass(frozen=True, slots=True)
class LayerTraffic:
    """What a layer's times read of its rows beside the GPU's rates (`layer_traffic`): its
    weight matmul calls' traffic, (matrices, forward / activation gradient / weight gradient,
    rows...) (`efficiency.call_traffic`), and its memory-bound kernels' bytes (None without
    `physics.memory_bound_ops`). Both read of the GPU only its sizes (L2, registers, SMs), so
    GPUs that differ in bandwidths or clock share them (`search.grid.grid_layer_times_s`)."""

    calls: CallTraffic
    ops: OpBytes | None


def layer_traffic(hw: HardwareSpec, physics: Physics, w: LayerWork) -> LayerTraffic:
    """`LayerTraffic` of each row of `w`: each weight matrix's forward, activation-gradient and
    weight-gradient calls, the projections (with `physics.attention`) on the microbatch's
    tokens and each local MLP on its own tokens (element-wise arithmetic: batching changes no
    value), and the kernels of `memory_ops.layer_op_bytes`, the FP8 amax pass among them under
    current scaling (`layer_fp8_amax_op`)."""
    n = _rows(w)
    ops = None
    if physics.memory_bound_ops:
        split = (w.sp, w.tp_ff, w.tp)
        x = layer_tensors(w.tokens, w.hidden, w.ffn, w.kv_width, w.heads, w.seq_len, split, w.top_k)
        extra = (layer_fp8_amax_op(physics, w),) if current_scaling(hw, physics) else ()
        ops = layer_op_bytes(x, physics.fusion, physics.attention, n, w.dropout, extra)
    return LayerTraffic(layer_call_traffic(hw, physics, w), ops)


def current_scaling(hw: HardwareSpec, physics: Physics) -> bool:
    """Whether the layer's FP8 GEMMs scale their operands by the current step's amax
    (`physics.fp8_current_scaling` under FP8 GEMMs, `efficiency.fp8_gemms`)."""
    return physics.fp8_current_scaling and fp8_gemms(hw, physics)


def layer_fp8_amax_op(physics: Physics, w: LayerWork) -> MemoryOp:
    """`memory_ops.fp8_amax_op` of a layer: the elements of each weight GEMM's input (forward)
    and output gradient (backward) on one GPU, over the calls of `_weight_matrices`; one kernel
    per weight matrix, the local experts' together (a grouped GEMM's)."""
    mats = _weight_matrices(physics, w)
    inputs = functools.reduce(np.add, [tokens * calls * cols for _, cols, tokens, calls in mats])
    grads = functools.reduce(np.add, [tokens * calls * rows for rows, _, tokens, calls in mats])
    return fp8_amax_op(inputs, grads, len(mats))


def _weight_matrices(physics: Physics, w: LayerWork) -> list[tuple[Array, Array, Array, Array]]:
    """(rows, cols, tokens of a call, calls on the GPU) of each weight matrix of the layer: the
    projections (with `physics.attention`) once on the microbatch's tokens, each MLP matrix once
    per local expert on that expert's tokens."""
    proj = _projection_shapes(w) if physics.attention else []
    one = np.ones(())
    return [(d1, d2, w.tokens, one) for d1, d2 in proj] + [
        (d1, d2, w.expert_tokens, w.local_experts) for d1, d2 in _mlp_shapes(w)
    ]


def layer_call_traffic(hw: HardwareSpec, physics: Physics, w: LayerWork) -> CallTraffic:
    """The weight matmul calls' part of `layer_traffic`: (matrices, forward / activation
    gradient / weight gradient, rows...)."""
    n = _rows(w)
    mats = _weight_matrices(physics, w)
    d1s = np.empty((len(mats), 3, *n))
    d2s = np.empty((len(mats), 3, *n))
    bs = np.empty((len(mats), 3, *n))
    wgs = np.zeros((len(mats), 3, *n), dtype=bool)
    wgs[:, 2] = True
    for i, (d1, d2, b, _) in enumerate(mats):  # forward, activation gradient, weight gradient
        d1s[i, 0], d1s[i, 1], d1s[i, 2] = d1, d2, d1
        d2s[i, 0], d2s[i, 1], d2s[i, 2] = d2, d1, d2
        bs[i] = b
    return call_traffic(hw, physics, d1s, d2s, bs, wgs)


def traffic_rows(traffic: LayerTraffic) -> Array:
    """Each row's traffic as one row of floats (rows, values), for a store kept per row
    (`search.grid`): `traffic_of_rows` with this traffic as the template gives it back."""
    return np.concatenate([a.reshape(-1, a.shape[-1]).T for a in _traffic_arrays(traffic)], axis=1)


def traffic_of_rows(template: LayerTraffic, rows: Array) -> LayerTraffic:
    """The `LayerTraffic` of rows of `traffic_rows`' form (rows, values), laid out as
    `template` (a traffic of the same physics on a GPU of the same sizes)."""
    n = rows.shape[0]
    parts: list[Array] = []
    start = 0
    for a in _traffic_arrays(template):
        width = a.size // a.shape[-1]
        parts.append(
            np.ascontiguousarray(rows[:, start : start + width].T).reshape(*a.shape[:-1], n)
        )
        start += width
    waves = None if template.calls.waves is None else parts[4]
    ops = None
    if template.ops is not None:
        ops = OpBytes(template.ops.kinds, parts[-2], parts[-1])
    return LayerTraffic(
        CallTraffic(parts[0], OnChipTraffic(parts[1], parts[2], parts[3]), waves), ops
    )


def _traffic_arrays(traffic: LayerTraffic) -> list[Array]:
    """A traffic's arrays, rows last: the calls' HBM bytes, L2 bytes, shared-memory bytes,
    FLOP, waves (when set), then the kernels' forward and backward bytes (when set)."""
    calls = traffic.calls
    out = [
        calls.hbm_x_bytes,
        calls.on_chip.l2_x_bytes,
        calls.on_chip.smem_bytes,
        calls.on_chip.flop,
    ]
    if calls.waves is not None:
        out.append(calls.waves)
    if traffic.ops is not None:
        out += [traffic.ops.forward_bytes, traffic.ops.backward_bytes]
    return out


def _rows(w: LayerWork) -> tuple[int, ...]:
    """The shape of a `LayerWork`'s rows."""
    return np.broadcast_shapes(*(np.shape(a) for a in (w.hidden, w.tp_ff, w.tokens)))


def weight_matmul_s(
    hw: HardwareSpec,
    physics: Physics,
    w: LayerWork,
    calls: CallTraffic | None = None,
    hbm: Array | None = None,
) -> tuple[Array, Array]:
    """(forward, backward) time of a layer's weight matmuls on one GPU: each matrix runs its
    forward, activation-gradient and weight-gradient calls (`matmul_calls_s`, from their
    traffic `calls`, `layer_traffic`'s, computed when not given); the projections (with
    `physics.attention`) once, each of the row's local MLPs once. `hbm`: each row's HBM
    bandwidth (`records.hardware.row_hbm_bytes_per_s`)."""
    if calls is None:
        calls = layer_traffic(hw, physics, w).calls
    t = traffic_calls_s(hw, physics, calls, hbm=hbm)
    n_proj = 2 if physics.attention else 0  # QKV and output (`_projection_shapes`)
    fwd: Array = np.zeros(t.shape[2:])
    bwd: Array = np.zeros(t.shape[2:])
    for i in range(t.shape[0]):
        times = 1.0 if i < n_proj else w.local_experts
        fwd = fwd + times * t[i, 0]
        bwd = bwd + times * (t[i, 1] + t[i, 2])
    return fwd, bwd


def layer_matmul_bound(
    hw: HardwareSpec, physics: Physics, w: LayerWork, calls: CallTraffic | None = None
) -> MatmulBound:
    """The resource bounding the slowest weight-matmul call of the layers `w` (their rows
    together; one row, a layout's layer) as realistic physics times them (`weight_matmul_s`):
    each call of `layer_call_traffic` on its own tokens (`calls`, computed when not given),
    its terms as `efficiency.call_terms_s` gives them (efficiency, waves, FP8 narrowing,
    tensor-memory relief), `latency` when the per-call overhead (`efficiency.matmul_overhead_s`)
    exceeds that call's roofline (`matmul.slowest_call_bound`; docs/model.md R.2)."""
    if calls is None:
        calls = layer_call_traffic(hw, physics, w)
    terms = call_terms_s(hw, physics, calls)
    return slowest_call_bound(terms, matmul_overhead_s(hw, physics.efficiency))


def layer_times_s(
    hw: HardwareSpec,
    physics: Physics,
    w: LayerWork,
    traffic: LayerTraffic | None = None,
    hbm: Array | None = None,
) -> LayerTimes:
    """A realistic layer's times on one GPU, per row: weight matmuls (`weight_matmul_s`), the
    attention core with `physics.attention` (`attention_core_s`), memory-bound kernels with
    `physics.memory_bound_ops` (`memory_ops.op_times_s`); a part that is off takes 0.
    `traffic`: the rows' `layer_traffic` on a GPU of the same sizes, computed when not given
    (the same values: the same times bit for bit). `hbm`: each row's HBM bandwidth, when the
    rows are timed on GPUs that differ only in it (`records.hardware.row_hbm_bytes_per_s`:
    each row's times are those on its own GPU, bit for bit); None: `hw`'s."""
    if traffic is None:
        traffic = layer_traffic(hw, physics, w)
    mm_f, mm_b = weight_matmul_s(hw, physics, w, traffic.calls, hbm)
    zero = np.zeros_like(mm_f)
    a_f = a_b = zero
    if physics.attention:
        a_f, a_b = attention_core_s(
            hw, physics, w.tokens, w.seq_len, w.hidden, w.kv_width, w.heads, w.tp, hbm
        )
        if np.shape(a_f) != zero.shape or np.shape(a_b) != zero.shape:
            a_f, a_b = np.broadcast_to(a_f, zero.shape), np.broadcast_to(a_b, zero.shape)
    ops = OpTimes(zero, zero, zero, zero, zero, zero)
    if traffic.ops is not None:
        ops = op_times_s(hw, physics, traffic.ops, hbm)
    return LayerTimes(mm_f, mm_b, a_f, a_b, ops)


def layer_launch_times(hw: HardwareSpec, physics: Physics, w: LayerWork) -> LayerTimes:
    """The fixed part of each row's layer times, part by part: its kernel launches times their
    overheads (`efficiency.matmul_overhead_us` per matmul call and attention-core pass,
    `kernel_overhead_us` per memory-bound kernel), i.e. `layer_times_s` on a GPU with
    unbounded FLOP rate and bandwidths (F_eff, HBM, L2 and shared memory infinite).

    Every other term of `layer_times_s` is bytes or FLOP over one of those rates, ≥ 0, and
    becomes exactly 0 here; the rest are sums and maxima, non-decreasing in each term and
    rounded monotonically. So on the real GPU every part (and every sum of parts, forward_s +
    backward_s among them) is at least this one's for the same row, and rerunning a forward
    (recomputation) only adds to the layer (docs/model.md §9.4).
    """
    unbounded = dataclasses.replace(
        hw,
        max_clock_hz=math.inf,
        hbm_bandwidth_bytes_per_s=math.inf,
        l2_bandwidth_bytes_per_s=math.inf,
        fp8_flop_per_s=None,  # an FP8 peak over an infinite one is undefined; FLOP take 0 here
        fp8_u_eff_ratio=None,
    )
    return layer_times_s(unbounded, physics, w)


LayerCalls = tuple[Array, Array, Array, NDArray[np.bool_]]
"""(d1, d2, b, wg) of a block's matmul calls, call-major (`layer_matmul_calls`)."""


def layer_matmul_calls(d_model_shard: Array, d_ff_shard: Array, nanobatch: Array) -> LayerCalls:
    """The four distinct matmul calls of one MLP block per row, call-major (spec §7): d_ff ×
    d_model, d_model × d_ff, then the same two as weight gradients (`layer_matmul_time_s`)."""
    shards = np.stack(np.broadcast_arrays(d_model_shard, d_ff_shard, nanobatch), axis=1)
    dm, df, b = shards[:, 0], shards[:, 1], shards[:, 2]
    d1 = np.concatenate([df, dm, df, dm])
    d2 = np.concatenate([dm, df, dm, df])
    wg = np.repeat(np.array([False, False, True, True]), dm.size)
    return d1, d2, np.tile(b, 4), wg


def layer_on_chip_traffic(
    hw: HardwareSpec, d_model_shard: Array, d_ff_shard: Array, nanobatch: Array
) -> OnChipTraffic:
    """`on_chip_traffic` of a block's calls (`layer_matmul_calls`): what `layer_matmul_time_s`
    takes for a GPU of the same `matmul.on_chip_key`."""
    return on_chip_traffic(hw, *layer_matmul_calls(d_model_shard, d_ff_shard, nanobatch))


def layer_matmul_time_s(
    hw: HardwareSpec,
    d_model_shard: Array,
    d_ff_shard: Array,
    nanobatch: Array,
    on_chip: OnChipTraffic | None = None,
) -> Array:
    """t_layer: the six matmuls of one MLP block on one GPU, forward and backward (spec §7).

    W1 (df × dm): forward, activation gradient (transposed), weight gradient; W2 the
    transpose shapes. Summed ((W1f + W1a) + W1w) + ((W2f + W2a) + W2w) (spec §15.1).
    Element-wise: each row's time is the same whatever the other rows, so callers pass
    distinct shards (the search, `search.layouts`) and gather. `on_chip`, given, is
    `layer_on_chip_traffic` of these rows on a GPU of the same `matmul.on_chip_key` (the
    same values as computed here).
    """
    d1, d2, b, wg = layer_matmul_calls(d_model_shard, d_ff_shard, nanobatch)
    rows = d1.size // 4
    t = matmul_time_s(hw, d1, d2, b, wg, on_chip).reshape(4, rows)
    ff_by_model, model_by_ff, w1_grad, w2_grad = t
    t_layer: Array = ((ff_by_model + model_by_ff) + w1_grad) + (
        (model_by_ff + ff_by_model) + w2_grad
    )
    return t_layer
