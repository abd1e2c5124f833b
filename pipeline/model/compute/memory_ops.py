"""Memory-bound operators of a transformer layer: bytes read and written, and time on HBM.

Each operator is charged the bytes it reads plus the bytes it writes, 16-bit activations
(w = 2 bytes) and 1-byte dropout masks, and runs at a fraction of the HBM bandwidth (the
L2 bandwidth when its working set fits in useful L2), plus a fixed launch overhead per
kernel. Fusion decides which operators share a kernel and so skip an HBM round trip. A layer
without dropout runs no dropout kernel and moves no mask (`layer_memory_ops`' `dropout`).

Sources: Ivanov et al. 2021, "Data Movement Is All You Need" (MLSys, arXiv:2007.00072) for the
operator inventory of a BERT layer and its classes (tensor contraction, statistical
normalization, element-wise); Korthikanti et al. 2022 (arXiv:2205.05198) §4 for which
tensors each operator touches; Dao et al. 2022 (FlashAttention, arXiv:2205.14135) for
the flash attention core's HBM traffic. docs/model.md, "Realistic physics", tabulates them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from pipeline.model.records.hardware import HardwareSpec, row_hbm_bytes_per_s, useful_l2_bytes
from pipeline.model.records.switches import Efficiency, Fusion, Physics

Array = NDArray[np.float64]

WORD_BYTES = 2.0
"""16-bit activations and gradients."""
MASK_BYTES = 1.0
"""A dropout mask element (PyTorch stores bool/uint8 masks)."""
ADAM_STEP_BYTES_PER_PARAM = 30.0
"""Mixed-precision Adam step traffic per parameter: read fp32 gradient, master weight, m and v
(16 B), write master, m and v (12 B) and the 16-bit model copy (2 B) (Micikevicius et al.
2018, arXiv:1710.03740; Kingma & Ba 2015)."""


class OpClass(StrEnum):
    """Ivanov et al. 2021's operator classes, plus the optimizer step."""

    NORM = "norm"
    """Statistical normalizations: LayerNorm/RMSNorm and softmax."""
    ELEMENTWISE = "elementwise"
    """Biases, scaling, masks, dropout, activations, residual adds."""
    OPTIMIZER = "optimizer"


@dataclass(frozen=True, slots=True)
class MemoryOp:
    """One memory-bound kernel of a layer, forward and backward, on one GPU."""

    name: str
    op_class: OpClass
    forward_bytes: Array
    """Bytes read plus written by the forward kernel, per row."""
    backward_bytes: Array
    """Bytes read plus written by the backward kernel(s), per row."""
    kernels: int = 1
    """Kernel launches per pass (forward; the backward launches as many)."""
    attention_core: bool = False
    """Part of the attention core (rerun under selective recomputation)."""
    dropout: bool = False
    """A dropout kernel, which a layer without dropout does not run (`layer_memory_ops`)."""


@dataclass(frozen=True, slots=True)
class LayerTensors:
    """Element counts of the tensors one GPU's operators touch for one microbatch, per row."""

    hidden: Array
    """b·s·h/(cp·sp): split over sp ways (sequence parallelism: the t ranks; the paper's 2-D
    layouts: N_TPm), replicated otherwise."""
    ffn: Array
    """k·b·s·f / (cp·t_ff): the MLP's inner activation on this GPU, once per routed expert."""
    qkv: Array
    """b·s·(h + 2·kv) / (cp·t_ff): the fused QKV projection's output on this GPU."""
    scores: Array
    """b·(a/t)·s·(s/cp): attention scores and probabilities on this GPU."""


def layer_tensors(
    tokens: Array,
    hidden: Array,
    ffn: Array,
    kv_width: Array,
    heads: Array,
    seq_len: Array,
    split: tuple[Array, Array, Array],
    top_k: float = 1.0,
) -> LayerTensors:
    """Element counts per GPU for `tokens` tokens per microbatch (after context parallelism),
    with `split` = (sp, t_ff, t): the ways norms and dropout are split, the ways d_ff (and the
    QKV columns) are, and all tensor-parallel ways (Korthikanti et al. 2022 §4)."""
    sp, tp_ff, tp = split
    return LayerTensors(
        hidden=tokens * hidden / sp,
        ffn=top_k * (tokens * ffn / tp_ff),
        qkv=tokens * (hidden + 2.0 * kv_width) / tp_ff,
        scores=tokens * (heads / tp) * seq_len,
    )


