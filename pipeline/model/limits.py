"""Limits of a series: thresholds of the simulator and the closed forms of Model B (spec §11-§12).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137, §3 (the latency bound)
and appendix (T_crit, T_limit); spec §11-§12, quirk Q4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.model.compute.matmul import WORD_BYTES
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.options import Quirks
from pipeline.model.records.results import InfeasibleReason, PointResult, SeriesLimits
from pipeline.model.records.scaling import (
    BatchLaw,
    BatchLawKind,
    ScalingLaws,
    batch_exponent_in_flop,
    depth_exponent_in_flop,
)
from pipeline.model.search.search import UTILIZATION_FLOOR

LINEAR_REGIME_FRACTION = 0.8
"""The linear-scaling regime ends at the first utilization ≤ 0.8 · u_eff (spec §11)."""
JULIAN_YEAR_S = 365.25 * 86400
"""Model B's year, 31,557,600 s (quirk Q5; Model A's is `scaling.year_s`, 3.154e7 s)."""
MODEL_B_DURATION_S = JULIAN_YEAR_S / 4
"""τ_B = 7,889,400 s: Model B's three months use a 365.25-day year (quirk Q5)."""
PAPER_TOKENS_PER_PARAM = 20.0
"""k = D / N of the paper's Model B: D = 20·N, so MAC = 3·k·N² = 60·N² (spec §12)."""
REFERENCE_BATCH_TOKENS = 4e6
REFERENCE_LAYERS = 100.0
REFERENCE_FLOP = 3e23
CLOSED_FORM_NETWORK_HOPS = 4
"""Two dependent hops forward and two backward per layer (spec §12)."""
LATENCY_BOUND_FLOP_PER_PARAM_LAYER = 80.0
"""The 80 of N ≤ t_train · B / (80 · n_layer · t_latency) (paper §3)."""


class SeriesEnd(StrEnum):
    """How a series ended: stored as these strings in `thresholds.end_reason`."""

    WALL = "wall"
    """A grid size is infeasible: no cluster trains it within the duration (or within the
    power budget, or no layout fits); `first_infeasible_flop` is its compute."""
    UTILIZATION_COLLAPSE = "utilization_collapse"
    """A feasible grid size runs below `UTILIZATION_FLOOR` (0.001): the sweep stops there
    (spec §11) and that size counts as the wall (`wall_flop`)."""
    END_OF_GRID = "end_of_grid"
    """Every grid size is feasible above the floor: no wall within the grid."""
    CLUSTER_CAP = "cluster_cap"
    """A grid size needs more GPUs than the search may try (`parallelism.max_cluster_doublings`):
    its compute floor alone exceeds S · 2^i_max (reason `exceeds_cluster_cap`), or no cluster
    the search allows trains it within the duration and it follows a size whose smallest
    cluster lay in the cap's doubling, above half of S · 2^i_max. The cap, not the physics,
    ended the series; no wall (`wall_flop` null), `first_infeasible_flop` that size
    (`capped_at`)."""
    RUN = "run"
    """A concrete run (`run=`): one point, no grid of sizes to end, so no wall (`wall_flop`
    null); the run's compute is `last_feasible_flop` if it trains within the duration, else
    `first_infeasible_flop`."""


class LinearEndBasis(StrEnum):
    """Which utilization the linear-scaling end is measured against (`thresholds.linear_end_basis`)."""

    U_EFF = "u_eff"
    """The paper's rule: the first point at or below 0.8 · u_eff (spec §11)."""
    PEAK = "peak"
    """The first point after the series' own peak u_max at or below 0.8 · u_max: realistic
    physics, and paper physics on a series that starts below 0.8 · u_eff."""


