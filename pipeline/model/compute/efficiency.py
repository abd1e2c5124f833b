"""The matmul roofline under realistic physics: the paper's terms (docs/model.md §5) with a
framework's achieved matmul rate, its per-call overhead, and Blackwell's tensor memory
(docs/model.md, "Realistic physics", R.2 and R.8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.matmul import (
    WORD_BYTES,
    MatmulTerms,
    OnChipTraffic,
    hbm_traffic_bytes,
    on_chip_traffic,
    roofline_s,
    traffic_terms_s,
)
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.switches import STACK_2025, Efficiency, Physics, Precision

Array = NDArray[np.float64]

BLACKWELL_SMEM_RELIEF = 2.0
"""Tensor memory and 2-SM MMA halve the shared-memory traffic per FLOP of a large tile
(accumulators live in TMEM; each SM of a CTA pair loads half of the B operand): NVIDIA
Blackwell architecture technical brief (2024), "fifth-generation Tensor Cores"."""


FP8_BYTES = 1.0
"""Bytes of an FP8 (E4M3 or E5M2) GEMM operand (Micikevicius et al. 2022, arXiv:2209.05433)."""


TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD = 64.0
"""Blackwell's fifth-generation tensor cores (64 FLOP per clock per thread in conf/hardware/b200.yaml)
come with tensor memory; earlier generations (at most 32) do not."""


def has_tensor_memory(hw: HardwareSpec) -> bool:
    """True for Blackwell-class hardware: tensor memory and 2-SM MMA instructions."""
    return hw.flop_per_clock_per_thread >= TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD


def matmul_efficiency(hw: HardwareSpec, physics: Physics) -> float:
    """The fraction of the paper's large-matmul rate (u_eff · peak) a layer's weight GEMMs and
    attention core run at under realistic physics: `efficiency.matmul` (the 2021-2024 stacks'
    fit, docs/validation.md), times the GPU's `HardwareSpec.matmul_speedup_2025` under
    `physics.stack: 2025` where its preset gives one (H100, fitted on NVIDIA's 2025 H100 runs;
    docs/model.md R.9). The software generation sets it, not the run: the same GPU ran NVIDIA's
    2025 recipes' GEMMs faster than its 2024 sources'. A product, so that varying
    `efficiency.matmul` varies every GPU's GEMMs under either stack."""
    speedup = hw.matmul_speedup_2025
    if physics.stack == STACK_2025 and speedup is not None:
        return physics.efficiency.matmul * speedup
    return physics.efficiency.matmul


def precision_speedup(hw: HardwareSpec, physics: Physics) -> float:
    """How much faster a layer's weight GEMM computes than at the 16-bit peak under
    `physics.precision: fp8` on a GPU with an FP8 peak (`HardwareSpec.fp8_flop_per_s`, the
    datasheet's dense rate, twice the 16-bit one on H100, B200 and MI300X): the sustained FP8
    matmul rate over the 16-bit one, (F_fp8 / F_peak) · r with r = `HardwareSpec.fp8_u_eff_ratio`
    (1 when unset); else 1 (docs/model.md R.11). 1.77 on H100, whose FP8 matmuls reach a
    smaller fraction of their peak than its 16-bit ones (r = 0.883); 1.97-1.98 on B200 and
    GB200.

    `matmul_efficiency` applies to both widths: Transformer Engine runs them through the same
    cuBLASLt kernels.
    """
    if physics.precision is not Precision.FP8 or hw.fp8_flop_per_s is None:
        return 1.0
    ratio = 1.0 if hw.fp8_u_eff_ratio is None else hw.fp8_u_eff_ratio
    return hw.fp8_flop_per_s * ratio / peak_flop_per_s(hw)


def fp8_gemms(hw: HardwareSpec, physics: Physics) -> bool:
    """Whether a transformer layer's weight GEMMs run in FP8: `physics.precision: fp8` on a GPU
    with an FP8 peak (`precision_speedup` > 1). Their time (`matmul_calls_s`) and the bytes a
    GPU holds (`memory.gpu_memory`: FP8 weight copies, 1-byte GEMM inputs) follow this one
    rule, for grid candidates and concrete runs alike (docs/model.md R.11)."""
    return precision_speedup(hw, physics) > 1.0


