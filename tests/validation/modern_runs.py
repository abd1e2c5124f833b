"""The 2021-2025 Megatron-LM / NeMo measurements as concrete runs (docs/validation.md).

Each row of `data/modern_2021_2025.csv` (`modern_runs`, the calibration's) and of
`data/nemo_2025_fp8.csv` and `data/dgxc_2025_bf16.csv` (`held_out_runs`, `held_out_bf16_runs`:
in no fit of the 2021-2024 constants; their H100 rows fit the H100's 2025 speedup,
`calibration.runs_2025`, their Blackwell rows no constant) becomes a `Measured`: a `RunSpec`
built from the row (model shape, GPUs, t/p/d/c/e, microbatch, global batch, sequence, the
overlaps the recipe sets: pipeline sends, the distributed optimizer's gradient reduce-scatter
and parameter all-gather, Transformer Engine's TP overlap), the hardware and physics overrides
it runs under, and the step time the source measured or implies. Cells the source leaves blank
take the defaults of its software generation (`_Stack`), each stated here; the row's own
`assumed_fields` name what the transcription already assumed.

Step times: `iteration_s` rows give it; throughput rows (teraFLOP/s or tokens per second
per GPU) carry the transcription's `derived_iteration_s`; the MFU rows are converted back
with the source's own FLOP count over its peak (`megatron_core_flop_per_step`,
`palm_flop_per_step`).
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.switches import STACK_2024 as PHYSICS_STACK_2024
from pipeline.model.records.switches import STACK_2025 as PHYSICS_STACK_2025
from pipeline.model.records.switches import Recompute
from pipeline.model.records.transformer import Mlp, TransformerShape

DATA = Path(__file__).parent / "data"
MODERN_CSV = "modern_2021_2025.csv"
HELD_OUT_CSV = "nemo_2025_fp8.csv"
"""NeMo 25.02 and 25.04's FP8 throughputs on B200, GB200 and H100: shown beside the fits in
docs/validation.md, the H100 row in the 2025 fit only (`held_out_runs`)."""
HELD_OUT_BF16_CSV = "dgxc_2025_bf16.csv"
"""NVIDIA's DGX Cloud Benchmarking Recipes 25.02 and 25.05.04: BF16 step times of Llama 3.1 and
Nemotron-4 on H100 and GB200 (NeMo 25.02-25.04 containers), shown beside the fits in
docs/validation.md, the H100 rows in the 2025 fit only (`held_out_bf16_runs`)."""

SOURCES: Mapping[str, str] = {
    "Nemotron-4 15B": "Nemotron-4 15B Technical Report",
    "Nemotron-4 340B": "Nemotron-4 340B Technical Report",
    "Megatron-Core scaling": "Training Speed and Scalability",
    "Megatron-LM GPT-3 175B": "'GPT-3 Example'",
    "NeMo 24.07": "performance_summary.md",
    "NeMo 25.02": "container NeMo 25.02",
    "NeMo 25.04": "container NeMo 25.04",
    "DGX Cloud 25.02": "Benchmarking Recipes 25.02 ",
    "DGX Cloud 25.05": "Benchmarking Recipes 25.05.04",
    "GLM-130B": "GLM-130B",
    "BLOOM 176B": "BigScience 2022",
}
"""Short name of each publication -> a phrase of its `source` cell that names it."""

H100_PEAK_FLOP_PER_S = 989e12
"""The dense BF16 peak the Megatron-LM README's MFU column divides by (its TFLOP/s / 989)."""
A100_PEAK_FLOP_PER_S = 312e12
"""The dense BF16/FP16 peak of an A100 (A100 whitepaper, 2020), which GLM-130B's MFU is of."""
BLOOM_INTER_NODE_GB_PER_S = 12.5
"""Jean Zay's A100 nodes: 4 Omni-Path links of 100 Gb/s per node of 8 GPUs (the BigScience
tr11 README): 50 GB/s per node each way, 12.5 GB/s per GPU counted both ways."""
BLOOM_NICS_PER_NODE = 4
"""The same README's 4 Omni-Path links per node: what `physics.nic_striping` stripes over."""


