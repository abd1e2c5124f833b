"""Switches of the model: the search's knobs and the original implementation's quirks.

Every quirk of spec §14 is a named flag whose default reproduces the original
(Erdil & Schneider-Joseph 2024), so that results agree with the paper point by point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.model.records.kept_hash import KeepsHash, keeps_hash


@keeps_hash
@dataclass(frozen=True, slots=True)
class Quirks(KeepsHash):
    """Behaviours of the original implementation (spec §14); defaults reproduce them."""

    zb_hides_latency_correctly: bool = False
    """Q1 off: zero-bubble layouts hide TP and PP/EP latency behind compute instead of dropping it."""
    tie_tolerance: float = 0.0
    """Q2 off: relative tolerance under which two training times count as tied (0 = exact equality)."""
    whole_sequences: bool = False
    """Q3 off: DP and microbatches split whole sequences, not tokens."""
    model_b_flop_anchor: bool = False
    """Q4 off: Model B anchors r(α) at 3e23 FLOP instead of 3e23 MAC."""
    constant_batch_scales_with_experts: bool = False
    """Q7 off: the constant 4 Mi-token batch law is multiplied by the expert count."""
    reject_non_divisible: bool = False
    """Q8 off: layouts whose batch split leaves a remainder are rejected instead of floored."""


@keeps_hash
@dataclass(frozen=True, slots=True)
class SearchOptions(KeepsHash):
    """How the layout search and the step-time model behave (spec §7, §9, §10)."""

    one_f_one_b: bool = True
    """Try interleaved 1F1B schedules."""
    zero_bubble: bool = True
    """Try zero-bubble (ZB-H2) schedules."""
    interleaving: bool = True
    """1F1B uses maximal interleaving v = L/N_PP; off means v = 1."""
    max_1f1b_microbatch_candidates: int = 4
    max_zb_microbatch_candidates: int = 1
    tp_ff_window: int = 4
    """N_TPff lies in [⌊√N_TP⌋, tp_ff_window · ⌊√N_TP⌋] (spec §10 step 5)."""
    overlap_tp: bool = True
    overlap_pp_ep: bool = True
    overlap_dp: bool = False
    activation_recompute: bool = False
    memory_check: bool = True
    max_cluster_doublings: int = 59
    """Clusters tried are sparsity · 2^i for i = 0 … this (spec §11)."""
    quirks: Quirks = field(default_factory=Quirks)
