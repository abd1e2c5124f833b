"""The busiest expert rank's excess under dropless routing, derived from published throughputs
(`physics.expert_imbalance`, docs/model.md R.5.1; docs/validation.md, "Expert load imbalance").

NVIDIA's Megatron MoE Model Zoo publishes Qwen3-235B-A22B's throughput on 256 H100s at four
sequence lengths, each with the router forced to balance and dropless
(`data/moe_balance_2025.csv`). Per token and layer the runs hold the same expert work (the
context-parallel degree grows with the sequence: every GPU's microbatch is 16,384 tokens), and
the rest grows with the sequence (the attention core). So, in seconds per token and layer,

  forced balance:  τ = a·F_e + b·F_o(s)        dropless:  τ' = τ·T_bal/T_drop = τ + x·a·F_e

with F_e the routed experts' FLOP and F_o the rest (the attention projections, its core and the
logits), a and b seconds per FLOP of each, fitted on the four balanced rows (least squares of
the relative error), and x, the busiest rank's tokens over the mean less 1, read from each row.
τ is each row's FLOP per token and layer (Megatron-LM's count, that its TFLOP/s divide: the
causal attention core at half its s², `megatron_flop_per_token_layer`) over its TFLOP/s.

Two things are assumed and one checked. The projections and the logits run at the attention
core's rate b (dense GEMMs, as long as its kernels); with them at the experts' rate a, x comes
out larger (`derived_imbalance(projections_at_expert_rate=True)`). The expert block's time
a·F_e holds all it does (grouped GEMMs, permutations, dispatch and combine, its recomputed
forward), and the excess scales all of it. Checked: the excess time per token, x·a·F_e =
(T_bal/T_drop − 1)·τ, is the same at every sequence length (`excess_time_spread`), as a fixed
share of fixed expert work should be.
"""

from __future__ import annotations

import csv
import dataclasses
from dataclasses import dataclass

import numpy as np

from pipeline.model.records.run import RunSpec
from pipeline.model.runs.training_run import evaluate_run
from pipeline.schema import compose_config, load_scenario
from tests.validation import modern_runs
from tests.validation.modern_runs import DATA

MOE_BALANCE_CSV = "moe_balance_2025.csv"
GROK1_CSV = "grok1_2025.csv"


@dataclass(frozen=True, slots=True)
class Qwen3Moe:
    """Qwen3-235B-A22B as the Model Zoo benchmarks it (its model_configs/benchmarking
    Qwen3-235B-A22B.yaml: --num-layers, --hidden-size, --num-attention-heads, --kv-channels,
    --num-query-groups, --num-experts, --moe-router-topk, --moe-ffn-hidden-size, --swiglu,
    the tokenizer's vocabulary padded by --make-vocab-size-divisible-by 1187)."""

    layers: int = 94
    hidden: int = 4096
    heads: int = 64
    head_dim: int = 128
    query_groups: int = 4
    top_k: int = 8
    expert_ffn: int = 1536
    vocab: int = 151_936


@dataclass(frozen=True, slots=True)
class BalanceRow:
    """One sequence length's pair of published throughputs (TFLOP/s per GPU)."""

    row_id: str
    seq_len: int
    tflops_balanced: float
    tflops_dropless: float


def balance_rows() -> tuple[BalanceRow, ...]:
    """The rows of `data/moe_balance_2025.csv`, the comment line skipped."""
    with (DATA / MOE_BALANCE_CSV).open() as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return tuple(
        BalanceRow(
            r["row_id"],
            int(r["seq_len"]),
            float(r["tflops_forced_balance"]),
            float(r["tflops_dropless"]),
        )
        for r in rows
    )


def megatron_flop_per_token_layer(
    m: Qwen3Moe, seq_len: int, causal_halved: bool = True
) -> tuple[float, float]:
    """(F_e, F_o): a token's training FLOP per layer (forward and backward: 3 x 2 FLOP a
    multiply-add) in the routed experts and in the rest, as Megatron-LM counts them
    (`num_floating_point_operations` of megatron/training/training.py: k SwiGLU experts of three
    h x f_e matrices; Q and O projections of a·d_head columns, K and V of g·d_head; the causal
    core at half of its s² with `causal_halved`, as its count does since its causal fix; the
    logits layer spread over the layers)."""
    h, q = float(m.hidden), float(m.heads * m.head_dim)
    experts = 6.0 * m.top_k * 3.0 * h * m.expert_ffn
    projections = 6.0 * (2.0 * h * q + 2.0 * h * m.query_groups * m.head_dim)
    core = 6.0 * 2.0 * seq_len * q * (0.5 if causal_halved else 1.0)
    logits = 6.0 * h * m.vocab / m.layers
    return experts, projections + core + logits


@dataclass(frozen=True, slots=True)
class Derivation:
    """The fit and what it gives per row."""

    imbalance: tuple[float, ...]
    """x of each row."""
    expert_share: tuple[float, ...]
    """a·F_e / τ of each row: the expert block's share of the balanced step."""
    fit_error: tuple[float, ...]
    """Each balanced row's relative error under the fitted a, b."""

    @property
    def mean(self) -> float:
        """x over the rows."""
        return float(np.mean(self.imbalance))


