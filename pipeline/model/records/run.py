"""A concrete training run as a record: its layout, the run, and the cost of one step
(docs/model.md, "Realistic physics")."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.model.records.switches import Recompute
from pipeline.model.records.transformer import TransformerShape


@dataclass(frozen=True, slots=True)
class RunLayout:
    """How a run is laid out: the layout half of a run's contract keys."""

    tp: int
    pp: int
    dp: int
    microbatch_seqs: int
    cp: int = 1
    ep: int = 1
    interleave: int = 1
    """Virtual stages (model chunks) per pipeline rank; 1 = no interleaving."""
    sequence_parallel: bool = False
    recompute: Recompute = Recompute.NONE
    zero_stage: int = 0
    microbatch_group: int = 0
    """Microbatches each virtual stage runs back to back in the interleaved schedule (Megatron-
    Core's microbatch_group_size_per_vp_stage; Llama 3 §3.3.2's tunable N); 0: pp where it
    divides the microbatches (Megatron-LM's schedule, Megatron-Core's default), else the
    smallest N Megatron-Core accepts, set by hand there (`gpu_memory.megatron_group_microbatches`).
    The warm-up, and so the activations in flight, grow with it."""
    overlap_p2p: bool = False
    """Pipeline sends overlap compute (asynchronous point-to-point, as Llama 3 §3.3.2); false:
    each microbatch's sends wait on the critical path, as Megatron-LM's 1F1B of 2021-2022."""
    overlap_dp: bool = False
    """The gradient reduce-scatter overlaps the backward pass of the last microbatch, layer by
    layer (FSDP, Zhao et al. 2023; Megatron-Core's overlapped gradient reduction); false: it
    follows the pipeline, exposed."""
    dp_overlap: bool = False
    """Megatron-Core's distributed optimizer with `overlap_grad_reduce` and
    `overlap_param_gather` (Megatron Core developer guide, `DistributedDataParallelConfig`):
    the reduce-scatter bucket by bucket beside the last backward, the parameter all-gather
    beside the next forward, the last and the first bucket exposed
    (`step.assembly.distributed_optimizer_exposed_s`); it takes the place of `overlap_dp`."""
    tp_comm_overlap: bool = False
    """Transformer Engine's TP communication overlap (Megatron-Core's `--tp-comm-overlap`,
    userbuffers; Wang et al. 2023): the collectives past the weight GEMMs, only for a tensor-
    parallel group inside the fastest level (an NVLink domain), as the grid's
    `physics.tp_overlap_in_domain`; across it, exposed."""
    cp_all_gather: bool = False
    """Context parallelism all-gathers K and V before the attention core and reduce-scatters
    their gradients after it, exposed on the critical path (Llama 3 §3.3.2, "all-gather based
    CP"); false: ring attention, each K/V shard's exchange overlapping the blockwise core."""
    grad_reduce_fp32: bool = False
    """Gradients held and reduced in FP32, 4 bytes per parameter (the gradient buffer; the
    reduce-scatter, or the all-reduce when unsharded; the parameter all-gather keeps the weights'
    width, 16-bit or FP8 with `fp8_params`):
    Megatron-LM's default for BF16
    (`--accumulate-allreduce-grads-in-fp32`, set unless `--grad-reduce-in-bf16`), NeMo's
    (`grad_sync_dtype` FP32 unless set to bf16: NeMo Framework user guide, "Communication
    Overlap") and Llama 3's (Llama Team 2024 §3.3.2, "Numerical stability"); false: 16-bit,
    as FP16 runs reduce them."""
    fp8_params: bool = False
    """Under FP8 GEMMs (`physics.precision=fp8`) with a sharded optimizer (`zero_stage` ≥ 1,
    which Megatron-LM requires of it), the layers' weights are held in FP8 only:
    Megatron-Core's `fp8_param_gather`, NeMo 1.0's `fp8_params`, set by NeMo 2.0's FP8
    precision recipe (`bf16_with_fp8_mixed`). Each weight is then 1 byte and the transpose
    Transformer Engine keeps for Hopper's FP8 GEMMs 1 byte, in place of the 16-bit weight and
    its FP8 copies (`memory.gpu_memory.fp8_weight_copy_bytes`); the FP32 master weights stay
    in the optimizer state; a sharded optimizer all-gathers them in FP8, 1 byte each
    (`step.assembly.Schedule.gather_width`). False: a 16-bit weight and its FP8 copies, gathered at
    16 bits."""
    expert_imbalance: float = 0.0
    """With experts split over more than one expert-parallel rank (`ep` > 1), the busiest
    rank's local experts compute 1 + this times the balanced tokens: routing without token
    dropping, whose combine waits for that rank (`compute.experts`, docs/model.md R.5.1); 0:
    balanced, as NVIDIA's published mixture-of-experts benchmarks run (their recipes force the
    router to balance, or drop tokens past a capacity factor). The grid's layouts take
    `physics.expert_imbalance`."""

    @property
    def n_gpu(self) -> int:
        """t · p · d · c GPUs (experts share the data-parallel ranks)."""
        return self.tp * self.pp * self.dp * self.cp

    @property
    def expert_dp(self) -> int:
        """d/e: replicas of each expert shard, the group its gradients are reduced over
        (DeepSpeed-MoE's and Megatron-Core's expert-data-parallel group)."""
        return self.dp // self.ep