@dataclass(frozen=True, slots=True)
class _Stack:
    """What a software generation does where a row's cell is blank."""

    fusion: str
    """physics.fusion: flash for Transformer Engine's fused attention (2023 on), else fused."""
    zero_stage: int
    """0 before Megatron's distributed optimizer; 1 with it (NeMo's default from 2023)."""
    overlap: bool
    """Overlapped pipeline sends and gradient reduction (Megatron-Core's README: sends overlap
    by default; its `--overlap-grad-reduce`, NeMo's `overlap_grad_sync`)."""
    distributed_optimizer: bool
    """The gradient overlap is Megatron-Core's distributed optimizer's (`RunLayout.dp_overlap`:
    `--overlap-grad-reduce --overlap-param-gather`, NeMo's `distributed_fused_adam` with
    `overlap_grad_sync` and `overlap_param_sync`), not FSDP's (`RunLayout.overlap_dp`)."""
    tp_comm_overlap: bool
    """Transformer Engine's TP communication overlap (Megatron-Core's `--tp-comm-overlap`,
    NeMo's `ub_tp_comm_overlap`), effective inside NVLink only (`RunLayout.tp_comm_overlap`)."""
    grad_reduce_fp32: bool
    """BF16 (and FP8) rows reduce their gradients in FP32 (`RunLayout.grad_reduce_fp32`):
    Megatron-LM's `--accumulate-allreduce-grads-in-fp32`, set for BF16 unless
    `--grad-reduce-in-bf16` (which the scaling table does not state), and NeMo's
    `grad_sync_dtype`, FP32 unless set (NeMo Framework user guide, "Communication Overlap"),
    except the sources whose recipes set it to bf16 (`BF16_GRADIENT_SOURCES`). FP16 rows reduce
    at 16 bits."""
    physics_stack: int = PHYSICS_STACK_2024
    """`physics.stack`: the software generation whose GEMM rate the row runs at (2024: every
    stack of 2021-2024; 2025: NVIDIA's NeMo 25.x containers, docs/model.md R.9)."""


STACK_2021_2022 = _Stack("fused", 0, False, False, False, False)
"""Megatron-LM 2021, Megatron-DeepSpeed and SwissArmyTransformer (GPT-3 example, BLOOM, GLM):
none of these overlaps existed (the GPT-3 example's script, BigScience's tr11 slurm file and
GLM-130B's configs set none); gradients reduced at 16 bits (FP16 runs; BLOOM's BF16 ones through
DeepSpeed, whose gradient communication takes the BF16 model's type unless configured)."""
STACK_2024 = _Stack("flash", 1, True, True, True, True)
"""Megatron-Core / NeMo with Transformer Engine (Nemotron-4, the scaling table, NeMo 24.07).
Per source: the Megatron-LM README's scaling table states `--overlap-grad-reduce
--overlap-param-gather` and `--tp-comm-overlap` (the row's cells say yes); NeMo 24.07's
performance summary runs NVIDIA's NeMo-Framework-Launcher recipes, which set
`ub_tp_comm_overlap: True` and `distributed_fused_adam` with `overlap_grad_sync` and
`overlap_param_sync` (launcher_scripts/conf/training/gpt3/175b.yaml); the Nemotron-4 15B and
340B reports name the distributed optimizer but are silent on overlaps: ASSUMED the
launcher's recipes for these models (conf/training/nemotron/nemotron_15b.yaml and
nemotron_340b.yaml set `ub_tp_comm_overlap: True`, `overlap_grad_sync: True` and
`overlap_param_sync: true`), whether the production runs used them not being stated."""


