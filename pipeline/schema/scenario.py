"""The composed config -> one Scenario: everything the model needs, validated, in SI units.

`load_scenario` is the schema's public entry: it reads the groups chosen in
conf/config.yaml (hardware, scaling, batch, parallelism, physics, run) and the root
`closed_form` node; physics and run may be absent (the paper's model on the grid). Other root nodes (output, execution, sweep) belong to the stages that use them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pipeline.model.compute.efficiency import (
    TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD,
    has_tensor_memory,
    precision_speedup,
)
from pipeline.model.limits import model_b_duration_s
from pipeline.model.records.closed_form import ClosedFormSettings
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.power import PowerSpec
from pipeline.model.records.results import Layout
from pipeline.model.records.run import RunSpec
from pipeline.model.records.scaling import BatchLaw, BatchLawKind, ScalingLaws, model_shape
from pipeline.model.records.switches import Fusion, Physics, Precision
from pipeline.schema import bounds
from pipeline.schema.closed_form import closed_form_from_config
from pipeline.schema.errors import MISSING, ConfigError
from pipeline.schema.hardware import hardware_from_config
from pipeline.schema.memo import SectionMemo, read_now
from pipeline.schema.parallelism import check_layout_levels, layout_from_config, options_from_config
from pipeline.schema.physics import PAPER_SETTINGS, PhysicsSettings, physics_from_config
from pipeline.schema.power import power_from_config
from pipeline.schema.run import check_run_batch, check_run_precision, run_from_config
from pipeline.schema.scaling import ScalingSettings, batch_law_from_config, scaling_from_config

GROUPS = ("hardware", "scaling", "batch", "parallelism", "physics", "run")
"""Config groups the scenario is built from (conf/<group>/<choice>.yaml)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One fully specified model setting (spec §13): hardware, laws, grid, search switches."""

    hardware_name: str
    """The preset's ``name`` (equal to its file name in conf/hardware/)."""
    hardware: HardwareSpec
    scaling_name: str
    """The scaling group's ``name``: "dense" or "sparse" for the shipped files."""
    laws: ScalingLaws
    """Shape, expert, data and batch laws; ``laws.batch`` is the batch group's law."""
    batch_law_name: str
    duration_s: float
    """Training-time budget τ of Model A in seconds: duration_months · year_s / 12 (3 months:
    7.885e6 s), or duration_days · 86,400, or duration_hours · 3,600."""
    year_s: float
    """Model A's year (3.154e7 s, quirk Q5), also the unit of reported months (year_s / 12)."""
    d_models: tuple[int, ...]
    """The model-size grid, strictly ascending."""
    options: SearchOptions
    """Search and step-time switches, including the quirk flags (``options.quirks``)."""
    fixed_layout: Layout | None
    """The layout to evaluate as is when parallelism=fixed, else None (search). Its
    ``pp_interleave`` and ``nanobatch_tokens`` are 0 placeholders: they depend on the model
    shape, so the evaluator derives them per model size. Its levels are checked against
    the hardware here; whether it fits each model is the model's `layout_misfit`."""
    closed_form: ClosedFormSettings
    physics: Physics = field(default_factory=Physics)
    """Which extensions of the paper's model are on (conf/physics/); the default is the paper."""
    run: RunSpec | None = None
    """One concrete training run to evaluate (conf/run/), or None for the scaling-law grid."""
    power: PowerSpec = field(default_factory=PowerSpec)
    """How a point's power is estimated, and the site's budget (`power:`, `constraints:`)."""


def _child(cfg: object, key: str) -> object:
    """The node under a root key, or a ConfigError if the root lacks it."""
    allowed = f"required config group (conf/{key}/)" if key in GROUPS else "required section"
    try:
        present = isinstance(cfg, DictConfig | Mapping) and key in cfg
        value = cfg[key] if present else None  # type: ignore[index]
    except OmegaConfBaseException as err:
        raise ConfigError(key, MISSING, f"{allowed}; {str(err).splitlines()[0]}") from err
    if value is None:
        raise ConfigError(key, MISSING, allowed)
    return value