def _balanced_times(causal_halved: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: F_e and F_o (`megatron_flop_per_token_layer`), τ = (F_e + F_o) / T_bal and the
    dropless slowdown T_bal / T_drop."""
    m, rows = Qwen3Moe(), balance_rows()
    flop = np.array([megatron_flop_per_token_layer(m, r.seq_len, causal_halved) for r in rows])
    f_e, f_o = flop[:, 0], flop[:, 1]
    balanced = np.array([r.tflops_balanced for r in rows])
    dropless = np.array([r.tflops_dropless for r in rows])
    return f_e, f_o, (f_e + f_o) / balanced, balanced / dropless


def derived_imbalance(
    projections_at_expert_rate: bool = False, causal_halved: bool = True
) -> Derivation:
    """x of each row (module docstring); with `projections_at_expert_rate`, the attention
    projections and logits (F_o at a sequence of 0 tokens) at the experts' rate a instead of
    the core's."""
    f_e, f_o, tau, ratio = _balanced_times(causal_halved)
    moved = megatron_flop_per_token_layer(Qwen3Moe(), 0, causal_halved)[1]
    moved = moved if projections_at_expert_rate else 0.0
    expert, rest = f_e + moved, f_o - moved
    design = np.column_stack([expert, rest]) / tau[:, None]  # relative error of τ
    (a, b), *_ = np.linalg.lstsq(design, np.ones_like(tau), rcond=None)
    block = a * f_e  # the routed experts' time at balance
    x = (ratio - 1.0) * tau / block
    fitted = a * expert + b * rest
    return Derivation(
        tuple(float(v) for v in x),
        tuple(float(v) for v in block / tau),
        tuple(float(v) for v in fitted / tau - 1.0),
    )


def excess_time_spread(causal_halved: bool = True) -> float:
    """(max − min) / mean over the rows of (T_bal/T_drop − 1)·τ, the dropless runs' excess time
    per token and layer: 0 when the excess is the same at every sequence length."""
    _, _, tau, ratio = _balanced_times(causal_halved)
    e = (ratio - 1.0) * tau
    return float((e.max() - e.min()) / e.mean())


GROK1_SHAPE = {
    "layers": "64",
    "hidden": "6144",
    "ffn_hidden": "32768",
    "heads": "48",
    "kv_heads": "8",
    "vocab": "128256",
    "mlp": "swiglu",
    "dropout": "0",
    "tied_embeddings": "no",
    "moe_experts": "8",
    "moe_top_k": "2",
}
"""Grok-1 314B as NeMo 2.0's grok1_314b recipe builds it (Mixtral's config with 64 layers,
hidden 6144, 48 heads, 8 query groups, FFN 32768, 8 experts of top 2: the recipe's `model()`;
the Llama 3 tokenizer's 128,256 entries, which the recipe's data module reads; no dropout and
separate input and output embeddings, Mixtral's config defaults)."""


def grok1_runs(imbalance: float) -> list[tuple[str, float, float]]:
    """(row id, measured step s, modelled step s) of each Grok-1 row (`data/grok1_2025.csv`), its
    run at `imbalance` (`run.expert_imbalance`) on the stack of NVIDIA's 2025 recipes (the DGX
    Cloud 25.05 rows': NeMo 25.04 containers, `modern_runs.STACK_NEMO_2025`)."""
    with (DATA / GROK1_CSV).open() as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = []
    for r in rows:
        row = {
            **GROK1_SHAPE,
            **{k: r[k] for k in ("tp", "pp", "cp", "ep", "dp", "precision", "seq_len")},
            "source": "NVIDIA DGX Cloud Benchmarking Recipes 25.05.04 (Grok-1)",
            "hardware": "GB200",
            "interleave": r["vp"],
            "microbatch_seqs": r["microbatch_seqs"],
            "sequence_parallel": "",
            "recompute": "",
            "zero_stage": "",
            "tp_comm_overlap": "",
            "overlap_p2p": "",
            "overlap_dp": "",
        }
        layout = modern_runs.layout_of(row)
        layout = dataclasses.replace(layout, expert_imbalance=imbalance)
        run = RunSpec(r["row_id"], modern_runs.shape_of(row), int(r["global_batch_seqs"]), layout)
        overrides = (*modern_runs.hardware_overrides(row), *modern_runs.physics_overrides(row))
        s = load_scenario(compose_config(["physics=realistic", *overrides]))
        step = evaluate_run(s.hardware, s.physics, run).step_time_s
        out.append((r["row_id"], float(r["measured_step_s"]), step))
    return out


if __name__ == "__main__":
    for flag in (False, True):
        d = derived_imbalance(flag)
        print(
            f"projections at the expert rate: {flag}: x = {np.round(d.imbalance, 3)}, "
            f"mean {d.mean:.3f}, share {np.round(d.expert_share, 3)}, fit {np.round(d.fit_error, 3)}"
        )
    print(
        f"excess spread: causal halved {excess_time_spread():.3f}, full {excess_time_spread(False):.3f}"
    )
    for x in (0.0, derived_imbalance().mean):
        errors = [f"{row} {100 * (model / seen - 1):+.1f}%" for row, seen, model in grok1_runs(x)]
        print(f"Grok-1 on GB200 at x = {x:.2f}: {', '.join(errors)}")