@dataclass(frozen=True, slots=True)
class RunSpec:
    """A training run: model, global batch in sequences, and its layout."""

    name: str
    shape: TransformerShape
    global_batch_seqs: int
    layout: RunLayout
    layout_search: bool = False
    """True: search the best layout for this model and batch at the layout's GPU count."""
    tokens: float | None = None
    """Training tokens of the whole run; None: the scaling law's tokens_per_param times the
    run's parameters."""
    gpu_budget: int | None = None
    """GPUs a layout search may use: the best layout on at most this many (a cluster of any
    size, e.g. 10,000); None: exactly the given layout's t·p·d·c."""

    @property
    def microbatches(self) -> int:
        """m = ⌊B_seqs / (d·b)⌋, the microbatches each of d data-parallel ranks runs a step, of
        b sequences each (`runs.training_run.run_microbatches` for many layouts at once)."""
        return self.global_batch_seqs // (self.layout.dp * self.layout.microbatch_seqs)


@dataclass(frozen=True, slots=True)
class RunCost:
    """One step of a run on one GPU of the slowest stage; seconds per step unless named."""

    step_time_s: float
    t_matmul_s: float
    """Weight matmuls (projections, MLP, logits), recompute included."""
    t_attention_s: float | None
    """The attention core (QK^T, AV; the flash kernel under fusion=flash); None without attention."""
    t_norm_s: float | None
    """LayerNorms and softmax kernels; None without memory-bound operators."""
    t_elementwise_s: float | None
    """Biases, scaling, masks, dropout, activations, residual adds."""
    t_optimizer_s: float | None
    """The Adam step."""
    t_tp_comm_s: float
    t_pp_comm_s: float
    t_dp_comm_s: float
    t_ep_comm_s: float
    """Expert parallelism's all-to-all token dispatch and combine (0 for a dense run)."""
    t_latency_s: float
    bubble_fraction: float
    model_flop_per_step: float
    hardware_flop_per_step: float
    narayanan_flop_per_step: float
    memory_per_gpu_bytes: float
    memory_capacity_bytes: float
    """The GPU's HBM as the physics counts it (`memory.capacity`): what `memory_per_gpu_bytes`
    must not exceed."""
    fits_memory: bool
    mfu: float
    hfu: float
    n_gpu: int

    @property
    def t_compute_s(self) -> float:
        """Matmul, attention and memory-bound operator time per step."""
        parts = (self.t_matmul_s, self.t_attention_s, self.t_norm_s, self.t_elementwise_s)
        return sum(p for p in parts if p is not None)

    @property
    def model_flop_per_s_per_gpu(self) -> float:
        """Model FLOP per second per GPU (recompute excluded)."""
        return self.model_flop_per_step / (self.n_gpu * self.step_time_s)

    @property
    def hardware_flop_per_s_per_gpu(self) -> float:
        """Hardware FLOP per second per GPU (recompute included)."""
        return self.hardware_flop_per_step / (self.n_gpu * self.step_time_s)

    @property
    def narayanan_flop_per_s_per_gpu(self) -> float:
        """FLOP per second per GPU counted with Narayanan et al. 2021 eq. (3)."""
        return self.narayanan_flop_per_step / (self.n_gpu * self.step_time_s)


def stage_layers(layers: int, pp: int) -> tuple[int, ...]:
    """Layers of each pipeline stage, first to last: ⌈L/p⌉ each, one fewer on the outer stages
    until they add up to L, the first and the last stage first, then the second and the
    second-to-last, and so on (Llama 3's placement: 126 layers on 16 stages put 7 on the first
    and the last, 8 on the others, Llama Team 2024, arXiv:2407.21783 §3.3.2). The outer stages
    carry the embedding and the logits, so they lose a layer first. Needs 1 ≤ pp ≤ layers.
    """
    full = -(-layers // pp)
    counts = [full] * pp
    order = [i // 2 if i % 2 == 0 else pp - 1 - i // 2 for i in range(pp)]
    for stage in order[: full * pp - layers]:
        counts[stage] -= 1
    return tuple(counts)