def check_largest_model(d_model: int, laws: ScalingLaws, options: SearchOptions) -> None:
    """The grid's largest model has a finite shape and compute, or a ConfigError on the grid.

    Each value is bounded (`pipeline.schema.bounds`), but the laws multiply them: a huge width
    or steep exponent could still overflow the parameter count or training compute to inf.
    """
    try:
        shape = model_shape(d_model, laws, options.quirks)
        values: tuple[float, ...] = (
            float(shape.n_params),
            shape.training_flop,
            float(shape.n_layers),
            float(shape.batch_tokens),
        )
    except (OverflowError, ValueError, ZeroDivisionError):
        values = (math.inf,)
    if not all(math.isfinite(v) and v <= bounds.MAX_FLOP for v in values):
        raise ConfigError(
            "scaling.grid",
            d_model,
            f"the largest model (d_model = {d_model}) overflows the scaling laws: its parameter "
            f"count or training compute is not finite or above {bounds.MAX_FLOP:.0e}",
        )


@dataclass(frozen=True, slots=True)
class InertSwitch:
    """An extension that acts only through the hardware, another setting or the grid's models:
    its `name` in `Physics`, the value that turns it off, whether it can do nothing (`idle`, of
    the physics, the hardware and the scaling laws) and why not."""

    name: str
    off: object
    idle: Callable[[Physics, HardwareSpec, ScalingLaws], bool]
    reason: Callable[[HardwareSpec], str]


def _needs(what: str) -> Callable[[HardwareSpec], str]:
    """The reason of a switch that needs `what` to act."""
    return lambda hw: (
        f"does nothing on {hw.name} without {what}; alone it would change nothing but the "
        "paper's code path: set it false"
    )


INERT_SWITCHES = (
    InertSwitch(
        "tensor_memory",
        False,
        lambda _, hw, __: not has_tensor_memory(hw),
        lambda hw: (
            f"{hw.name} has no tensor memory (Blackwell-class hardware only: "
            f"hardware.flop_per_clock_per_thread >= {TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD:g}); "
            "the switch would change nothing but the paper's code path: set it false"
        ),
    ),
    InertSwitch(
        "precision",
        Precision.BF16,
        lambda _, hw, __: hw.fp8_flop_per_s is None,
        lambda hw: (
            f"{hw.name} has no FP8 tensor peak (hardware.dense_fp8_tflop_per_s unset: Hopper "
            "and later have one); FP8 would change nothing but the paper's code path: set bf16"
        ),
    ),
    InertSwitch(
        "cp_all_gather",
        False,
        lambda p, _, __: p.max_context_parallel <= 1,
        _needs("context parallelism, physics.max_context_parallel > 1"),
    ),
    InertSwitch(
        "small_microbatches",
        False,
        lambda p, _, __: not p.whole_sequences,
        _needs("physics.whole_sequences"),
    ),
    InertSwitch(
        "batch_at_row_flop",
        False,
        lambda p, _, __: not (p.attention or p.whole_sequences),
        _needs("physics.attention or physics.whole_sequences (else a row trains the paper's C)"),
    ),
    InertSwitch(
        "fp8_params",
        False,
        lambda p, _, __: p.precision is not Precision.FP8,
        _needs("FP8 GEMMs, physics.precision=fp8"),
    ),
    InertSwitch(
        "fp8_current_scaling",
        False,
        lambda p, _, __: p.precision is not Precision.FP8 or not p.memory_bound_ops,
        _needs("FP8 GEMMs and memory-bound operators, physics.precision=fp8 and memory_bound_ops"),
    ),
    InertSwitch(
        "nic_striping",
        False,
        lambda _, hw, __: not hw.level_sizes,
        _needs("nodes, a network level below the top"),
    ),
    InertSwitch(
        "expert_imbalance",
        0.0,
        lambda _, __, laws: not laws.sparse,
        lambda _: (
            "does nothing without experts (scaling=sparse; a run reads run.expert_imbalance); "
            "alone it would change nothing but the paper's code path: set 0"
        ),
    ),
)
"""The extensions that act only through the hardware (tensor memory on Blackwell, docs/model.md
R.8; FP8 where the GPU has an FP8 peak, R.11), through another setting (docs/configuration.md)
or through the grid's experts (the busiest expert rank's excess, R.5.1)."""


