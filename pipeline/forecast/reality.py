"""The reality check: does the model agree with the training runs it reads?

For each observed run that states its compute C, one accelerator, its count n and its hours T
(docs/sources.md, "The reality check"), the model answers the run's own question under each
physics (paper and realistic): the smallest cluster that trains a model of compute C within T
on that accelerator (`pipeline.model.search.search.smallest_cluster`, spec §11), the model of
compute C being the scaling laws' narrowest width that trains at least C under the physics
(`width_at_flop`). Beside it, the run's implied utilization C / (n · F_peak · T). Epoch does not
record a run's number format: where realistic physics at its BF16 default contradicts a run on
an accelerator with an FP8 peak, the run is answered at FP8 too and the more generous answer
kept (`generous_precision`), so a contradiction stands for either format.

A run the model calls infeasible, or for which it needs more than `CONTRADICTION_GPU_RATIO`
times the accelerators the run used, is a contradiction: it happened, so the model (or the
data) is wrong about it. Epoch's accelerator names are mapped here, not in the model: to a
preset by the catalog's `epoch_name` (pipeline/catalog/accelerators.csv) and `EPOCH_ALIASES`
(`hardware_source` "preset"); else to a catalog entry without a preset (accelerators.csv, or
the TPU pods of pipeline/catalog/pods.csv) by its `epoch_name` and `CATALOG_ALIASES`, whose
hardware is built from its catalog values on a template preset (`pipeline.catalog.derived`;
`hardware_source` "catalog"). A run on any other accelerator is a row with a reason, never
dropped.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pipeline.catalog import Entry, parse_catalog
from pipeline.catalog.derived import derived_hardware, template_entry
from pipeline.catalog.load import pods_text
from pipeline.identity import config_hash
from pipeline.io.rows import Provenance
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.results import PointResult
from pipeline.model.records.switches import Precision
from pipeline.model.search.counts import grid_counts, series_shape
from pipeline.model.search.search import smallest_cluster
from pipeline.schema import Scenario
from pipeline.schema.compose import compose_config
from pipeline.schema.projected import preset_spec, shipped_catalog
from pipeline.schema.scenario import load_scenario
from pipeline.sources.epoch import ObservedRun
from pipeline.sources.observe import FRONTIER_RUNS, Observations

REALITY_PHYSICS = ("paper", "realistic")
"""The physics (conf/physics/) every observed run is checked under."""
POSSIBLE_UTILIZATION = 1.0
"""The most a run's implied utilization can be: above it the run states more compute than its
accelerators deliver at their peak in its hours, so its own numbers cannot all be right
(docs/sources.md, "The reality check")."""
OWN_DATA = "whose own numbers imply a utilization above 1"
"""How the change report and the report page name the contradictions whose implied utilization
exceeds `POSSIBLE_UTILIZATION`: contradictions of the run's own data."""
CONTRADICTION_GPU_RATIO = 2.0
"""A feasible run is a contradiction when the model's smallest cluster holds more than this
many times the run's accelerators. 2, because the paper's clusters are S·2^i GPUs (spec §11):
a run the model could train on at most its own count n is given the first power of two above
its need, which is below 2n; so only a need beyond what the run used can pass 2."""
WIDTH_STEP = 128
"""The model widths tried when mapping compute to a size: multiples of the grid's head
dimension (d_head = 128, `pipeline.model.search.grid.GRID_HEAD_DIM`), so realistic physics has
whole heads."""
MAX_WIDTH_STEPS = 1 << 16
"""The widest model tried: 128 · 2^16 = 8.4M (C ≈ 1e40 FLOP dense, far beyond any run)."""
EPOCH_ALIASES: Mapping[str, str] = {
    "NVIDIA A100": "a100_sxm_80gb",
    "NVIDIA V100": "v100_sxm",
    "NVIDIA Tesla V100 SXM2": "v100_sxm",
    "NVIDIA Tesla V100 SXM2 16 GB": "v100_sxm",
    "NVIDIA H100 PCIe": "h100_pcie",
}
"""Names of Epoch's hardware file (pipeline/sources/data/ml_hardware.csv) mapped to a preset
beyond the catalog's own `epoch_name`s: a part the preset is (H100 PCIe), or a name that does not
say the variant. ASSUMPTION: a bare "NVIDIA A100" or "V100" is the SXM part in an 8-GPU NVLink
node, with the larger memory (A100 80 GB, V100 32 GB): the more generous reading, so a
contradiction found under it stands for every variant of the name. Other parts (PCIe and DGX
Station V100s, TPUs, consumer GPUs) have no preset, and their runs a reason."""