def series_end(
    points: Sequence[PointResult], max_doublings: int | None = None
) -> tuple[SeriesEnd, int | None]:
    """How the series ended and the index of the point it ended at: the first size that is
    infeasible or feasible below the utilization floor, whichever comes first (its wall, or
    the size the search's cluster cap of `max_doublings` stopped: `capped_at`; None: no cap
    given); None at the end of the grid. A size a fixed layout does not fit
    (`layout_does_not_divide`: its degrees do not divide that model) is no wall: larger sizes
    it does fit may run (docs/schema.md, `thresholds.wall_flop`)."""
    before: PointResult | None = None
    for i, p in enumerate(points):
        if p.infeasible_reason is InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE:
            continue
        if not p.feasible:
            if capped_at(before, p, max_doublings):
                return SeriesEnd.CLUSTER_CAP, i
            return SeriesEnd.WALL, i
        if p.cost is not None and p.cost.utilization < UTILIZATION_FLOOR:
            return SeriesEnd.UTILIZATION_COLLAPSE, i
        before = p
    return SeriesEnd.END_OF_GRID, None


def capped_at(before: PointResult | None, point: PointResult, max_doublings: int | None) -> bool:
    """Whether the infeasible `point` is the search's cluster cap rather than a wall: its
    compute floor alone needs more GPUs than the cap (`exceeds_cluster_cap`), or no cluster up
    to S · 2^`max_doublings` trains it (`no_cluster_within_duration`) and the size `before` it
    needed more than half that cap (the cap's doubling, docs/model.md §9.5)."""
    if point.infeasible_reason is InfeasibleReason.EXCEEDS_CLUSTER_CAP:
        return True
    if max_doublings is None or before is None or before.layout is None:
        return False
    cap = point.shape.sparsity * 2.0**max_doublings
    return point.infeasible_reason is InfeasibleReason.NO_CLUSTER and 2 * before.layout.n_gpu > cap


def linear_end_u_eff_flop(points: Sequence[PointResult], u_eff: float) -> float | None:
    """C of the first feasible point with utilization ≤ 0.8 · u_eff; None if none (spec §11)."""
    return next(
        (
            p.counted_flop
            for p in points
            if p.feasible
            and p.cost is not None
            and p.cost.utilization <= LINEAR_REGIME_FRACTION * u_eff
        ),
        None,
    )


def starts_in_linear_regime(points: Sequence[PointResult], u_eff: float) -> bool:
    """True when the first feasible point runs above 0.8 · u_eff, so the paper's rule measures
    a drop from the regime; False when the series never was in it (e.g. B200 under
    physics=paper, whose best utilization is 0.41 < 0.54) or has no feasible point."""
    first = next((p for p in points if p.feasible and p.cost is not None), None)
    return (
        first is not None
        and first.cost is not None
        and (first.cost.utilization > LINEAR_REGIME_FRACTION * u_eff)
    )


def series_limits(
    points: Sequence[PointResult],
    u_eff: float,
    paper_rule: bool = True,
    max_doublings: int | None = None,
    run: bool = False,
) -> SeriesLimits:
    """Linear-scaling end, last feasible and first infeasible compute, and how the series
    ended (spec §11).

    The linear-scaling end follows the paper (`linear_end_u_eff_flop`) when `paper_rule` is
    set and the series starts in the regime; otherwise it is measured from the series' own
    peak (`linear_end_after_peak_flop`), and `linear_end_basis` says which. A series that
    starts below 0.8 · u_eff would otherwise report its first grid size as its linear end.
    With `max_doublings`, the search's cluster cap, a series the cap ended has no wall
    (`SeriesEnd.CLUSTER_CAP`); nor has a concrete `run` (`SeriesEnd.RUN`), which has no
    linear-scaling end either: one point and no grid of sizes, so no regime to end or outlast
    (linear end and basis None). Every limit is read from the points up to the one the series
    ended at, that one included: those a sweep that stops at its wall records
    (`search.sweep_series`), so a whole-grid series (`output.whole_grid`), which evaluates the
    sizes past it too, has the same limits.
    """
    end, at = (SeriesEnd.RUN, None) if run else series_end(points, max_doublings)
    if at is not None:
        points = points[: at + 1]
    wall = None if at is None or end is SeriesEnd.CLUSTER_CAP else points[at]
    feasible = [p for p in points if p.feasible and p.cost is not None]
    if run or not feasible:
        basis, linear_end = None, None
    elif paper_rule and starts_in_linear_regime(points, u_eff):
        basis, linear_end = LinearEndBasis.U_EFF, linear_end_u_eff_flop(points, u_eff)
    else:
        basis, linear_end = LinearEndBasis.PEAK, linear_end_after_peak_flop(points)
    infeasible = [p for p in points if not p.feasible]
    reason = wall.infeasible_reason if wall is not None and end is SeriesEnd.WALL else None
    return SeriesLimits(
        linear_end_flop=linear_end,
        last_feasible_flop=feasible[-1].counted_flop if feasible else None,
        first_infeasible_flop=infeasible[0].counted_flop if infeasible else None,
        max_utilization=max((p.cost.utilization for p in feasible if p.cost), default=None),
        wall_flop=None if wall is None else wall.counted_flop,
        end_reason=str(end),
        wall_reason=None if reason is None else str(reason),
        linear_end_basis=None if basis is None else str(basis),
    )


