"""Scaling laws: model shape, dataset size and batch size as functions of width (spec §1-§2).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §1-§2.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from pipeline.model.records.kept_hash import KeepsHash, keeps_hash
from pipeline.model.records.options import Quirks

ROUNDING_MANTISSAS = (1, 3, 5, 7, 9)
ROUNDING_MAX_EXPONENT = 59
_ROUNDING_GRID = np.array(
    sorted(f * 2**i for f in ROUNDING_MANTISSAS for i in range(ROUNDING_MAX_EXPONENT + 1)),
    dtype=np.float64,
)
"""G = {f · 2^i : f ∈ {1,3,5,7,9}, i ∈ 0…59}, sorted (spec §2.1). Every element is exact in float64."""


def round_to_grid(x: float) -> int:
    """R(x): the element of G nearest to x; the smaller one on an exact tie (spec §2.1)."""
    if not x > 1.0:  # also catches NaN
        return 1
    grid = _ROUNDING_GRID
    hi = int(np.searchsorted(grid, x, side="left"))
    if hi >= grid.size:
        return int(grid[-1])
    lo = hi - 1
    if grid[hi] == x:
        return int(grid[hi])
    return int(grid[lo]) if x - grid[lo] <= grid[hi] - x else int(grid[hi])


def paper_d_model_grid(smallest: int = 12288, largest: int = 12288 * 128) -> list[int]:
    """The model-size grid: every f · 2^i, f odd in 1…15, i in 11…21, within bounds (spec §2.2)."""
    values = {f * 2**i for f in range(1, 16, 2) for i in range(11, 22)}
    return sorted(v for v in values if smallest <= v <= largest)


class BatchLawKind(StrEnum):
    """The batch-size laws of spec §2.4, Zhang et al. (2024), and the one fitted to observed
    runs (docs/sources.md, "Observed batch sizes")."""

    CRITICAL = "critical"
    CONSTANT = "constant"
    DEEPSEEK = "deepseek"
    ZHANG2024 = "zhang2024"
    OBSERVED = "observed"


@dataclass(frozen=True, slots=True)
class BatchLaw:
    """A batch-size law's kind and constants (defaults: the paper's critical batch size).

    - critical: B_tok ≈ reference_tokens · (C / reference_flop)^exponent · √S
    - constant: B_tok = reference_tokens
    - deepseek: B_tok ≈ coefficient · C^exponent · √S (Bi et al. 2024)
    - zhang2024: B_tok ≈ coefficient · D^exponent (Zhang et al. 2024), no sparsity factor
    - observed: B_tok ≈ coefficient · C^exponent · √S, the constants fitted to Epoch AI's batch
      sizes of large runs outside the model (`pipeline.sources.batches`) and passed in as data
    """

    kind: BatchLawKind = BatchLawKind.CRITICAL
    reference_tokens: float = 2048.0 * 2048.0
    reference_flop: float = 3e23
    coefficient: float = 1.0
    exponent: float = 1.0 / 6.0


@dataclass(frozen=True, slots=True)
class ScalingLaws:
    """How shape, experts, data and batch scale with d_model (spec §2.3, §1)."""

    sparse: bool = False
    ff_ratio: int = 4
    depth_coefficient: float = 0.10056
    depth_exponent: float = 0.3751
    experts_at_reference: float = 8.0
    reference_d_model: float = 12288.0
    tokens_per_param: float = 20.0
    seq_len: int = 2048
    kv_heads: int | None = None
    """K/V heads of the realistic physics' transformer at every width (grouped-query attention,
    Ainslie et al. 2023), at most its d_model / 128 heads; None: as many as heads (multi-head
    attention). The paper's model has no attention, so it never reads them."""
    dropout: bool = True
    """Whether the realistic physics' transformer trains with attention and hidden dropout, as
    a run's `TransformerShape.dropout` says of its own: its masks stored for the backward pass
    and its kernels run (docs/model.md R.3, R.4, R.7). Frontier pretraining runs without (the
    presets' `scaling.dropout: false`); the paper's model has no dropout, so it never reads it."""
    batch: BatchLaw = BatchLaw()