BF16_GRADIENT_SOURCES: Mapping[str, str] = {
    "NeMo 24.07": "NVIDIA's FP8 example scripts for these models in NeMo-Framework-Launcher "
    "(examples/training/gpt/h100/20b_fp8_8node.sh at 329df4af, 64 GPUs at t = 2, p = 1, "
    "microbatch 2, as the summary's GPT3-20B row; 175b_fp8_16node.sh at edc90457; "
    "examples/training/llama/h100/llama2_70b_fp8.sh at 329df4af and llama3_70b_fp8.sh at "
    "4a9b61bc) each pass `+training.model.optim.grad_sync_dtype=bf16`, and NeMo 1.0 sets "
    "Megatron-Core's `grad_reduce_in_fp32` only for grad_sync_dtype fp32 "
    "(nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py); "
    "conf/training/nemotron/nemotron_340b.yaml sets it too (the scripts' global batches, and "
    "the 175B's interleaving, differ from the summary's rows: evidence of the recipe's "
    "gradient width, not of the rows' layouts)",
    "Nemotron-4 340B": "the report is silent; its runs are ASSUMED to run the launcher's recipe "
    "for the model, as their overlaps are, and conf/training/nemotron/nemotron_340b.yaml "
    "(NeMo-Framework-Launcher at 6daee02a and 3be81fc1) sets `optim.grad_sync_dtype: bf16`",
    **{
        source: "FP8 rows, run by NeMo 2.0's performance scripts: after installing the FP8 "
        "precision plugin they set `recipe.trainer.plugins.grad_reduce_in_fp32 = False` "
        "(NVIDIA/NeMo scripts/performance/llm/pretrain_llama3_70b.py at 07a643a8; "
        "scripts/performance/utils.py `set_primary_perf_configs`, its FP8 branch, at 0079206a), "
        "as NVIDIA's DGX Cloud Benchmarking Recipes' llama3.1/pretrain_llama31.py at 741c8860 "
        "does on the 25.02.01 container; the plugin's value overrides the DDP configuration's "
        "(nemo/lightning/pytorch/strategies/megatron_strategy.py, "
        "`update_config_with_dtype_overrides`). ASSUMED for these summaries: the scripts at "
        "their containers' own commits were not read"
        for source in ("NeMo 25.02", "NeMo 25.04")
    },
}
"""Sources whose recipes reduce gradients at 16 bits (NeMo's `grad_sync_dtype: bf16`; a
16-bit gradient buffer), each with the evidence: their rows run with `grad_reduce_fp32` off.
With FP32 gradients the run model counted NeMo 24.07's GPT3-20B at 100 GB a GPU and its
Nemotron-340B at 100 GB, runs that ran on 80 GB H100s; with 16-bit ones, 80 GB and 89 GB.
Nemotron-4 15B's recipe (conf/training/nemotron/nemotron_15b.yaml) leaves the setting unset:
FP32. NVIDIA's 2025 BF16 recipes (`HELD_OUT_BF16_CSV`) keep FP32: whether their models' NeMo 2.0
recipes set `grad_reduce_in_fp32 = False` in performance mode changed during 2025 and was not
read at their containers' commits."""


FP8_PARAMS_SOURCES: Mapping[str, str] = {
    source: "NeMo 2.0's FP8 precision recipe, `bf16_with_fp8_mixed` "
    "(nemo/collections/llm/recipes/precision/mixed_precision.py in NVIDIA/NeMo), sets "
    "`fp8_param_gather = True`: Megatron-Core then holds each layer weight in FP8 only "
    "(its DistributedDataParallelConfig: 'keep the compute param in fp8 (do not use any "
    "other intermediate dtype)')"
    for source in ("NeMo 25.02", "NeMo 25.04")
}
"""Sources whose FP8 rows hold their weights in FP8 only (`RunLayout.fp8_params`), each with
the evidence. NeMo 24.07's recipes (NeMo 1.0) leave `fp8_params` at its default, off."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One published measurement as a concrete run and its step time."""

    source: str
    """Short name of the publication (`SOURCES`)."""
    label: str
    """The row's id and model."""
    hardware: tuple[str, ...]
    """Config overrides selecting its hardware."""
    physics: tuple[str, ...]
    """Config overrides of `physics=realistic` it runs under."""
    run: RunSpec
    measured_step_s: float
    precision: str
    """bf16, fp16 or fp8, as the source trained."""


