"""Each search option and quirk flag changes the answer somewhere, in the documented direction.

One test per `SearchOptions` field and per `Quirks` flag (docs/model.md §7, §8, §9, §11), each
on a case where switching it changes the chosen layout or its time. Q4 (Model B's anchor) and
Q7 (the constant batch law and experts) act outside the search and are tested in
test_limits.py and test_scaling.py; Q5 and Q6 are configuration values, not flags.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.results import Layout, StepCost
from pipeline.model.records.scaling import (
    BatchLaw,
    BatchLawKind,
    ModelShape,
    ScalingLaws,
    model_shape,
)
from pipeline.model.search.search import optimal_layout, smallest_cluster
from tests.presets import preset

DURATION_S = 0.25 * 3.154e7
"""Model A's three months (spec §0)."""
BASE = SearchOptions()
ONE_F_ONE_B_ONLY = replace(BASE, zero_bubble=False)
DENSE_12288 = model_shape(12288, ScalingLaws())
"""Spec §16.3's model: H100 SXM finds its best layout at 2048 GPUs (zero-bubble, m = 128)."""


def best(
    opts: SearchOptions,
    n_gpu: int = 2048,
    shape: ModelShape = DENSE_12288,
    hw: HardwareSpec | None = None,
) -> tuple[Layout, StepCost]:
    found = optimal_layout(hw or preset("h100_sxm"), shape, n_gpu, opts)
    assert found is not None
    return found


def comm_time_s(cost: StepCost) -> float:
    return cost.t_tp_comm_s + cost.t_pp_ep_comm_s + cost.t_dp_comm_s


def test_one_f_one_b_off_is_slower_where_1f1b_wins() -> None:
    """At 2^24 GPUs a 1F1B layout is best; with 1F1B off the search falls back to a slower ZB one."""
    n_gpu = 2**24
    with_1f1b, without = best(BASE, n_gpu), best(replace(BASE, one_f_one_b=False), n_gpu)
    assert not with_1f1b[0].zero_bubble
    assert without[0].zero_bubble
    assert without[1].training_time_s > with_1f1b[1].training_time_s


def test_zero_bubble_off_is_slower() -> None:
    """Without zero-bubble schedules spec §16.3's case pays a 1F1B bubble and trains longer."""
    on, off = best(BASE), best(ONE_F_ONE_B_ONLY)
    assert on[0].zero_bubble
    assert not off[0].zero_bubble
    assert off[1].training_time_s > on[1].training_time_s


def test_interleaving_off_is_slower_under_1f1b() -> None:
    """With v = 1 instead of L/N_PP the 1F1B bubble grows; at 512 GPUs the search drops the pipeline."""
    on = best(ONE_F_ONE_B_ONLY, 512)
    off = best(replace(ONE_F_ONE_B_ONLY, interleaving=False), 512)
    assert on[0].pp_interleave > 1
    assert off[0].pp_interleave == 1
    assert off[1].training_time_s > on[1].training_time_s


def test_fewer_1f1b_microbatch_candidates_is_slower() -> None:
    """Keeping only the smallest m ≥ N_PP loses spec §16.3's model's best 1F1B layout at 512 GPUs."""
    four = best(ONE_F_ONE_B_ONLY, 512)
    one = best(replace(ONE_F_ONE_B_ONLY, max_1f1b_microbatch_candidates=1), 512)
    assert one[0] != four[0]
    assert one[1].training_time_s > four[1].training_time_s


def test_more_zb_microbatch_candidates_fit_tight_memory() -> None:
    """With recompute and 5 GB of HBM, a larger ZB m (smaller stash) fits where the first does not."""
    hw = replace(preset("h100_sxm"), hbm_bytes=5e9)
    opts = replace(BASE, activation_recompute=True)
    one = best(opts, 512, hw=hw)
    four = best(replace(opts, max_zb_microbatch_candidates=4), 512, hw=hw)
    assert not one[0].zero_bubble
    assert four[0].zero_bubble
    assert four[1].training_time_s < one[1].training_time_s


def test_narrower_tp_ff_window_is_slower() -> None:
    """Restricting N_TPff to exactly ⌊√N_TP⌋ removes spec §16.3's TP 4×8 split (N_TPff = 8)."""
    wide, narrow = best(BASE), best(replace(BASE, tp_ff_window=1))
    assert narrow[0] != wide[0]
    assert narrow[1].training_time_s > wide[1].training_time_s


def test_no_tp_overlap_is_slower() -> None:
    """TP bandwidth time exposed instead of hidden behind compute lengthens the best run."""
    assert best(replace(BASE, overlap_tp=False))[1].training_time_s > best(BASE)[1].training_time_s


def test_no_pp_ep_overlap_is_slower() -> None:
    """PP/EP bandwidth time exposed instead of hidden behind compute lengthens the best run."""
    off = best(replace(BASE, overlap_pp_ep=False))
    assert off[1].training_time_s > best(BASE)[1].training_time_s