def linear_end_after_peak_flop(points: Sequence[PointResult]) -> float | None:
    """C of the first feasible point after the series' best utilization u_max from which
    every later feasible point's utilization is at most 0.8 · u_max; None if the series ends
    above it (realistic physics, docs/model.md R.7).

    The extensions lower utilization everywhere and per-GPU memory lowers it most at small
    sizes, so the linear regime is measured from its peak rather than from u_eff. A realistic
    size's best layout rides on how its degrees divide the batch and the layers, so its
    utilization scatters by a few tens of percent from one size to the next: a size below
    0.8 · u_max that later sizes climb back above ends no regime, where the paper's smooth
    curve, once below, stays below.
    """
    feasible = [p for p in points if p.feasible and p.cost is not None]
    if not feasible:
        return None
    utils = [p.cost.utilization for p in feasible if p.cost is not None]
    peak = max(range(len(utils)), key=utils.__getitem__)
    threshold = LINEAR_REGIME_FRACTION * utils[peak]
    end = None  # the first of the points at the series' end that all stay at or below it
    for i in range(len(utils) - 1, peak, -1):
        if utils[i] > threshold:
            break
        end = i
    return None if end is None else feasible[end].counted_flop


def series_alpha(laws: ScalingLaws, quirks: Quirks = Quirks()) -> float:
    """α = α_b − α_L: batch exponent minus depth exponent in C (≈ 0.0303 dense default, spec §12)."""
    return batch_exponent_in_flop(laws, quirks) - depth_exponent_in_flop(laws)


def closed_form_latency_s(hw: HardwareSpec) -> float:
    """t_lat = matmul latency + 4 hops at the slowest level (9 µs on H100, spec §12).

    The paper reads its 9 µs as 4.5 µs matmul latency plus four 1.125 µs network hops;
    taking the hop latency from the hardware lets what-if presets move the closed forms.
    """
    return hw.matmul_latency_s + CLOSED_FORM_NETWORK_HOPS * max(hw.net_latency_s)


@dataclass(frozen=True, slots=True)
class Anchors:
    """Model B's reference point and budget (spec §12): B = b0 and L = L0 at T0, over τ_B,
    for a dense model trained on k = `tokens_per_param` tokens per parameter."""

    duration_s: float = MODEL_B_DURATION_S
    b0_tokens: float = REFERENCE_BATCH_TOKENS
    l0_layers: float = REFERENCE_LAYERS
    t0_flop: float = REFERENCE_FLOP
    flop_anchor: bool = False
    """Quirk Q4 off: anchor r(α) at T0 FLOP rather than T0 MAC."""
    tokens_per_param: float = PAPER_TOKENS_PER_PARAM
    """k = D / N (20 in the paper): MAC = 3·k·N²."""


PAPER_BATCH_LAWS: dict[BatchLawKind, BatchLaw] = {
    BatchLawKind.CRITICAL: BatchLaw(),
    BatchLawKind.CONSTANT: BatchLaw(BatchLawKind.CONSTANT, reference_tokens=2048.0 * 2048.0),
    BatchLawKind.DEEPSEEK: BatchLaw(BatchLawKind.DEEPSEEK, coefficient=0.2920, exponent=0.3271),
    BatchLawKind.ZHANG2024: BatchLaw(BatchLawKind.ZHANG2024, coefficient=17.75, exponent=0.47),
}
"""Each batch law at the constants of conf/batch/ (spec §2.4; Bi et al. 2024; Zhang et al.
2024): the laws Model B's anchor b0 = 4e6 tokens stands for (`model_b_batch_tokens`)."""


