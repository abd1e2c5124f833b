"""conf/physics/*.yaml -> Physics and the paper model's own switches: one owner per concept.

The keys are the fields of `Physics` and `Efficiency` (durations in microseconds in the
config, `_us`, seconds in the model, `_s`), with one exception: `memory_check` (none |
aggregate | per_gpu) is the single switch of the memory check, read into `Physics.gpu_memory`
and `SearchOptions.memory_check`. Three concepts have one key each, here:

- `recompute` (none | selective | full | auto): activation recomputation;
- `memory_check`: no check, the paper's cluster-wide check (spec §9), or every GPU's own;
- `whole_sequences`: microbatches of whole sequences (quirk Q3 off).

When every other extension is off (the paper's model), full recomputation and whole
sequences are the paper's own options (spec §7's ×4/3 compute and ×1.5 TP and PP/EP
traffic; quirk Q3) and run through Part I's code; otherwise Part II's per-layer recompute
and whole-sequence microbatches apply, and the paper's factors do not apply a second time.
A combination that means nothing is refused in one line (`check_switches`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from enum import StrEnum

from pipeline import units
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.switches import (
    STACK_2024,
    STACKS,
    ClusterSizes,
    Efficiency,
    Fusion,
    HbmCapacity,
    Physics,
    Precision,
    Recompute,
    TensorParallel,
)
from pipeline.schema.errors import ConfigError
from pipeline.schema.section import Section, plain

SECONDS_SUFFIX = "_s"
CONFIG_TIME_SUFFIX = "_us"


class MemoryCheck(StrEnum):
    """What a layout's memory is checked against (`physics.memory_check`)."""

    NONE = "none"
    """No check: every layout counts as fitting."""
    AGGREGATE = "aggregate"
    """The paper's check: weights and optimizer state of the whole cluster within its HBM (spec §9)."""
    PER_GPU = "per_gpu"
    """Every GPU holds its weights, gradients, optimizer state and activations (docs/model.md R.4)."""


def config_key(field_name: str) -> str:
    """The config spelling of a model field: durations in microseconds (`_s` -> `_us`)."""
    if field_name.endswith(SECONDS_SUFFIX):
        return field_name[: -len(SECONDS_SUFFIX)] + CONFIG_TIME_SUFFIX
    return field_name


PHYSICS_KEYS = frozenset(f.name for f in fields(Physics)) - {"gpu_memory"} | {"memory_check"}
"""Every key of a physics node (declared from the dataclass; `memory_check` for `gpu_memory`)."""
EFFICIENCY_KEYS = frozenset(config_key(f.name) for f in fields(Efficiency))
"""Every key of a physics node's `efficiency` mapping (declared from the dataclass)."""


@dataclass(frozen=True, slots=True)
class PhysicsSettings:
    """The physics group: the extensions and the memory check, each concept read once."""

    physics: Physics
    memory_check: MemoryCheck
    recompute: Recompute
    """The configured mode; `physics.recompute` holds it unless the paper's model runs it."""
    whole_sequences: bool
    """The configured switch; `physics.whole_sequences` holds it unless quirk Q3 does."""

    @property
    def paper_model(self) -> bool:
        """True when the paper's code path runs: every extension off but these two switches."""
        return self.physics.is_paper

    def search_options(self, options: SearchOptions) -> SearchOptions:
        """`options` with the switches the paper's model reads set from this group."""
        paper = self.paper_model
        return dataclasses.replace(
            options,
            activation_recompute=paper and self.recompute is Recompute.FULL,
            memory_check=self.memory_check is not MemoryCheck.NONE,
            quirks=dataclasses.replace(
                options.quirks, whole_sequences=paper and self.whole_sequences
            ),
        )


PAPER_SETTINGS = PhysicsSettings(Physics(), MemoryCheck.AGGREGATE, Recompute.NONE, False)
"""A scenario without a physics node: the paper's model with its memory check."""


def efficiency_from_config(section: Section) -> Efficiency:
    """Achieved fractions in (0, 1] and overheads (us, >= 0; matmul_overhead_us may be null)."""
    values: dict[str, float | None] = {}
    for f in fields(Efficiency):
        key = config_key(f.name)
        if key == f.name:
            values[f.name] = section.number(key, "fraction of peak", maximum=1.0)
        elif f.name == "matmul_overhead_s":
            us = section.optional_number(key, "us", exclusive=False)
            values[f.name] = None if us is None else units.us_to_s(us)
        else:
            values[f.name] = units.us_to_s(section.number(key, "us", exclusive=False))
    return Efficiency(**values)  # type: ignore[arg-type]