CATALOG_ALIASES: Mapping[str, str] = {"NVIDIA P100": "p100_sxm2"}
"""Epoch names mapped to a catalog entry without a preset beyond the entries' own `epoch_name`.
ASSUMPTION: a bare "NVIDIA P100" is the SXM2 part in a DGX-1 (NVLink), the more generous reading,
as for `EPOCH_ALIASES`."""


class HardwareSource:
    """Where a checked run's hardware comes from (the `hardware_source` column)."""

    PRESET = "preset"
    CATALOG = "catalog"


class RealityReason:
    """Why a run's row has no model answer (the `reason` column)."""

    SEVERAL_ACCELERATORS = "several accelerator kinds: the model trains on one"
    NO_PRESET = (
        "no hardware preset (conf/hardware/) or catalog entry (pipeline/catalog/) for this "
        "accelerator"
    )
    BEYOND_WIDTHS = "compute beyond the widest model the scaling laws give"


@dataclass(frozen=True, slots=True)
class RealityCheck:
    """One run under one physics: the model's answer beside what the run states."""

    run: ObservedRun
    physics: str
    preset: str | None
    peak_flop_per_s: float | None
    implied_utilization: float | None
    d_model: int | None
    point: PointResult | None
    reason: str | None
    hardware_source: str | None = None
    """`HardwareSource`: "preset", or "catalog" (`preset` is then the template); None without
    hardware."""
    catalog_entry: str | None = None
    """The catalog entry a "catalog" run's hardware is built from (e.g. tpu_v4)."""
    precision: str | None = None
    """The number format the model answered in (`physics.precision`: bf16, or fp8 from
    `generous_precision`); None without an answer (`reason` set)."""

    @property
    def model_n_gpu(self) -> int | None:
        """The model's smallest cluster, or None without a feasible answer."""
        if self.point is None or self.point.layout is None:
            return None
        return self.point.layout.n_gpu

    @property
    def gpu_ratio(self) -> float | None:
        """The model's smallest cluster over the run's accelerator count."""
        n = self.model_n_gpu
        stated = self.run.hardware_quantity
        return None if n is None or not stated else n / stated

    @property
    def contradiction(self) -> bool:
        """The run happened, yet the model calls it infeasible or needs more than
        `CONTRADICTION_GPU_RATIO` times its accelerators."""
        if self.point is None:
            return False
        if not self.point.feasible:
            return True
        ratio = self.gpu_ratio
        return ratio is not None and ratio > CONTRADICTION_GPU_RATIO


def checkable(run: ObservedRun) -> bool:
    """The run states its accelerator, their count and its hours (its compute it always has)."""
    return bool(run.training_hardware) and bool(run.hardware_quantity) and bool(run.training_time_s)


def epoch_presets() -> dict[str, str]:
    """Epoch's `Hardware name` -> preset: the shipped catalog's `epoch_name` of every entry
    with a preset, then `EPOCH_ALIASES`."""
    named = {
        e.epoch_name: e.preset
        for e in shipped_catalog().entries
        if e.epoch_name is not None and e.preset is not None
    }
    return {**named, **EPOCH_ALIASES}


def implied_utilization(flop: float, n_gpu: int, peak: float, duration_s: float) -> float:
    """u = C / (n · F_peak · T): the fraction of its accelerators' peak a run of C FLOP on n
    of them for T seconds sustained on average (docs/sources.md, "The reality check")."""
    return flop / (n_gpu * peak * duration_s)


def trained_flop(d_model: int, scenario: Scenario) -> float:
    """The FLOP the model of width `d_model` trains under the scenario's physics: the paper's
    C = 6·N·D/S (spec §1), or under realistic physics what its row counts (attention included,
    D = 20 times its own parameters; `search.counts.grid_counts`, docs/model.md R.7)."""
    shape = series_shape(d_model, scenario.laws, scenario.options.quirks, scenario.physics)
    if scenario.physics.is_paper:
        return shape.training_flop
    return grid_counts(scenario.physics, shape).training_flop