def layernorm_ops(x: LayerTensors) -> list[MemoryOp]:
    """Two LayerNorms (or RMSNorms): forward reads x, writes y; backward reads x, dy, writes dx."""
    return [
        MemoryOp(f"norm{i}", OpClass.NORM, 2 * WORD_BYTES * x.hidden, 3 * WORD_BYTES * x.hidden)
        for i in (1, 2)
    ]


def dropout_op(name: str, elements: Array, core: bool = False) -> MemoryOp:
    """Dropout: forward reads x, writes y and the mask; backward reads dy and the mask, writes dx."""
    bytes_ = (2 * WORD_BYTES + MASK_BYTES) * elements
    return MemoryOp(name, OpClass.ELEMENTWISE, bytes_, bytes_, attention_core=core, dropout=True)


def eager_ops(x: LayerTensors) -> list[MemoryOp]:
    """Every operator its own kernel, as 2018-era PyTorch runs BERT (Ivanov et al. 2021, Fig. 2).

    The inventory is Ivanov et al.'s encoder layer: the softmax takes the 1/sqrt(d_head)
    scaling in the same kernel ("scaled softmax") and no mask is applied. Softmax reads
    scores, writes probabilities (backward: reads y, dy, writes dx); biases read and write their
    output (backward: the bias gradient reads dy); GeLU reads x and writes y (backward reads
    x and dy, writes dx); a residual add reads two tensors and writes one (its backward
    accumulates the branch gradient the same way).
    """
    w, ew = WORD_BYTES, OpClass.ELEMENTWISE
    return [
        *layernorm_ops(x),
        MemoryOp("softmax", OpClass.NORM, 2 * w * x.scores, 3 * w * x.scores, attention_core=True),
        dropout_op("attention_dropout", x.scores, core=True),
        MemoryOp("qkv_bias", ew, 2 * w * x.qkv, w * x.qkv),
        MemoryOp("proj_bias", ew, 2 * w * x.hidden, w * x.hidden),
        dropout_op("proj_dropout", x.hidden),
        MemoryOp("residual1", ew, 3 * w * x.hidden, 3 * w * x.hidden),
        MemoryOp("mlp_bias1", ew, 2 * w * x.ffn, w * x.ffn),
        MemoryOp("activation", ew, 2 * w * x.ffn, 3 * w * x.ffn),
        MemoryOp("mlp_bias2", ew, 2 * w * x.hidden, w * x.hidden),
        dropout_op("mlp_dropout", x.hidden),
        MemoryOp("residual2", ew, 3 * w * x.hidden, 3 * w * x.hidden),
    ]


def fused_ops(x: LayerTensors, dropout: bool = True) -> list[MemoryOp]:
    """Megatron-LM's fused kernels (Narayanan et al. 2021 §4.2): scale+mask+softmax,
    bias+GeLU, bias+dropout+residual-add; QKV bias in the GEMM epilogue; attention dropout
    on its own. Without `dropout` the bias+dropout+add kernels still run, as bias+add, and
    move no mask (PyTorch's dropout at p = 0 returns its input: no mask is drawn)."""
    w, ew = WORD_BYTES, OpClass.ELEMENTWISE
    mask = MASK_BYTES if dropout else 0.0
    bias_dropout_add_fwd = (3 * w + mask) * x.hidden
    bias_dropout_add_bwd = (2 * w + mask) * x.hidden + w * x.hidden
    return [
        *layernorm_ops(x),
        MemoryOp(
            "scale_mask_softmax",
            OpClass.NORM,
            2 * w * x.scores,
            3 * w * x.scores,
            attention_core=True,
        ),
        dropout_op("attention_dropout", x.scores, core=True),
        MemoryOp("bias_dropout_add1", ew, bias_dropout_add_fwd, bias_dropout_add_bwd),
        MemoryOp("bias_activation", ew, 2 * w * x.ffn, 3 * w * x.ffn),
        MemoryOp("bias_dropout_add2", ew, bias_dropout_add_fwd, bias_dropout_add_bwd),
    ]


