"""Which physics the model runs: the paper's idealization or realistic extensions, key by key.

`Physics()` (all extensions off) is the paper's model, bit for bit. Each extension is its
own switch so a sweep can show what each one does to a result (docs/model.md, "Realistic
physics"). The efficiency constants are achieved fractions of a hardware peak; every
value shipped in conf/physics/ carries its source or the calibration that set it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pipeline.model.records.kept_hash import KeepsHash, keeps_hash


class Fusion(StrEnum):
    """How memory-bound operators are launched (docs/model.md, "Memory-bound operators")."""

    NONE = "none"
    """Eager framework kernels: every operator reads and writes HBM (2018-era PyTorch)."""
    FUSED = "fused"
    """Megatron-style fused kernels: bias+GeLU, bias+dropout+add, scale+mask+softmax, LayerNorm."""
    FLASH = "flash"
    """FUSED plus the attention core in on-chip memory: no s x s tensor touches HBM."""


class TensorParallel(StrEnum):
    """Which tensor-parallel layouts the search tries (docs/model.md R.7, "On the grid")."""

    TWO_D = "2d"
    """The paper's 2-D tensor parallelism: N_TP = N_TPm · N_TPff, √N_TP ≤ N_TPff (spec §10.5)."""
    ONE_D = "1d"
    """Megatron-style 1-D tensor parallelism with sequence parallelism (N_TPm = 1,
    Korthikanti et al. 2022): every matrix split along d_ff, norms and dropout split over tokens."""
    BOTH = "both"
    """The 2-D candidates and the 1-D ones beside them; the search keeps the best."""


class Precision(StrEnum):
    """Number format of the transformer layers' weight GEMMs (docs/model.md, R.11)."""

    BF16 = "bf16"
    """BF16 (or FP16) GEMMs at the 16-bit tensor peak: mixed-precision training as Megatron-LM."""
    FP8 = "fp8"
    """Transformer Engine's FP8 recipe (NVIDIA 2022, Micikevicius et al., arXiv:2209.05433): the
    layers' weight GEMMs take FP8 inputs at the FP8 tensor peak; the attention core, norms,
    the logits layer, the optimizer and the master weights stay as under BF16."""


class ClusterSizes(StrEnum):
    """Which cluster sizes the walk for the smallest sufficient cluster tries (docs/model.md §9.4)."""

    POWERS_OF_TWO = "powers_of_two"
    """The paper's N_GPU = S·2^i (spec §11): answers in steps of 2x."""
    NODES = "nodes"
    """Any multiple of the NVLink domain (the product of the non-top level sizes): S·2^i
    brackets the answer, then passes of finer strides inside the bracket narrow it to one node."""


class HbmCapacity(StrEnum):
    """Which capacity a GPU's memory check compares its bytes with (docs/model.md R.12)."""

    DATASHEET = "datasheet"
    """The datasheet's capacity read as decimal gigabytes (`hardware.hbm_gb` · 10⁹ bytes), as
    the paper reads it (spec §3.2: an H100 holds 8.0e10 B)."""
    DEVICE = "device"
    """The capacity the NVIDIA driver reports (NVML's memory total: an "80 GB" H100 holds
    81,559 MiB, 85.5e9 B), the datasheet's times `hardware.hbm_device_ratio`; the datasheet's
    where a preset gives no ratio."""


class Recompute(StrEnum):
    """Activation recomputation (Korthikanti et al. 2022, arXiv:2205.05198)."""

    NONE = "none"
    SELECTIVE = "selective"
    """Recompute the attention core (softmax, dropout, QK^T, AV) in the backward pass."""
    FULL = "full"
    """Store only each layer's input; rerun the whole forward pass in the backward pass."""
    AUTO = "auto"
    """In a search: the mode that fits in memory and is fastest, per layout."""


@keeps_hash
@dataclass(frozen=True, slots=True)
class Efficiency(KeepsHash):
    """Achieved fractions of hardware peaks and per-kernel overheads, each with its source in conf/."""

    matmul: float = 1.0
    """Rate of a framework layer's weight GEMMs as a fraction of the paper's large-matmul rate
    F_peak · u_eff (wave quantization, tile tails and non-ideal shapes)."""
    attention_matmul: float = 1.0
    """Rate of the attention core's batched GEMMs (inner dimension d_head) as a fraction of
    the large-matmul rate F_peak · u_eff."""
    fused_bandwidth: float = 1.0
    """Fraction of HBM bandwidth a fused memory-bound kernel (and the optimizer step) achieves."""
    eager_norm_bandwidth: float = 1.0
    """Fraction of HBM bandwidth an eager softmax or LayerNorm kernel achieves."""
    eager_elementwise_bandwidth: float = 1.0
    """Fraction of HBM bandwidth an eager element-wise kernel (bias, dropout, GeLU, add) achieves."""
    kernel_overhead_s: float = 0.0
    """Fixed time of every kernel launch that is not a matmul (launch and tail), in seconds."""
    matmul_overhead_s: float | None = None
    """Fixed time of every matmul kernel call in seconds; None keeps the hardware's
    `matmul_latency_s` (the paper's 4.5 us)."""
    network: float = 1.0
    """Fraction of a link's unidirectional bandwidth a collective achieves (NCCL bus bandwidth)."""