def test_dp_overlap_is_faster() -> None:
    """Overlapping the DP all-reduce with the pipeline shortens the best run and changes the layout."""
    on, off = best(replace(BASE, overlap_dp=True)), best(BASE)
    assert on[0] != off[0]
    assert on[1].training_time_s < off[1].training_time_s


def test_activation_recompute_is_slower() -> None:
    """Recompute multiplies T_mm by 4/3 and TP, PP/EP costs by 1.5 (docs/model.md §7)."""
    on, off = best(replace(BASE, activation_recompute=True)), best(BASE)
    assert on[1].t_compute_s == off[1].t_compute_s * (4.0 / 3.0)
    assert on[1].training_time_s > off[1].training_time_s


def test_memory_check_off_finds_a_layout_memory_cannot_hold() -> None:
    """d_model 49152 (1.1e13 parameters) does not fit 512 H100s, unless the check is off (spec §9)."""
    shape = model_shape(49152, ScalingLaws())
    hw = preset("h100_sxm")
    assert optimal_layout(hw, shape, 512, BASE) is None
    assert optimal_layout(hw, shape, 512, replace(BASE, memory_check=False)) is not None


def test_fewer_cluster_doublings_make_a_size_infeasible() -> None:
    """Spec §16.3's model needs 2^11 GPUs; clusters only up to 2^10 leave it infeasible."""
    hw = preset("h100_sxm")
    assert smallest_cluster(hw, DENSE_12288, DURATION_S, BASE).feasible
    short = smallest_cluster(hw, DENSE_12288, DURATION_S, replace(BASE, max_cluster_doublings=10))
    assert not short.feasible


def test_q1_off_makes_zero_bubble_pay_latency() -> None:
    """Q1 off: with 1000× network latency, ZB layouts pay max(busy, latency) and the best run slows."""
    h100 = preset("h100_sxm")
    hw = replace(h100, net_latency_s=tuple(1000.0 * t for t in h100.net_latency_s))
    quirk = best(BASE, 8192, hw=hw)
    fixed = best(replace(BASE, quirks=Quirks(zb_hides_latency_correctly=True)), 8192, hw=hw)
    assert quirk[0].zero_bubble
    assert quirk[1].t_latency_paid_s < quirk[1].t_latency_s  # Q1: TP and PP/EP latency dropped
    assert fixed[0] != quirk[0]
    assert fixed[1].training_time_s > quirk[1].training_time_s


def test_q2_tie_tolerance_prefers_less_communication() -> None:
    """Q2 off: times within 1e-3 tie and the layout with the smallest communication sum wins."""
    exact = best(BASE, 512)
    tolerant = best(replace(BASE, quirks=Quirks(tie_tolerance=1e-3)), 512)
    assert tolerant[0] != exact[0]
    assert exact[1].training_time_s < tolerant[1].training_time_s
    assert tolerant[1].training_time_s <= exact[1].training_time_s * (1.0 + 1e-3)
    assert comm_time_s(tolerant[1]) < comm_time_s(exact[1])


def test_q3_whole_sequences_keeps_nanobatches_whole() -> None:
    """Q3 off: at 32768 GPUs the best nanobatch (3584 tokens) is not whole sequences; with whole
    sequences it is 2048 tokens, one sequence, and the run is slower."""
    tokens = best(BASE, 32768)
    whole = best(replace(BASE, quirks=Quirks(whole_sequences=True)), 32768)
    assert tokens[0].nanobatch_tokens % DENSE_12288.seq_len != 0
    assert whole[0].nanobatch_tokens % DENSE_12288.seq_len == 0
    assert whole[1].training_time_s > tokens[1].training_time_s


def test_q8_reject_non_divisible_rejects_floored_batches() -> None:
    """Q8 off: a constant 4 Mi-token batch over S = 9 experts never divides, so no layout is left."""
    laws = ScalingLaws(sparse=True, batch=BatchLaw(BatchLawKind.CONSTANT, exponent=0.0))
    shape = model_shape(14336, laws)
    n_gpu = shape.sparsity * 2**10
    floored = best(BASE, n_gpu, shape)
    lay = floored[0]
    dp = lay.n_gpu // (
        (lay.tp_model[0] * lay.tp_model[1])
        * (lay.tp_ff[0] * lay.tp_ff[1])
        * (lay.pp[0] * lay.pp[1])
        * (lay.ep[0] * lay.ep[1])
    )
    assert shape.sparsity == 9
    assert lay.nanobatch_tokens * dp * lay.microbatches * shape.sparsity < shape.batch_tokens
    rejecting = replace(BASE, quirks=Quirks(reject_non_divisible=True))
    assert optimal_layout(preset("h100_sxm"), shape, n_gpu, rejecting) is None