def flash_ops(x: LayerTensors, dropout: bool = True) -> list[MemoryOp]:
    """Fused kernels with the attention core in on-chip memory: no s x s tensor in HBM
    (Dao et al. 2022); the core's Q, K, V, O traffic is charged to the attention time."""
    return [op for op in fused_ops(x, dropout) if not op.attention_core]


def fp8_amax_op(inputs: Array, output_grads: Array, matrices: int) -> MemoryOp:
    """The amax pass of FP8 current scaling (Transformer Engine's `Float8CurrentScaling`, NeMo
    25.04's "scaling factors computed in the current step"): each quantization reads its 16-bit
    tensor twice, once for its amax and once to cast, where delayed scaling reads it once
    (Transformer Engine user guide, "FP8 Delayed Scaling": "this reduces tensor reads per
    quantization from two to one"). So each weight GEMM's input (forward, `inputs` elements over
    the layer's GEMMs) and output gradient (backward, `output_grads`) is read once more, w bytes
    an element, one kernel per matrix each way. The cast itself is charged under neither recipe:
    FP8 GEMMs are timed as calibrated on delayed-scaling runs (docs/model.md R.11)."""
    return MemoryOp(
        "fp8_amax",
        OpClass.ELEMENTWISE,
        WORD_BYTES * inputs,
        WORD_BYTES * output_grads,
        kernels=matrices,
    )


def layer_memory_ops(x: LayerTensors, fusion: Fusion, dropout: bool = True) -> list[MemoryOp]:
    """The memory-bound kernels of one layer under a fusion choice; without `dropout` (a layer
    that trains without it) no dropout kernel runs and no mask is read or written."""
    if fusion is Fusion.NONE:
        ops = eager_ops(x)
    elif fusion is Fusion.FLASH:
        ops = flash_ops(x, dropout)
    else:
        ops = fused_ops(x, dropout)
    return ops if dropout else [op for op in ops if not op.dropout]


def op_bandwidth_fraction(eff: Efficiency, op_class: OpClass, fusion: Fusion) -> float:
    """The fraction of its peak bandwidth a kernel achieves: eager kernels per class, fused
    ones (and the optimizer step) one fraction."""
    if fusion is not Fusion.NONE or op_class is OpClass.OPTIMIZER:
        return eff.fused_bandwidth
    if op_class is OpClass.NORM:
        return eff.eager_norm_bandwidth
    return eff.eager_elementwise_bandwidth


def op_time_s(
    hw: HardwareSpec,
    eff: Efficiency,
    fraction: Array | float,
    kernels: Array | float,
    bytes_: Array,
    hbm: Array | None = None,
) -> Array:
    """t = bytes / achieved bandwidth + kernels · kernel overhead, one pass of an operator: its
    bandwidth the L2's when its bytes fit in useful L2, else the HBM's (`hbm`: each row's,
    `records.hardware.row_hbm_bytes_per_s`), times the achieved `fraction` of its class
    (`op_bandwidth_fraction`)."""
    peak = np.where(
        bytes_ <= useful_l2_bytes(hw), hw.l2_bandwidth_bytes_per_s, row_hbm_bytes_per_s(hw, hbm)
    )
    out: Array = bytes_ / (peak * fraction) + kernels * eff.kernel_overhead_s
    return out


class OpKind(NamedTuple):
    """What a memory-bound kernel's time reads of it beside its bytes (`MemoryOp`)."""

    op_class: OpClass
    kernels: int
    attention_core: bool


@dataclass(frozen=True, slots=True)
class OpBytes:
    """A layer's memory-bound kernels per row, in the inventory's order (`layer_op_bytes`):
    their kinds and bytes, forward and backward, (kernels, rows...). What `op_times_s` reads
    beside the GPU's L2 size and rates."""

    kinds: tuple[OpKind, ...]
    forward_bytes: Array
    backward_bytes: Array