def rows(name: str = MODERN_CSV) -> list[dict[str, str]]:
    """The rows of a set of `DATA` (the modern set unless named), the comment line skipped."""
    with (DATA / name).open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def source_of(row: Mapping[str, str]) -> str:
    """The publication a row comes from (`SOURCES`); KeyError for one not listed there."""
    for name, phrase in SOURCES.items():
        if phrase in row["source"]:
            return name
    raise KeyError(f"no publication of SOURCES in {row['source']!r}")


def _int(row: Mapping[str, str], key: str, default: int) -> int:
    return int(row[key]) if row[key] else default


def _yes(row: Mapping[str, str], key: str, default: bool) -> bool:
    cell = row[key]
    return default if cell in ("", "n/a") else cell == "yes"


def hardware_overrides(row: Mapping[str, str]) -> tuple[str, ...]:
    """H100 rows run on `h100_sxm`, B200 on `b200`, GB200 on `gb200_nvl72`, A100 40GB on
    `a100_sxm`, A100 80GB on `a100_sxm_80gb` (BLOOM's with Jean Zay's 4 Omni-Path links per
    node, `BLOOM_INTER_NODE_GB_PER_S` and `BLOOM_NICS_PER_NODE`)."""
    gpu = row["hardware"]
    if gpu.startswith("H100"):
        return ("hardware=h100_sxm",)
    if gpu.startswith("GB200"):
        return ("hardware=gb200_nvl72",)
    if gpu.startswith("B200"):
        return ("hardware=b200",)
    if "40GB" in gpu:
        return ("hardware=a100_sxm",)
    if source_of(row) == "BLOOM 176B":
        return (
            "hardware=a100_sxm_80gb",
            f"hardware.network.bandwidth_gb_per_s=[600,{BLOOM_INTER_NODE_GB_PER_S}]",
            f"hardware.network.nics_per_node={BLOOM_NICS_PER_NODE}",
        )
    return ("hardware=a100_sxm_80gb",)


def stack_of(row: Mapping[str, str]) -> _Stack:
    """The software generation of a row: 2021-2022 for the A100 rows, NeMo 2025 for the
    sources of `STACK_2025_SOURCES`, 2024 for the other Transformer Engine stacks (the H100 and
    Blackwell rows)."""
    if row["hardware"].startswith("A100"):
        return STACK_2021_2022
    return STACK_NEMO_2025 if source_of(row) in STACK_2025_SOURCES else STACK_2024


STACK_NEMO_2025 = dataclasses.replace(STACK_2024, physics_stack=PHYSICS_STACK_2025)
"""NVIDIA's NeMo 25.x containers (`STACK_2025_SOURCES`): the 2024 stack's defaults, its GEMMs at
the GPU's 2025 speedup."""


STACK_2025_SOURCES: Mapping[str, str] = {
    "NeMo 25.02": "the performance summary's NeMo 25.02 container",
    "NeMo 25.04": "the performance summary's NeMo 25.04 container",
    "DGX Cloud 25.02": "the recipes' NeMo 25.02.01 container (the README's 'Available Benchmarks')",
    "DGX Cloud 25.05": "the recipes' NeMo 25.04.00 and 25.04.01 containers",
}
"""Sources whose runs ran NVIDIA's 2025 software (`STACK_NEMO_2025`, `physics.stack=2025`: a
GPU's own 2025 GEMM speedup, docs/model.md R.9), each with the evidence; every other source ran
the 2021-2024 stacks (`physics.stack=2024`)."""