def dense_batch_tokens(law: BatchLaw, flop: float, tokens_per_param: float) -> float:
    """B_tok of a dense model of C = `flop` under `law`, unrounded (spec §2.4 without R).

    critical: b_ref·(C/C_ref)^e; constant: b_ref; deepseek and observed: c·C^e; zhang2024:
    c·D^e with D = k·N and C = 6·N·D = 6·k·N², so D = (k·C/6)^(1/2).
    """
    if law.kind is BatchLawKind.CONSTANT:
        return float(law.reference_tokens)
    if law.kind is BatchLawKind.CRITICAL:
        return float(law.reference_tokens * (flop / law.reference_flop) ** law.exponent)
    if law.kind in (BatchLawKind.DEEPSEEK, BatchLawKind.OBSERVED):
        return float(law.coefficient * flop**law.exponent)
    return float(law.coefficient * ((tokens_per_param * flop / 6.0) ** 0.5) ** law.exponent)


def model_b_batch_tokens(b0_tokens: float, t0_flop: float, laws: ScalingLaws) -> float:
    """b0 moved with the scenario's batch law: b0 · B_law(T0) / B_paper(T0) tokens.

    The paper anchors every law at b0 = 4e6 tokens at T0 = 3e23 FLOP (spec §12), the
    critical law's 4,194,304 rounded. Changing a law's constants (a larger
    `reference_tokens`, another coefficient, or tokens per parameter under zhang2024)
    scales its batch at T0, and b0 by the same factor; the shipped laws keep b0 exactly. A law
    with no paper constants (`observed`, fitted to runs) is set against the critical law, whose
    batch at T0 b0 is: b0 moves by the observed batch at T0 over the critical one.
    """
    reference = PAPER_BATCH_LAWS.get(laws.batch.kind, PAPER_BATCH_LAWS[BatchLawKind.CRITICAL])
    paper = dense_batch_tokens(reference, t0_flop, PAPER_TOKENS_PER_PARAM)
    scenario = dense_batch_tokens(laws.batch, t0_flop, laws.tokens_per_param)
    return b0_tokens * (scenario / paper)


def model_b_duration_s(months: float) -> float:
    """τ_B = months · (365.25 d / 12): a budget in months on Model B's year (quirk Q5).

    3 months give 7,889,400 s exactly (Model A's 3 months are 7.885e6 s on its 3.154e7 s year).
    """
    return months * JULIAN_YEAR_S / 12.0


def batch_per_layer_anchor(alpha: float, anchors: Anchors = Anchors()) -> float:
    """r(α) = (b0/L0)·T0^(−α), so that B/L = r(α)·MAC^α (spec §12).

    The original raises r against MAC = C/2 while anchoring at T0 as given (Q4);
    `flop_anchor` uses r(α)·(2·MAC)^α instead, i.e. multiplies r by 2^α.
    """
    r = float((anchors.b0_tokens / anchors.l0_layers) * anchors.t0_flop ** (-alpha))
    return float(r * 2.0**alpha) if anchors.flop_anchor else r


def t_limit_flop(alpha: float, t_lat_s: float, anchors: Anchors = Anchors()) -> float:
    """T_limit = 2·[(3/(16k))·(r(α)·τ/t_lat)²]^(1/(1−2α)) FLOP: the latency wall (spec §12).

    From B/L = r·MAC^α, D = k·N, MAC = 3·k·N² and a step of at least 4·L·t_lat:
    (k·N/B)·4·L·t_lat ≤ τ gives N ≤ r·τ·MAC^α/(4·k·t_lat), and N = (MAC/(3k))^(1/2)
    gives MAC^(1−2α) ≤ (3/(16k))·(r·τ/t_lat)²; the paper's k = 20 gives its 3/320.
    The training time then grows as MAC^(1/2 − α): for α ≥ 1/2, or without latency,
    nothing bounds the compute and T_limit is infinite.
    """
    if alpha >= 0.5 or t_lat_s <= 0.0:
        return math.inf
    r = batch_per_layer_anchor(alpha, anchors)
    ratio = r * anchors.duration_s / t_lat_s
    constant = 3.0 / (16.0 * anchors.tokens_per_param)
    mac = (constant * ratio**2) ** (1.0 / (1.0 - 2.0 * alpha))
    return float(2.0 * mac)


