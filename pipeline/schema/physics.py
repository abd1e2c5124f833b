"""conf/physics/*.yaml -> Physics: which extensions of the paper's model are on (docs/model.md).

The keys are the fields of `Physics` and `Efficiency` themselves (durations in microseconds
in the config, `_us`, seconds in the model, `_s`), so config and model cannot drift apart:
a new field is a missing key until the YAML gains it.
"""

from __future__ import annotations

from dataclasses import fields

from pipeline.model.records.switches import Efficiency, Fusion, Physics, Recompute, TensorParallel
from pipeline.schema import units
from pipeline.schema.errors import ConfigError
from pipeline.schema.section import Section, plain

SECONDS_SUFFIX = "_s"
CONFIG_TIME_SUFFIX = "_us"


def config_key(field_name: str) -> str:
    """The config spelling of a model field: durations in microseconds (`_s` -> `_us`)."""
    if field_name.endswith(SECONDS_SUFFIX):
        return field_name[: -len(SECONDS_SUFFIX)] + CONFIG_TIME_SUFFIX
    return field_name


PHYSICS_KEYS = frozenset(f.name for f in fields(Physics))
"""Every key of a physics node (declared from the dataclass)."""
EFFICIENCY_KEYS = frozenset(config_key(f.name) for f in fields(Efficiency))
"""Every key of a physics node's `efficiency` mapping (declared from the dataclass)."""


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


def physics_from_config(node: object, path: str = "physics") -> Physics:
    """The Physics of one physics node; ConfigError on an unknown, missing or bad key."""
    sec = Section(plain(node, path), path, PHYSICS_KEYS)
    eff = sec.section("efficiency", EFFICIENCY_KEYS)
    return Physics(
        name=sec.string("name"),
        attention=sec.boolean("attention"),
        memory_bound_ops=sec.boolean("memory_bound_ops"),
        fusion=Fusion(sec.choice("fusion", [f.value for f in Fusion])),
        gpu_memory=sec.boolean("gpu_memory"),
        recompute=Recompute(sec.choice("recompute", [r.value for r in Recompute])),
        zero_stage=zero_stage(sec),
        whole_sequences=sec.boolean("whole_sequences"),
        tensor_parallel=TensorParallel(
            sec.choice("tensor_parallel", [t.value for t in TensorParallel])
        ),
        tp_in_domain=sec.boolean("tp_in_domain"),
        tensor_memory=sec.boolean("tensor_memory"),
        max_context_parallel=sec.integer("max_context_parallel"),
        efficiency=efficiency_from_config(eff),
    )


def zero_stage(sec: Section) -> int:
    """ZeRO stage 0-3 (Rajbhandari et al. 2020)."""
    stage = sec.integer("zero_stage", minimum=0)
    if stage > 3:
        raise ConfigError(sec.key("zero_stage"), stage, "must be 0, 1, 2 or 3")
    return stage