def layer_op_bytes(
    x: LayerTensors,
    fusion: Fusion,
    attention: bool,
    shape: tuple[int, ...],
    dropout: bool = True,
    extra: tuple[MemoryOp, ...] = (),
) -> OpBytes:
    """The kernels of `layer_memory_ops` under `fusion` (with or without `dropout`) with rows
    of `shape`, then `extra` (the FP8 amax pass, `fp8_amax_op`); without `attention` the
    attention core's kernels (softmax, attention dropout) left out."""
    ops = [op for op in layer_memory_ops(x, fusion, dropout) if attention or not op.attention_core]
    ops += extra
    return OpBytes(
        tuple(OpKind(op.op_class, op.kernels, op.attention_core) for op in ops),
        _stacked([op.forward_bytes for op in ops], shape),
        _stacked([op.backward_bytes for op in ops], shape),
    )


def _stacked(values: list[Array], shape: tuple[int, ...]) -> Array:
    """`values` broadcast to `shape` and stacked, (len(values), *shape): `np.stack` of their
    `np.broadcast_to`, written row by row into one array (a layer's dozen kernels per call:
    the views cost more than the copies)."""
    out: Array = np.empty((len(values), *shape), dtype=np.result_type(*values))
    for row, value in zip(out, values, strict=True):
        row[...] = value
    return out


@dataclass(frozen=True, slots=True)
class OpTimes:
    """A layer's memory-bound kernels on one GPU, per row: forward and backward by class, and
    the forward of those in the attention core (rerun under selective recomputation)."""

    norm_forward_s: Array
    norm_backward_s: Array
    elementwise_forward_s: Array
    elementwise_backward_s: Array
    core_norm_forward_s: Array
    core_elementwise_forward_s: Array

    @property
    def core_forward_s(self) -> Array:
        """The attention core's memory-bound kernels, forward."""
        out: Array = self.core_norm_forward_s + self.core_elementwise_forward_s
        return out


def op_times_s(
    hw: HardwareSpec, physics: Physics, ops: OpBytes, hbm: Array | None = None
) -> OpTimes:
    """Each class's time of a layer's memory-bound kernels `ops` (`layer_op_bytes`) under the
    physics' fusion, every kernel's `op_time_s` summed in the inventory's order (docs/model.md
    R.3); `hbm`: each row's HBM bandwidth (`records.hardware.row_hbm_bytes_per_s`)."""
    eff, fusion = physics.efficiency, physics.fusion
    column = (len(ops.kinds), *(1,) * (ops.forward_bytes.ndim - 1))
    fraction = np.array([op_bandwidth_fraction(eff, k.op_class, fusion) for k in ops.kinds])
    kernels = np.array([float(k.kernels) for k in ops.kinds])
    fraction, kernels = fraction.reshape(column), kernels.reshape(column)
    forward = op_time_s(hw, eff, fraction, kernels, ops.forward_bytes, hbm)
    backward = op_time_s(hw, eff, fraction, kernels, ops.backward_bytes, hbm)
    zero: Array = np.zeros(ops.forward_bytes.shape[1:])
    fwd = {OpClass.NORM: zero, OpClass.ELEMENTWISE: zero}
    bwd = dict(fwd)
    core = dict(fwd)
    for kind, f, b in zip(ops.kinds, forward, backward, strict=True):
        fwd[kind.op_class] = fwd[kind.op_class] + f
        bwd[kind.op_class] = bwd[kind.op_class] + b
        if kind.attention_core:
            core[kind.op_class] = core[kind.op_class] + f
    norm, ew = OpClass.NORM, OpClass.ELEMENTWISE
    return OpTimes(fwd[norm], bwd[norm], fwd[ew], bwd[ew], core[norm], core[ew])


def optimizer_step_bytes(params_updated: Array) -> Array:
    """Adam step traffic on one GPU: 30 B per parameter it updates (`ADAM_STEP_BYTES_PER_PARAM`)."""
    out: Array = ADAM_STEP_BYTES_PER_PARAM * params_updated
    return out


def optimizer_step_time_s(hw: HardwareSpec, eff: Efficiency, params_updated: Array) -> Array:
    """Optimizer step: its bytes at the fused HBM bandwidth, plus one multi-tensor kernel."""
    bytes_ = optimizer_step_bytes(params_updated)
    out: Array = (
        bytes_ / (hw.hbm_bandwidth_bytes_per_s * eff.fused_bandwidth) + eff.kernel_overhead_s
    )
    return out