CURRENT_SCALING_SOURCES: Mapping[str, str] = {
    "NeMo 25.04": "the performance summary's pre-training table, container 25.04: 'We apply "
    "per-tensor FP8 quantization, leveraging scaling factors computed in the current step' "
    "(NeMo Framework user guide, performance/archive/25.04-performance-summary.html)",
}
"""Sources whose FP8 runs scale each tensor by its amax in the current step
(`physics.fp8_current_scaling`, docs/model.md R.11), each with the evidence; every other FP8
source states no recipe and runs delayed scaling, Transformer Engine's and Megatron-Core's
default (NeMo 24.07's and 25.02's summaries say only "FP8")."""


def physics_overrides(row: Mapping[str, str]) -> tuple[str, ...]:
    """The stack's attention kernels and software generation (`physics.stack`), and FP8 GEMMs
    for the FP8 rows (`physics.precision`), scaled in the current step for the sources of
    `CURRENT_SCALING_SOURCES`; FP16 rows run as BF16 (the same 16-bit peak)."""
    fp8: tuple[str, ...] = ()
    if row["precision"] == "fp8":
        fp8 = ("physics.precision=fp8",)
        if source_of(row) in CURRENT_SCALING_SOURCES:
            fp8 += ("physics.fp8_current_scaling=true",)
    stack = stack_of(row)
    return (f"physics.fusion={stack.fusion}", f"physics.stack={stack.physics_stack}", *fp8)


def shape_of(row: Mapping[str, str]) -> TransformerShape:
    """The row's model. Squared ReLU has GeLU's two matrices, GeGLU SwiGLU's three; blank KV
    heads are the heads (multi-head attention), blank dropout Megatron's default 0.1, blank
    tying Megatron's default (tied), blank experts a dense model (top-1 of one)."""
    heads = int(row["heads"])
    gated = row["mlp"] in ("swiglu", "geglu")
    return TransformerShape(
        layers=int(row["layers"]),
        hidden=int(row["hidden"]),
        ffn_hidden=int(row["ffn_hidden"]),
        heads=heads,
        kv_heads=_int(row, "kv_heads", heads),
        vocab=int(row["vocab"]),
        seq_len=int(row["seq_len"]),
        mlp=Mlp.SWIGLU if gated else Mlp.GELU,
        experts=_int(row, "moe_experts", 1),
        top_k=_int(row, "moe_top_k", 1),
        dropout=row["dropout"] == "" or float(row["dropout"]) > 0.0,
        tied_embeddings=row["tied_embeddings"] != "no",
    )


def layout_of(row: Mapping[str, str]) -> RunLayout:
    """The row's layout; blank cells: microbatch 1, no interleaving, sequence parallelism
    with tensor parallelism on 2024 stacks (Megatron-Core's `--tp-comm-overlap` requires it;
    NeMo's recipes set it), no recomputation, the stack's ZeRO stage and overlaps (a row's
    `overlap_dp` cell is its stack's gradient overlap: the distributed optimizer's on 2024
    stacks, `_Stack`), gradient width (16 bits for `BF16_GRADIENT_SOURCES`) and FP8-only
    weights (`FP8_PARAMS_SOURCES`)."""
    stack = stack_of(row)
    tp = int(row["tp"])
    recompute = row["recompute"]
    overlap_grads = _yes(row, "overlap_dp", stack.overlap)
    return RunLayout(
        tp=tp,
        pp=int(row["pp"]),
        dp=int(row["dp"]),
        microbatch_seqs=_int(row, "microbatch_seqs", 1),
        cp=_int(row, "cp", 1),
        ep=_int(row, "ep", 1),
        interleave=_int(row, "interleave", 1),
        sequence_parallel=_yes(row, "sequence_parallel", stack.overlap and tp > 1),
        recompute=Recompute(recompute) if recompute else Recompute.NONE,
        zero_stage=_int(row, "zero_stage", stack.zero_stage),
        overlap_p2p=_yes(row, "overlap_p2p", stack.overlap),
        overlap_dp=overlap_grads and not stack.distributed_optimizer,
        dp_overlap=overlap_grads and stack.distributed_optimizer,
        tp_comm_overlap=tp > 1 and _yes(row, "tp_comm_overlap", stack.tp_comm_overlap),
        grad_reduce_fp32=stack.grad_reduce_fp32
        and row["precision"] in ("bf16", "fp8")
        and source_of(row) not in BF16_GRADIENT_SOURCES,
        fp8_params=row["precision"] == "fp8" and source_of(row) in FP8_PARAMS_SOURCES,
    )