def width_at_flop(flop: float, scenario: Scenario) -> int | None:
    """The narrowest width d (a multiple of `WIDTH_STEP`) whose model trains at least `flop`
    under the scenario's laws and physics (`trained_flop`, growing with d), found by bisection;
    None beyond `MAX_WIDTH_STEPS`."""
    lo, hi = 1, MAX_WIDTH_STEPS
    if trained_flop(hi * WIDTH_STEP, scenario) < flop:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if trained_flop(mid * WIDTH_STEP, scenario) >= flop:
            hi = mid
        else:
            lo = mid + 1
    return lo * WIDTH_STEP


@functools.cache
def physics_scenario(physics: str) -> Scenario:
    """The default config's scenario (dense laws, critical batch, conf/config.yaml) under
    `physics`, composed once per process; its hardware and duration are replaced per run."""
    return load_scenario(compose_config([f"physics={physics}"]))


@functools.cache
def epoch_catalog_entries() -> dict[str, Entry]:
    """Epoch's `Hardware name` -> catalog entry without a preset: the shipped catalog's and the
    pods' (pipeline/catalog/pods.csv) by their `epoch_name`, then `CATALOG_ALIASES`."""
    pods = parse_catalog(pods_text(), {})
    entries = [e for e in (*shipped_catalog().entries, *pods.entries) if e.preset is None]
    named = {e.epoch_name: e for e in entries if e.epoch_name is not None}
    by_gpu = {e.gpu: e for e in entries}
    return {**named, **{name: by_gpu[gpu] for name, gpu in CATALOG_ALIASES.items()}}


def catalog_hardware(entry: Entry) -> tuple[str, HardwareSpec]:
    """The template preset's name and the entry's hardware built on it
    (`pipeline.catalog.derived`)."""
    template = template_entry(entry, shipped_catalog())
    if template.preset is None:
        raise ValueError(f"{template.gpu} has no preset")
    return template.preset, derived_hardware(entry, preset_spec(template.preset), entry.gpu)


def check_run(run: ObservedRun, scenario: Scenario, presets: Mapping[str, str]) -> RealityCheck:
    """One checkable run under the scenario's physics (module docstring)."""
    names = run.training_hardware
    name = scenario.physics.name
    if len(names) != 1:
        reason = RealityReason.SEVERAL_ACCELERATORS
        return RealityCheck(run, name, None, None, None, None, None, reason)
    preset = presets.get(names[0])
    if preset is not None:
        check = generous_precision(run, scenario, preset, preset_spec(preset))
        return replace(check, hardware_source=HardwareSource.PRESET)
    entry = epoch_catalog_entries().get(names[0])
    if entry is None:
        return RealityCheck(run, name, None, None, None, None, None, RealityReason.NO_PRESET)
    template, hw = catalog_hardware(entry)
    check = generous_precision(run, scenario, template, hw)
    return replace(check, hardware_source=HardwareSource.CATALOG, catalog_entry=entry.gpu)


def generous_precision(
    run: ObservedRun, scenario: Scenario, preset: str, hw: HardwareSpec
) -> RealityCheck:
    """The run on `hw` (`check_on`) in the scenario's number format, or, where that contradicts
    the run under realistic BF16 physics on an accelerator with an FP8 peak, at FP8
    (`physics.precision`, docs/model.md R.11) where the model answers it there more generously:
    feasible where BF16 is not, else on fewer accelerators.

    Epoch's data do not say in which format a run trained, and frontier runs on Hopper have
    trained in either (Llama 3 405B in BF16, Llama Team 2024 Table 4; DeepSeek-V3 in FP8,
    DeepSeek-AI 2024, arXiv:2412.19437 §3.3). The generous reading, as for the accelerator
    aliases (`EPOCH_ALIASES`): a contradiction stands only when neither format trains the run
    on at most twice its accelerators. The paper's physics has one format, its 16-bit peak."""
    check = check_on(run, scenario, preset, hw)
    physics = scenario.physics
    if (
        not check.contradiction
        or physics.is_paper
        or physics.precision is not Precision.BF16
        or not hw.fp8_flop_per_s
    ):
        return check
    fp8 = replace(scenario, physics=replace(physics, precision=Precision.FP8))
    other = check_on(run, fp8, preset, hw)
    return other if _answer_rank(other) < _answer_rank(check) else check