def check_inert_switches(physics: Physics, hardware: HardwareSpec, laws: ScalingLaws) -> None:
    """ConfigError, naming the first, when the only extensions on are switches that can do
    nothing here (`INERT_SWITCHES`): they would change no rule the step applies, only take the
    paper's model off its own code path for Part II's step and move its answer (the H100 dense
    wall from 5.08e31 to 4.07e29 FLOP). Beside an extension that acts they change nothing and
    are accepted (`physics=realistic` on H100, without tensor memory). A `fusion` other than
    the paper preset's on the paper's model is refused too: it acts only through
    `memory_bound_ops`, so it would change nothing at all, and a sweep over it would give
    identical series."""
    if physics.is_paper:
        if physics.fusion is not Fusion.FUSED:
            raise ConfigError(
                "physics.fusion",
                physics.fusion.value,
                "acts only through memory-bound operators, which the paper's model has none of: "
                "it would change nothing; set physics.memory_bound_ops=true (or physics=realistic)",
            )
        return
    inert = [
        s
        for s in INERT_SWITCHES
        if getattr(physics, s.name) != s.off and s.idle(physics, hardware, laws)
    ]
    off: dict[str, Any] = {s.name: s.off for s in inert}
    if not inert or not replace(physics, **off).is_paper:
        return
    first = inert[0]
    value = getattr(physics, first.name)
    raise ConfigError(
        f"physics.{first.name}", getattr(value, "value", value), first.reason(hardware)
    )


def check_fp8_speed(physics: Physics, hardware: HardwareSpec) -> None:
    """ConfigError when `physics.precision: fp8` asks for FP8 GEMMs on hardware whose FP8
    matmuls would run no faster than its 16-bit ones (`precision_speedup` ≤ 1: an FP8 peak
    times `fp8_u_eff_ratio` at or below the 16-bit peak, as when a what-if raises the clock or
    the SM count and leaves `dense_fp8_tflop_per_s`): the model would then hold BF16 memory and
    traffic and still time the GEMMs at the slower FP8 rate (docs/model.md R.11)."""
    if hardware.fp8_flop_per_s is None or physics.precision is not Precision.FP8:
        return
    speedup = precision_speedup(hardware, physics)
    if speedup <= 1.0:
        raise ConfigError(
            "physics.precision",
            physics.precision.value,
            f"FP8 matmuls on {hardware.name} would run at {speedup:.3g} x its 16-bit rate "
            "(hardware.dense_fp8_tflop_per_s x fp8_u_eff_ratio over the 16-bit peak), no "
            "faster: set bf16, or raise the FP8 peak with the 16-bit one",
        )


def check_nic_striping(physics: Physics, hardware: HardwareSpec) -> None:
    """ConfigError when `physics.nic_striping` is on for hardware with nodes (a level below
    the top) that gives no `network.nics_per_node` (docs/model.md R.10): a ring crossing
    nodes would be charged at one GPU's link, as with the switch off, while the scenario says
    it stripes; under `physics=realistic` a preset of one's own would silently get slower
    cross-node rings than the built-in presets of the same GPU."""
    if physics.nic_striping and hardware.level_sizes and hardware.nics_per_node is None:
        raise ConfigError(
            "physics.nic_striping",
            True,
            f"{hardware.name} gives no hardware.network.nics_per_node, which the switch "
            "stripes a ring crossing nodes over: set it (8 on DGX A100, H100 and B200 "
            "nodes) or set physics.nic_striping=false",
        )