def node_nanobatch_tokens(hw: HardwareSpec) -> float:
    """n = M / W_mem: tokens per matmul that balance arithmetic and HBM traffic (spec §12)."""
    return _node_mac_per_s(hw) / _node_words_per_s(hw.hbm_bandwidth_bytes_per_s, hw)


def node_shard_side(hw: HardwareSpec) -> float:
    """a = 4·M / (3·W_net): the smallest useful 2-D TP weight-shard side (spec §12)."""
    return 4.0 * _node_mac_per_s(hw) / (3.0 * _node_words_per_s(_inter_node_bandwidth(hw), hw))


def _node_gpus(hw: HardwareSpec) -> int:
    return hw.level_sizes[0] if hw.level_sizes else 1


def _node_mac_per_s(hw: HardwareSpec) -> float:
    """M = G·F_peak/2 MAC/s for a node of G GPUs."""
    return _node_gpus(hw) * peak_flop_per_s(hw) / 2.0


def _node_words_per_s(bandwidth: float, hw: HardwareSpec) -> float:
    """W = G·bandwidth/(2w) words/s."""
    return _node_gpus(hw) * bandwidth / (2.0 * WORD_BYTES)


def _inter_node_bandwidth(hw: HardwareSpec) -> float:
    """Level-1 bandwidth, or the only level's on a flat network."""
    bws = hw.net_bandwidth_bytes_per_s
    return bws[1] if len(bws) > 1 else bws[0]


def t_crit_flop(hw: HardwareSpec, alpha: float, anchors: Anchors = Anchors()) -> float:
    """T_crit = 2·[(1/(48k))·(r(α)·M·τ/(a²·n))²]^(1/(1−2α)) FLOP: where data movement starts
    to bind (spec §12).

    The nodes needed, MAC/(M·τ), reach the largest useful count (B/n)·(d_model·d_ff)/(2a²)
    = (B/L)·N/(4·a²·n) (N = 2·d_model·d_ff·L); with B/L = r·MAC^α and N = (MAC/(3k))^(1/2)
    that is MAC^(1−2α) = (1/(48k))·(r·M·τ/(a²·n))², the paper's 1/960 at k = 20. M is the
    node's peak rate, as in the paper: u_eff does not enter.
    """
    if alpha >= 0.5:  # the useful cluster outgrows the needed one at every compute
        return math.inf
    r = batch_per_layer_anchor(alpha, anchors)
    m = _node_mac_per_s(hw)
    a = node_shard_side(hw)
    n = node_nanobatch_tokens(hw)
    if a == 0.0 or n == 0.0:  # infinite network or memory bandwidth: no critical compute
        return math.inf
    constant = 1.0 / (48.0 * anchors.tokens_per_param)
    mac = (constant * (r * m * anchors.duration_s / (a * a * n)) ** 2) ** (
        1.0 / (1.0 - 2.0 * alpha)
    )
    return float(2.0 * mac)


def latency_bound_params(
    duration_s: float, batch_tokens: float, n_layers: float, t_latency_s: float
) -> float:
    """N ≤ t_train · B / (80 · n_layer · t_latency): the simple latency bound (paper §3).

    3 months, 4M-token batches, 120 layers and 9 µs give about 4e14 parameters.
    """
    return duration_s * batch_tokens / (LATENCY_BOUND_FLOP_PER_PARAM_LAYER * n_layers * t_latency_s)


def linear_end_beyond_grid(limits: SeriesLimits) -> bool | None:
    """Whether linear scaling outlasted a series' recorded points (`thresholds` and `frontier`
    `linear_end_beyond_grid`): true when some point is feasible and none fell to the linear end
    (`linear_end_flop` None); false when it was reached or when no point is feasible (nothing
    ran, so nothing lasted past the grid); None for a concrete run (`SeriesEnd.RUN`: one point
    and no grid, nothing to outlast)."""
    if limits.end_reason == SeriesEnd.RUN:
        return None
    return limits.linear_end_flop is None and limits.last_feasible_flop is not None