@keeps_hash
@dataclass(frozen=True, slots=True)
class ModelShape(KeepsHash):
    """One model of a series: shape, experts, batch (integers exact) and derived totals."""

    d_model: int
    d_ff: int
    n_layers: int
    sparsity: int
    seq_len: int
    batch_seqs: int
    tokens_per_param: float = 20.0
    tokens: float | None = None
    """The tokens the model trains on when they are not the paper's D = 20 · N: under
    realistic physics, 20 times the parameters of the model the step times, attention
    included (`search.counts.grid_counts`, docs/model.md R.7); None: the paper's D."""
    weights: float | None = None
    """The parameters the model holds when they are not the paper's N: under realistic
    physics with attention, the MLPs and the attention projections of the model the step
    times (`search.counts.grid_counts`); their gradients are what data parallelism
    all-reduces and their weights and optimizer state what memory holds. None: the paper's N."""
    kv_heads: int | None = None
    """K/V heads of the transformer realistic physics times at this width (`ScalingLaws.kv_heads`,
    `search.grid.grid_kv_width`); None: as many as its heads."""
    dropout: bool = True
    """Whether the transformer realistic physics times at this width trains with dropout
    (`ScalingLaws.dropout`): its layers' dropout masks and kernels (`search.grid`)."""

    @property
    def n_params(self) -> int:
        """N = 2 · d_model · d_ff · L · S, all experts included (spec §1)."""
        return 2 * self.d_model * self.d_ff * self.n_layers * self.sparsity

    @property
    def held_params(self) -> float:
        """Parameters held, their gradients all-reduced over data parallelism: `weights` when
        set, else N (spec §6.2, §9)."""
        return float(self.n_params) if self.weights is None else self.weights

    @property
    def batch_tokens(self) -> int:
        """B_tok = B_seq · seq_len."""
        return self.batch_seqs * self.seq_len

    @property
    def n_tokens(self) -> float:
        """Training tokens: `tokens` when set, else D = 20 · N (Chinchilla, on total
        parameters, spec §1). The step count is n_tokens / B_tok."""
        return self.paper_tokens if self.tokens is None else self.tokens

    @property
    def paper_tokens(self) -> float:
        """D = 20 · N training tokens (Chinchilla, on total parameters, spec §1)."""
        return self.tokens_per_param * self.n_params

    @property
    def training_flop(self) -> float:
        """C = ((6 · N) · D) / S FLOP with the paper's N and D (spec §1, evaluation order
        spec §15.6): the grid's model-size axis under either physics. What a realistic row
        trains is counted apart (`results.ModelCounts`, `PointResult.counted_flop`)."""
        return ((6 * self.n_params) * self.paper_tokens) / self.sparsity


def n_layers(d_model: int, d_ff: int, laws: ScalingLaws) -> int:
    """L = R(0.10056 · (d_model · d_ff)^0.3751), a fit to Chinchilla shapes (spec §2.3)."""
    return round_to_grid(laws.depth_coefficient * (d_model * d_ff) ** laws.depth_exponent)


def sparsity(d_model: int, d_ff: int, laws: ScalingLaws) -> int:
    """S = 1 (dense) or R(8 · (d_model · d_ff / (4 · 12288²))^(1/2)) experts (spec §2.3)."""
    if not laws.sparse:
        return 1
    reference = laws.ff_ratio * laws.reference_d_model**2
    return round_to_grid(laws.experts_at_reference * (d_model * d_ff / reference) ** 0.5)


def batch_seqs(
    n_params: int, n_experts: int, training_flop: float, laws: ScalingLaws, quirks: Quirks
) -> int:
    """B_seq under the configured batch law (spec §2.4); a multiple of S except for `constant`."""
    law, s, seq_len = laws.batch, n_experts, laws.seq_len
    if law.kind is BatchLawKind.CONSTANT:
        base = int(law.reference_tokens) // seq_len
        return s * base if quirks.constant_batch_scales_with_experts else base  # Q7
    if law.kind is BatchLawKind.CRITICAL:
        growth = (training_flop / law.reference_flop) ** law.exponent
        return s * round_to_grid(s**0.5 * growth * (law.reference_tokens / seq_len) / s)
    if law.kind in (BatchLawKind.DEEPSEEK, BatchLawKind.OBSERVED):
        tokens = s**0.5 * law.coefficient * training_flop**law.exponent
        return s * round_to_grid(tokens / (seq_len * s))
    tokens = law.coefficient * (laws.tokens_per_param * n_params) ** law.exponent
    return s * round_to_grid(tokens / (seq_len * s))


def model_shape(d_model: int, laws: ScalingLaws, quirks: Quirks = Quirks()) -> ModelShape:
    """The full model at width d_model under the scaling laws (spec §2)."""
    d_ff = laws.ff_ratio * d_model
    depth = n_layers(d_model, d_ff, laws)
    experts = sparsity(d_model, d_ff, laws)
    shape = ModelShape(d_model, d_ff, depth, experts, laws.seq_len, 1, laws.tokens_per_param)
    b = batch_seqs(shape.n_params, experts, shape.training_flop, laws, quirks)
    return ModelShape(
        d_model,
        d_ff,
        depth,
        experts,
        laws.seq_len,
        b,
        laws.tokens_per_param,
        kv_heads=laws.kv_heads,
        dropout=laws.dropout,
    )


def batch_exponent_in_flop(laws: ScalingLaws, quirks: Quirks = Quirks()) -> float:
    """α_b: the exponent of B_tok in C along the series, from the laws' exponents (spec §12).

    With x = d_model · d_ff: L ∝ x^pL, S ∝ x^pS, N ∝ x^(1+pL+pS), C ∝ N²/S.
    """
    p_l = laws.depth_exponent
    p_s = 0.5 if laws.sparse else 0.0
    e_n = 1.0 + p_l + p_s
    e_c = 2.0 * e_n - p_s
    kind = laws.batch.kind
    if kind is BatchLawKind.CONSTANT:
        e_b = p_s if quirks.constant_batch_scales_with_experts else 0.0
    elif kind is BatchLawKind.ZHANG2024:
        e_b = laws.batch.exponent * e_n
    else:  # critical, deepseek and observed: √S · C^exponent
        e_b = 0.5 * p_s + laws.batch.exponent * e_c
    return e_b / e_c


def depth_exponent_in_flop(laws: ScalingLaws) -> float:
    """α_L: the exponent of L in C along the series (≈ 0.1364 dense, 0.115 sparse, spec §2.3)."""
    p_s = 0.5 if laws.sparse else 0.0
    e_c = 2.0 * (1.0 + laws.depth_exponent + p_s) - p_s
    return laws.depth_exponent / e_c