RUN_BATCH = "critical"
"""The batch choice a run's rows are filed under (`batch_law`): the root config's default
(conf/config.yaml), which a run does not use either: its batch is its `global_batch_seqs`."""


def check_level_tiling(
    hardware: HardwareSpec, d_models: tuple[int, ...], laws: ScalingLaws, options: SearchOptions
) -> None:
    """ConfigError when the network levels below the top hold a number of GPUs whose odd part
    divides no cluster S · 2^i of a grid width: past one such group every cluster fails the
    hierarchy's divisibility rule (spec §5.2), so every size of that width needing more GPUs
    would be infeasible for the network's shape, not its speed (docs/model.md §9.4). The
    catalog keeps its node sizes powers of two for this reason, and the GB200 preset models an
    NVL72 rack as a 64-GPU domain."""
    held = math.prod(hardware.level_sizes)
    odd = held >> ((held & -held).bit_length() - 1)
    if odd == 1:
        return
    for d_model in d_models:
        experts = model_shape(d_model, laws, options.quirks).sparsity
        if experts % odd:
            raise ConfigError(
                "hardware.network.level_sizes",
                list(hardware.level_sizes),
                f"the levels below the top hold {held} GPUs, which divide no cluster "
                f"S · 2^i = {experts} · 2^i of d_model {d_model} past {held} GPUs (spec §5.2): "
                "every size needing more would be infeasible; use level sizes whose product "
                "is a power of two (an NVL72 rack as 64, conf/hardware/gb200_nvl72.yaml)",
            )


RUN_SCALING = "dense"
"""The scaling choice a run's rows are filed under: the root config's default, whose duration
(and tokens per parameter, without `run.tokens`) the run reads; the other choice differs only
in laws the run does not use (its model is its own)."""


def check_run_groups(
    run: RunSpec, batch_name: str, fixed_layout: Layout | None, scaling_name: str = RUN_SCALING
) -> None:
    """ConfigError naming a group choice a concrete run does not use: a batch law other than
    the default (the run has its own batch), scaling laws other than the default (the run has
    its own model; its rows would be filed under a scaling they do not follow) or
    parallelism=fixed (the run has its own layout, or searches one with run.layout_search)."""
    if fixed_layout is not None and run.layout_search:
        raise ConfigError(
            "run.layout_search",
            True,
            "searches the run's layout, while parallelism=fixed gives one: choose one of them",
        )
    if fixed_layout is not None:
        raise ConfigError(
            "parallelism",
            "fixed",
            f"is not used by run={run.name}, which has its own layout (run.tp, run.pp, run.dp, "
            "...; run.layout_search=true searches one): drop parallelism=fixed",
        )
    if batch_name != RUN_BATCH:
        raise ConfigError(
            "batch",
            batch_name,
            f"is not used by run={run.name}, which has its own batch (run.global_batch_seqs): "
            f"drop batch={batch_name} (a run's rows are filed under batch_law={RUN_BATCH})",
        )
    if scaling_name != RUN_SCALING:
        raise ConfigError(
            "scaling",
            scaling_name,
            f"is not used by run={run.name}, which has its own model (run.layers, run.hidden, "
            f"run.experts, ...): drop scaling={scaling_name} (a run's rows are filed under "
            f"scaling={RUN_SCALING}; its duration is scaling.duration_*)",
        )