def megatron_core_flop_per_step(shape: TransformerShape, batch_seqs: int) -> float:
    """Megatron-LM r0.8.0's `num_floating_point_operations` for a dense GPT without gating:
    72 · B · s · L · h² · (1 + s/(6h) + V/(12 · L · h)) (multi-head attention, f = 4h)."""
    s, layers, h, v = shape.seq_len, shape.layers, shape.hidden, shape.vocab
    return 72.0 * batch_seqs * s * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h))


def palm_flop_per_step(params: float, shape: TransformerShape, batch_seqs: int) -> float:
    """Model FLOP of a step as Chowdhery et al. 2022 (PaLM, arXiv:2204.02311, App. B) count
    them: (6N + 12 · L · h · s) per token, over B · s tokens."""
    s = shape.seq_len
    return (6.0 * params + 12.0 * shape.layers * shape.hidden * s) * batch_seqs * s


def measured_step_s(row: Mapping[str, str], run: RunSpec) -> float:
    """The step time a row measured or implies (module docstring)."""
    if row["measured_metric"] == "iteration_s":
        return float(row["measured_value"])
    if row["derived_iteration_s"]:
        return float(row["derived_iteration_s"])
    mfu, n_gpu = float(row["measured_value"]), run.layout.n_gpu
    if source_of(row) == "Megatron-Core scaling":
        flop = megatron_core_flop_per_step(run.shape, run.global_batch_seqs)
        return flop / (mfu * H100_PEAK_FLOP_PER_S * n_gpu)
    flop = palm_flop_per_step(float(row["params_b"]) * 1e9, run.shape, run.global_batch_seqs)
    return flop / (mfu * A100_PEAK_FLOP_PER_S * n_gpu)


@cache
def modern_runs() -> tuple[Measured, ...]:
    """Every row of the modern set as a run and its step time, in file order."""
    return _runs(MODERN_CSV)


@cache
def held_out_runs() -> tuple[Measured, ...]:
    """Every row of the held-out set (`HELD_OUT_CSV`) as a run and its step time, in file order."""
    return _runs(HELD_OUT_CSV)


@cache
def held_out_bf16_runs() -> tuple[Measured, ...]:
    """Every row of the held-out BF16 set (`HELD_OUT_BF16_CSV`) as a run and its step time, in
    file order."""
    return _runs(HELD_OUT_BF16_CSV)


def _runs(name: str) -> tuple[Measured, ...]:
    """Every row of the set `name` as a run and its step time, in file order."""
    out = []
    for row in rows(name):
        run = RunSpec(
            f"{row['row_id']} {row['model']}",
            shape_of(row),
            int(row["global_batch_seqs"]),
            layout_of(row),
        )
        assert run.layout.n_gpu == int(row["n_gpu"]), row["row_id"]
        out.append(
            Measured(
                source=source_of(row),
                label=run.name,
                hardware=hardware_overrides(row),
                physics=physics_overrides(row),
                run=run,
                measured_step_s=measured_step_s(row, run),
                precision=row["precision"],
            )
        )
    return tuple(out)