def fp8_runs_16bit(hw: HardwareSpec, physics: Physics) -> bool:
    """Whether `physics.precision: fp8` was asked of a GPU whose GEMMs cannot run it (no FP8
    peak, `fp8_gemms` False): accepted beside other extensions, they run 16-bit, which a run's
    summary then says (docs/model.md R.11)."""
    return physics.precision is Precision.FP8 and not fp8_gemms(hw, physics)


def fp8_weights_only(hw: HardwareSpec, physics: Physics) -> bool:
    """Whether grid layouts hold their weights in FP8 only (`physics.fp8_params`, Megatron-Core's
    `fp8_param_gather`): FP8 GEMMs (`fp8_gemms`) with the switch on and a sharded optimizer
    (`physics.zero_stage` ≥ 1: Megatron-LM allows `--fp8-param-gather` only with the
    distributed optimizer or FSDP). Their memory (no FP8 copies beside a 16-bit weight) and
    their parameter all-gather (1 byte a weight) follow it (docs/model.md R.11)."""
    return holds_fp8_weights(fp8_gemms(hw, physics), physics)


def holds_fp8_weights(fp8: bool, physics: Physics) -> bool:
    """`fp8_weights_only` on a GPU whose weight GEMMs run in FP8 or not (`fp8`)."""
    return fp8 and physics.fp8_params and physics.zero_stage >= 1


WAVE_TILE = (256.0, 128.0)
"""Output tile of one thread block of a large cuBLAS GEMM, rows × columns, either way round:
cuBLAS's most efficient tile, one thread block per SM on an A100, so a wave is one tile per SM
(NVIDIA, *Matrix Multiplication Background User's Guide*, DU-09799-001, 2023, §2.3 "Typical
Tile Dimensions In cuBLAS And Performance" and §3.2 "Wave Quantization")."""


def wave_quantization(hw: HardwareSpec, rows: Array, cols: Array) -> Array:
    """Arithmetic a GEMM with a rows × cols output does in whole waves, over its padded output
    (≥ 1): W · n_SM · T_r · T_c / (⌈rows/8⌉·8 · ⌈cols/8⌉·8), W = ⌈⌈rows/T_r⌉·⌈cols/T_c⌉ / n_SM⌉
    waves of `WAVE_TILE` tiles on n_SM = `hw.sms`, the tile turned whichever way needs fewer
    (NVIDIA's guide, §3.1-3.2: a partial tile or a partial last wave takes a full one's time)."""
    padded = (np.ceil(rows / 8.0) * 8.0) * (np.ceil(cols / 8.0) * 8.0)
    best: Array | None = None
    for t_r, t_c in (WAVE_TILE, WAVE_TILE[::-1]):
        waves = np.ceil(np.ceil(rows / t_r) * np.ceil(cols / t_c) / hw.sms)
        area: Array = waves * (hw.sms * t_r * t_c)
        best = area if best is None else np.minimum(best, area)
    assert best is not None
    out: Array = best / padded
    return out


def matmul_overhead_s(hw: HardwareSpec, eff: Efficiency) -> float:
    """Fixed time of one matmul kernel call: `efficiency.matmul_overhead_s`, or the hardware's
    `matmul_latency_s` (the paper's 4.5 µs) when the physics leaves it unset."""
    return hw.matmul_latency_s if eff.matmul_overhead_s is None else eff.matmul_overhead_s


@dataclass(frozen=True, slots=True)
class CallTraffic:
    """What `matmul_calls_s` reads of its calls beside the GPU's rates (`call_traffic`): their
    HBM bytes (`matmul.hbm_traffic_bytes`), their on-chip traffic and FLOP
    (`matmul.on_chip_traffic`) and their waves (`wave_quantization`; None without
    `physics.gemm_waves`). They read of the GPU only its sizes (L2, registers, SMs), so GPUs
    that differ in bandwidths or clock share them (`search.grid.grid_layer_times_s`)."""

    hbm_x_bytes: Array
    on_chip: OnChipTraffic
    waves: Array | None