STACK_2024 = 2024
"""`Physics.stack` of the 2021-2024 software: `efficiency.matmul` on every GPU."""
STACK_2025 = 2025
"""`Physics.stack` of NVIDIA's NeMo 25.x containers: `efficiency.matmul` times a GPU's own 2025
speedup."""
STACKS = (STACK_2024, STACK_2025)
"""The software generations `Physics.stack` names."""


@keeps_hash
@dataclass(frozen=True, slots=True)
class Physics(KeepsHash):
    """The extensions switched on; the defaults are the paper's model (docs/model.md)."""

    name: str = "paper"
    attention: bool = False
    """Attention projections, the attention core and (for runs) the logits layer are
    modelled; off, a layer is its MLP, as in the paper."""
    memory_bound_ops: bool = False
    """Norms, softmax, activations, dropout, adds and the optimizer step take time on HBM."""
    fusion: Fusion = Fusion.FUSED
    """How memory-bound operators are launched (when `memory_bound_ops` is on)."""
    gpu_memory: bool = False
    """Every GPU must hold its weights, gradients, optimizer state and activations."""
    recompute: Recompute = Recompute.NONE
    """Activation recomputation of grid layouts; a run gives its own."""
    zero_stage: int = 0
    """Optimizer sharding over data parallel of grid layouts (0-3); a run gives its own."""
    whole_sequences: bool = False
    """Microbatches of whole sequences (data parallel splits sequences, not tokens), as
    frameworks run them; off, the paper's token-granular microbatches."""
    tensor_parallel: TensorParallel = TensorParallel.TWO_D
    """Tensor-parallel layouts the search tries: the paper's 2-D, Megatron's 1-D with
    sequence parallelism, or both."""
    tp_in_domain: bool = False
    """The tensor-parallel group lies inside the fastest network level (an NVLink domain):
    N_TP ≤ its size and every TP factor on level 0."""
    tensor_memory: bool = False
    """Blackwell tensor memory and 2-SM MMA: accumulators off shared memory (docs/model.md)."""
    max_context_parallel: int = 1
    """Largest context-parallel degree c a grid layout may split each sequence over, with
    `whole_sequences` (powers of two dividing the sequence length; 1 = none)."""
    precision: Precision = Precision.BF16
    """Number format of the layers' weight GEMMs: bf16, or fp8 as Transformer Engine runs it."""
    dp_overlap: bool = False
    """Grid layouts overlap their gradient reduction as Megatron-Core's distributed optimizer
    does (`overlap_grad_reduce`, `overlap_param_gather`): the reduce-scatter bucket by bucket
    with the last backward, the parameter all-gather with the next forward; the last bucket's
    reduce-scatter and the first bucket's all-gather are exposed (`step.assembly`)."""
    tp_overlap_in_domain: bool = False
    """Transformer Engine's TP communication overlap (`overlap_tp`) only for tensor-parallel
    groups inside the fastest network level (an NVLink domain); across it, exposed."""
    cp_all_gather: bool = False
    """Grid context parallelism all-gathers K and V before the attention core and reduce-
    scatters their gradients (Transformer Engine's `cp_comm_type="all_gather"`, Llama 3's):
    the exchange is exposed; off, ring attention (`"p2p"`, Megatron-Core's default) overlaps
    it with the core. The same bytes in as many steps: never faster than the ring here unless
    `nic_striping` stripes the all-gather (an NCCL ring) where the ring's point-to-point sends
    cannot be; the search does not try both (docs/model.md R.7)."""
    few_microbatches: bool = False
    """Plain 1F1B may run fewer microbatches than pipeline stages (m < N_PP), paying its bubble
    (N_PP − 1)/(N_PP − 1 + m), as Megatron-LM's non-interleaved schedule allows; interleaved
    1F1B still needs m ≥ N_PP and zero-bubble m ≥ 2·N_PP. Off: every schedule needs them."""
    small_microbatches: bool = False
    """With whole sequences, the search also tries the microbatch counts of micro-batches of
    1 and 2 sequences per data-parallel rank (`search.enumeration.MICROBATCH_SEQS`), as
    Megatron-Core and NeMo runs set `micro_batch_size`, beside the paper's fewest four m ≥ N_PP
    (spec §10 step 7), whose micro-batches may all be too large to fit a GPU's memory or
    train in time; off, the paper's four alone."""
    batch_at_row_flop: bool = False
    """The batch law reads, at each grid size, the FLOP the realistic row trains (the
    transformer it times, `search.counts.grid_counts`) where the paper reads its C = 6·N·D/S
    (and D-based laws the row's tokens); off, the paper's C, so a size has the paper's batch."""
    nic_striping: bool = False
    """A ring collective whose group crosses nodes stripes its crossing traffic over the NICs of
    its ranks in each node, as NCCL builds a ring per NIC (`network.groups.Levels.at`); off,
    its crossing edge has one GPU's link of the level. Needs the preset's `nics_per_node`."""
    gemm_waves: bool = False
    """A weight GEMM's arithmetic is charged in whole waves of output tiles: ⌈tiles / SMs⌉ waves of
    256 × 128 tiles, one per SM per wave (`compute.efficiency.wave_quantization`, docs/model.md
    R.2); off, its padded FLOP at the full rate."""
    grad_reduce_fp32: bool = False
    """Grid layouts hold and reduce their gradients in FP32, 4 bytes per parameter (the
    reduce-scatter, or the all-reduce when unsharded; the parameter all-gather keeps the weights'
    width, 16-bit, or FP8 with `fp8_params`), as Megatron-LM does for BF16 unless told
    `--grad-reduce-in-bf16` (docs/model.md R.5); off, the paper's w."""
    fp8_params: bool = False
    """Under FP8 GEMMs (`precision` fp8) with a sharded optimizer (`zero_stage` ≥ 1), grid
    layouts hold their weights in FP8 only, as Megatron-Core's `fp8_param_gather` does and
    NeMo 2.0's FP8 precision recipe sets: the FP8 weight and its transpose in the 16-bit
    weight's place, no FP8 copies beside it, the
    parameter all-gather at 1 byte (a run's `fp8_params`, docs/model.md R.11); off, a 16-bit
    weight and its FP8 copies, gathered at 16 bits (Megatron-Core's default)."""
    fp8_current_scaling: bool = False
    """Under FP8 GEMMs with memory-bound operators, each FP8 tensor is scaled by its own amax in
    the current step (Transformer Engine's `Float8CurrentScaling`, as NeMo 25.04's performance
    runs): every weight GEMM's input and output gradient is read once more for its amax
    (`compute.memory_ops.fp8_amax_op`, docs/model.md R.11); off, delayed scaling from the amax
    history (Transformer Engine's `DelayedScaling`, Megatron-Core's default `fp8_recipe`)."""
    cluster_sizes: ClusterSizes = ClusterSizes.POWERS_OF_TWO
    """Cluster sizes the walk tries: the paper's S·2^i or any multiple of the NVLink domain. A
    rule of the walk, not of a step: the paper's step model runs with either (`is_paper`)."""
    hbm_capacity: HbmCapacity = HbmCapacity.DATASHEET
    """The capacity memory checks compare a GPU's bytes with: the datasheet's decimal
    gigabytes (the paper's) or what the driver reports (`memory.capacity`)."""
    expert_imbalance: float = 0.0
    """Mixture-of-experts layers split over more than one expert-parallel rank compute, on their
    busiest rank, 1 + this times the balanced share of routed tokens: routing without token
    dropping, whose combine waits for that rank (`compute.experts`, docs/model.md R.5.1); 0:
    balanced routing, as the paper's model (capacity factor 1)."""
    stack: int = STACK_2024
    """The software generation whose kernels run the weight GEMMs (`STACKS`): 2024, the stacks
    of 2021-2024 (Megatron-LM, Megatron-Core and NeMo 24.x, Meta's Llama 3), whose GEMMs run at
    `efficiency.matmul` on every GPU; 2025, NVIDIA's NeMo 25.x containers, that times the GPU's
    own `HardwareSpec.matmul_speedup_2025` where its preset gives one (fitted on that GPU's 2025
    runs; `compute.efficiency.matmul_efficiency`, docs/model.md R.9). Read only through
    efficiencies: the paper's model reads none."""
    efficiency: Efficiency = field(default_factory=Efficiency)

    @property
    def is_paper(self) -> bool:
        """True when every extension is off and every efficiency ideal: the paper's model exactly."""
        # the flags first: a realistic physics answers without comparing its efficiencies
        return (
            not (
                self.attention
                or self.memory_bound_ops
                or self.gpu_memory
                or self.whole_sequences
                or self.tensor_parallel is not TensorParallel.TWO_D
                or self.tp_in_domain
                or self.tensor_memory
                or self.recompute is not Recompute.NONE
                or self.zero_stage != 0
                or self.max_context_parallel != 1
                or self.precision is not Precision.BF16
                or self.dp_overlap
                or self.tp_overlap_in_domain
                or self.few_microbatches
                or self.small_microbatches
                or self.cp_all_gather
                or self.batch_at_row_flop
                or self.nic_striping
                or self.gemm_waves
                or self.grad_reduce_fp32
                or self.fp8_params
                or self.fp8_current_scaling
                or self.expert_imbalance != 0.0
                or self.hbm_capacity is not HbmCapacity.DATASHEET
            )
            and self.efficiency == Efficiency()
        )


PAPER = Physics()
"""The paper's model: every extension off (the default of every function taking a Physics)."""


RECOMPUTE_ORDER = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
"""The recomputation modes a search tries, cheapest in memory last: under recompute=auto a
grid layout keeps the first that fits (each reruns more, so it is also the fastest that fits)."""


def recompute_modes(physics: Physics) -> tuple[Recompute, ...]:
    """Modes a grid layout may use: the configured one, or all three under auto."""
    if physics.recompute is Recompute.AUTO:
        return RECOMPUTE_ORDER
    return (physics.recompute,)