def _answer_rank(check: RealityCheck) -> tuple[bool, float]:
    """Order of answers to one run, most generous first: feasible, then the fewest GPUs."""
    n = check.model_n_gpu
    return (n is None, math.inf if n is None else float(n))


def check_on(run: ObservedRun, scenario: Scenario, preset: str, hw: HardwareSpec) -> RealityCheck:
    """The run on the preset `hw`: its implied utilization and the model's smallest cluster
    for its compute within its hours."""
    n, duration = run.hardware_quantity, run.training_time_s
    if n is None or duration is None:
        raise ValueError(f"run {run.model!r} does not state its accelerators and hours")
    peak = peak_flop_per_s(hw)
    implied = implied_utilization(run.training_flop, n, peak, duration)
    name = scenario.physics.name
    d_model = width_at_flop(run.training_flop, scenario)
    if d_model is None:
        return RealityCheck(
            run, name, preset, peak, implied, None, None, RealityReason.BEYOND_WIDTHS
        )
    shape = series_shape(d_model, scenario.laws, scenario.options.quirks, scenario.physics)
    point = smallest_cluster(hw, shape, duration, scenario.options, physics=scenario.physics)
    precision = scenario.physics.precision.value
    return RealityCheck(run, name, preset, peak, implied, d_model, point, None, precision=precision)


def reality_checks(
    runs: Sequence[ObservedRun], physics: Sequence[str] = REALITY_PHYSICS
) -> list[RealityCheck]:
    """Every checkable run (`checkable`) under each physics, in the runs' order."""
    chosen = [r for r in runs if checkable(r)]
    if not chosen:
        return []
    presets = epoch_presets()
    checks = []
    for name in physics:
        scenario = physics_scenario(name)
        checks += [check_run(run, scenario, presets) for run in chosen]
    return checks


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def reality_dicts(
    checks: Sequence[RealityCheck], content_hash: str, provenance: Provenance
) -> list[dict[str, Any]]:
    """The `reality` table's rows (docs/schema.md), one per check."""
    rows = []
    for c in checks:
        run, point = c.run, c.point
        cost = point.cost if point is not None else None
        rows.append(
            {
                "physics": c.physics,
                "source": FRONTIER_RUNS,
                "content_hash": content_hash,
                "line": run.line,
                "model": run.model,
                "publication_date": run.publication_date,
                "training_flop": run.training_flop,
                "training_hardware": ",".join(run.training_hardware),
                "hardware_quantity": run.hardware_quantity,
                "training_time_s": run.training_time_s,
                "hardware_utilization": run.hardware_utilization,
                "preset": c.preset,
                "hardware_source": c.hardware_source,
                "catalog_entry": c.catalog_entry,
                "peak_flop_per_s": c.peak_flop_per_s,
                "implied_utilization": _finite(c.implied_utilization),
                "d_model": c.d_model,
                "precision": c.precision,
                "feasible": point.feasible if point is not None else None,
                "infeasible_reason": (
                    str(point.infeasible_reason)
                    if point is not None and point.infeasible_reason is not None
                    else None
                ),
                "model_n_gpu": c.model_n_gpu,
                "gpu_ratio": c.gpu_ratio,
                "model_utilization": cost.utilization if cost is not None else None,
                "model_training_time_s": cost.training_time_s if cost is not None else None,
                "contradiction": c.contradiction,
                "reason": c.reason,
                **_provenance(provenance, c.physics, content_hash, run.line),
            }
        )
    return rows


def _provenance(
    provenance: Provenance, physics: str, content_hash: str, line: int
) -> dict[str, Any]:
    return {
        "run_id": provenance.run_id,
        "config_hash": config_hash(
            {"physics": physics, "content_hash": content_hash, "line": line}
        ),
        "schema_version": int(provenance.schema_version),
        "dmlimits_version": provenance.dmlimits_version,
        "created_at": provenance.created_at,
    }


def observed_reality_dicts(
    observations: Observations, provenance: Provenance
) -> list[dict[str, Any]]:
    """The `reality` rows of the frontier runs a run read (none when it read none)."""
    read = observations.read(FRONTIER_RUNS)
    if read is None:
        return []
    return reality_dicts(reality_checks(observations.runs), read.snapshot.content_hash, provenance)