def physics_from_config(node: object, path: str = "physics") -> PhysicsSettings:
    """The physics group of one node; ConfigError on an unknown, missing, bad or
    contradictory key (`check_switches`)."""
    sec = Section(plain(node, path), path, PHYSICS_KEYS)
    eff = sec.section("efficiency", EFFICIENCY_KEYS)
    memory = MemoryCheck(sec.choice("memory_check", [m.value for m in MemoryCheck]))
    recompute = Recompute(sec.choice("recompute", [r.value for r in Recompute]))
    whole = sec.boolean("whole_sequences")
    extensions = Physics(
        name=sec.string("name"),
        attention=sec.boolean("attention"),
        memory_bound_ops=sec.boolean("memory_bound_ops"),
        fusion=Fusion(sec.choice("fusion", [f.value for f in Fusion])),
        gpu_memory=memory is MemoryCheck.PER_GPU,
        zero_stage=zero_stage(sec),
        tensor_parallel=TensorParallel(
            sec.choice("tensor_parallel", [t.value for t in TensorParallel])
        ),
        tp_in_domain=sec.boolean("tp_in_domain"),
        tensor_memory=sec.boolean("tensor_memory"),
        max_context_parallel=sec.integer("max_context_parallel"),
        precision=Precision(sec.choice("precision", [p.value for p in Precision])),
        dp_overlap=sec.boolean("dp_overlap"),
        tp_overlap_in_domain=sec.boolean("tp_overlap_in_domain"),
        few_microbatches=sec.boolean("few_microbatches"),
        small_microbatches=sec.boolean("small_microbatches"),
        cp_all_gather=sec.boolean("cp_all_gather"),
        batch_at_row_flop=sec.boolean("batch_at_row_flop"),
        nic_striping=sec.boolean("nic_striping"),
        gemm_waves=sec.boolean("gemm_waves"),
        grad_reduce_fp32=sec.boolean("grad_reduce_fp32"),
        fp8_params=sec.boolean("fp8_params"),
        fp8_current_scaling=sec.boolean("fp8_current_scaling"),
        expert_imbalance=sec.number("expert_imbalance", "fraction", exclusive=False),
        cluster_sizes=ClusterSizes(sec.choice("cluster_sizes", [c.value for c in ClusterSizes])),
        hbm_capacity=HbmCapacity(sec.choice("hbm_capacity", [c.value for c in HbmCapacity])),
        stack=software_stack(sec),
        efficiency=efficiency_from_config(eff),
    )
    check_switches(sec, extensions, memory, recompute, whole)
    if not extensions.is_paper:  # Part II runs both switches
        extensions = dataclasses.replace(extensions, recompute=recompute, whole_sequences=whole)
    return PhysicsSettings(extensions, memory, recompute, whole)


def check_switches(
    sec: Section, physics: Physics, memory: MemoryCheck, recompute: Recompute, whole: bool
) -> None:
    """Raise ConfigError on a combination of switches that contradicts itself.

    `auto` picks the fastest recomputation that fits each GPU, so it needs the per-GPU
    check; `selective` reruns the attention core, so it needs attention; context
    parallelism splits whole sequences. The paper's model has no selective recomputation.
    """
    if recompute is Recompute.AUTO and memory is not MemoryCheck.PER_GPU:
        raise ConfigError(
            sec.key("recompute"), recompute.value, "auto needs physics.memory_check=per_gpu"
        )
    if recompute is Recompute.SELECTIVE and not physics.attention:
        raise ConfigError(
            sec.key("recompute"),
            recompute.value,
            "selective recomputes the attention core: it needs physics.attention=true",
        )
    if physics.is_paper and physics.stack != STACK_2024:
        raise ConfigError(
            sec.key("stack"),
            physics.stack,
            "the paper's model reads no efficiency, so no software generation changes it: "
            f"set {STACK_2024}, or switch an extension on (physics=realistic)",
        )
    cp = physics.max_context_parallel
    if cp & (cp - 1):
        raise ConfigError(
            sec.key("max_context_parallel"),
            cp,
            "must be a power of two: the search tries c = 2, 4, 8, ... up to it (docs/model.md R.7), "
            f"so {cp} would try no c above {1 << (cp.bit_length() - 1)}",
        )
    if physics.max_context_parallel > 1 and not whole:
        raise ConfigError(
            sec.key("max_context_parallel"),
            physics.max_context_parallel,
            "context parallelism splits whole sequences: it needs physics.whole_sequences=true",
        )


def software_stack(sec: Section) -> int:
    """The software generation `Physics.stack` names: 2024 or 2025 (docs/model.md R.9)."""
    allowed = f"must be one of: {', '.join(map(str, STACKS))}"
    stack = sec.raw("stack", allowed)
    if stack not in STACKS:
        raise ConfigError(sec.key("stack"), stack, allowed)
    return int(stack)


def zero_stage(sec: Section) -> int:
    """ZeRO stage 0-3 (Rajbhandari et al. 2020)."""
    return sec.integer("zero_stage", minimum=0, maximum=3)