def load_scenario(
    cfg: DictConfig | Mapping[str, object], memo: SectionMemo | None = None
) -> Scenario:
    """Validate a composed config (see `compose_config`) and convert it to a Scenario.

    Raises ConfigError, whose message is one line naming the dotted key, the bad value
    and what is allowed, on the first invalid value found. With `memo`, each section (and
    each check of several) is read once per node object (`pipeline.schema.memo`): a sweep
    passes one memo for all its series.
    """
    read = memo.read if memo is not None else read_now
    hardware_node = _child(cfg, "hardware")
    scaling_node = _child(cfg, "scaling")
    hardware = read(hardware_from_config, hardware_node)
    scaling = read(scaling_from_config, scaling_node)
    batch_name, batch_law = read(batch_law_from_config, _child(cfg, "batch"))
    parallelism = _child(cfg, "parallelism")
    options = read(options_from_config, parallelism)
    fixed_layout = read(layout_from_config, parallelism)
    if fixed_layout is not None:
        check_layout_levels(fixed_layout, hardware.level_sizes, "parallelism.layout")
    if (
        batch_law.kind is BatchLawKind.CONSTANT
        and batch_law.reference_tokens < scaling.laws.seq_len
    ):
        raise ConfigError(
            "batch.reference_tokens",
            batch_law.reference_tokens,
            f"must hold at least one sequence of seq_len = {scaling.laws.seq_len} tokens",
        )
    settings = read(physics_from_config, cfg["physics"]) if _has(cfg, "physics") else PAPER_SETTINGS
    options, physics = read(_search_options, settings, options), settings.physics
    read(check_nic_striping, physics, hardware)
    read(check_inert_switches, physics, hardware, scaling.laws)
    read(check_fp8_speed, physics, hardware)
    run = read(run_from_config, cfg["run"]) if _has(cfg, "run") else None
    if run is not None:
        check_run_groups(run, batch_name, fixed_layout, scaling.name)
        check_run_batch(run, physics, scaling.laws.tokens_per_param)
        check_run_precision(run, physics, hardware)
    laws = read(_with_batch, scaling.laws, batch_law)
    read(_check_grid, scaling.d_models, laws, options)
    if run is None and fixed_layout is None:
        read(check_level_tiling, hardware, scaling.d_models, laws, options)
    return Scenario(
        hardware_name=hardware.name,
        hardware=hardware,
        scaling_name=scaling.name,
        laws=laws,
        batch_law_name=batch_name,
        duration_s=scaling.duration_s,
        year_s=scaling.year_s,
        d_models=scaling.d_models,
        options=options,
        fixed_layout=fixed_layout,
        closed_form=read(_closed_form, _child(cfg, "closed_form"), scaling_node, scaling),
        physics=physics,
        run=run,
        power=read(power_from_config, _child(cfg, "power"), _child(cfg, "constraints")),
    )


def _search_options(settings: PhysicsSettings, options: SearchOptions) -> SearchOptions:
    """`options` with the physics group's switches (`PhysicsSettings.search_options`)."""
    return settings.search_options(options)


def _with_batch(laws: ScalingLaws, batch_law: BatchLaw) -> ScalingLaws:
    """The scaling laws with the batch group's law."""
    return replace(laws, batch=batch_law)


def _check_grid(d_models: tuple[int, ...], laws: ScalingLaws, options: SearchOptions) -> None:
    """`check_largest_model` of the grid's largest width."""
    check_largest_model(d_models[-1], laws, options)


def _closed_form(
    node: object, scaling_node: object, scaling: ScalingSettings
) -> ClosedFormSettings:
    """Model B's settings, its budget defaulting to the scenario's (`_model_b_default_s`)."""
    default_s = _model_b_default_s({"scaling": scaling_node}, scaling.duration_s)
    return closed_form_from_config(node, "closed_form", default_s)


def _model_b_default_s(cfg: DictConfig | Mapping[str, object], duration_s: float) -> float:
    """Model B's budget when closed_form.duration_days is null: the scenario's months on a
    365.25-day year (quirk Q5), or its budget as is when given in days or hours."""
    months = _child(cfg, "scaling").get("duration_months")  # type: ignore[attr-defined]
    if isinstance(months, int | float) and not isinstance(months, bool):
        return model_b_duration_s(float(months))
    return duration_s


def _has(cfg: DictConfig | Mapping[str, object], key: str) -> bool:
    """True when the root holds a non-null node under key (physics and run are optional)."""
    return isinstance(cfg, DictConfig | Mapping) and key in cfg and cfg[key] is not None