def call_traffic(
    hw: HardwareSpec, physics: Physics, d1: Array, d2: Array, b: Array, wg: NDArray[np.bool_]
) -> CallTraffic:
    """`CallTraffic` of matmul calls (a d1 x d2 weight on b tokens; `wg`: weight gradient)."""
    waves = wave_quantization(hw, d1, np.where(wg, d2, b)) if physics.gemm_waves else None
    return CallTraffic(
        hbm_traffic_bytes(hw, d1, d2, b, wg), on_chip_traffic(hw, d1, d2, b, wg), waves
    )


def matmul_calls_s(
    hw: HardwareSpec,
    physics: Physics,
    d1: Array,
    d2: Array,
    b: Array,
    wg: NDArray[np.bool_],
    *,
    in_layer: bool = True,
) -> Array:
    """Time of each matmul call (a d1 x d2 weight on b tokens; `wg`: weight gradient) on one GPU:
    t = max(HBM, L2, SMEM / relief, FLOP · waves / (e · speedup)) + overhead, e the software's
    `matmul_efficiency`.

    The terms are the paper's roofline (spec §4, `matmul_terms_s`); relief = 2 with tensor
    memory on Blackwell-class hardware (`BLACKWELL_SMEM_RELIEF`), else 1 (docs/model.md R.2);
    speedup = `precision_speedup` for a transformer layer's GEMMs (`in_layer`), 1 for the
    logits layer, which Transformer Engine's FP8 recipe leaves in BF16 (R.11). FP8 GEMMs move
    1-byte operands: their HBM, L2 and shared-memory terms scale by `FP8_BYTES` / 2 (the tile
    counts kept as for 2-byte words, an upper bound). waves = `wave_quantization` of the call's
    output (d1 × b, a weight gradient's d1 × d2) with `physics.gemm_waves`, else 1.
    """
    traffic = call_traffic(hw, physics, d1, d2, b, wg)
    return traffic_calls_s(hw, physics, traffic, in_layer=in_layer)


def traffic_calls_s(
    hw: HardwareSpec,
    physics: Physics,
    traffic: CallTraffic,
    *,
    in_layer: bool = True,
    hbm: Array | None = None,
) -> Array:
    """`matmul_calls_s` of calls whose traffic is known (`call_traffic`, on a GPU of the
    same sizes): the same arithmetic on the same values, so the same times bit for bit. `hbm`:
    each row's HBM bandwidth (`records.hardware.row_hbm_bytes_per_s`). The roofline of the
    calls' `call_terms_s` plus the per-call overhead."""
    terms = call_terms_s(hw, physics, traffic, in_layer=in_layer, hbm=hbm)
    out: Array = roofline_s(terms) + matmul_overhead_s(hw, physics.efficiency)
    return out


def call_terms_s(
    hw: HardwareSpec,
    physics: Physics,
    traffic: CallTraffic,
    *,
    in_layer: bool = True,
    hbm: Array | None = None,
) -> MatmulTerms:
    """The roofline terms (s) of calls whose traffic is known, as realistic physics times them
    (`matmul_calls_s`), before the per-call overhead: Part I's terms (`matmul.traffic_terms_s`)
    with FLOP · waves / (e · speedup), HBM · narrow, L2 · narrow and SMEM · narrow / relief,
    narrow = `FP8_BYTES` / 2 for FP8 GEMMs, else 1 (docs/model.md R.2, R.8, R.11). What both a
    call's time (`traffic_calls_s`) and the resource bounding a layer's slowest call
    (`layer.layer_matmul_bound`) read. `in_layer` and `hbm` as `traffic_calls_s` takes them."""
    t = traffic_terms_s(hw, traffic.hbm_x_bytes, traffic.on_chip, hbm)
    relief = BLACKWELL_SMEM_RELIEF if physics.tensor_memory and has_tensor_memory(hw) else 1.0
    speedup = precision_speedup(hw, physics) if in_layer else 1.0
    narrow = FP8_BYTES / WORD_BYTES if speedup > 1.0 else 1.0
    flop = t.flop_s / (matmul_efficiency(hw, physics) * speedup)
    if traffic.waves is not None:
        flop = flop * traffic.waves
    return MatmulTerms(
        hbm_s=narrow * t.hbm_s,
        l2_s=narrow * t.l2_s,
        smem_s=narrow * (t.smem_s / relief),
        flop_s=flop,
    )
