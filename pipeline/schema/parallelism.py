"""conf/parallelism/*.yaml -> SearchOptions (with Quirks) and an optional fixed Layout.

The option keys are the fields of `SearchOptions` and `Quirks` themselves, so the config
and the model cannot drift apart silently: a new field is a missing key until the YAML
gains it. Three fields are not keys here: recomputation, the memory check and whole
sequences each have their one switch in the physics group (`PHYSICS_OWNED`,
`pipeline/schema/physics.py`). A fixed layout is checked against the network here (spec §5.2); whether it
fits a model shape is the model's `layout_misfit` (`pipeline.model.search.fixed`: a sweep records
a misfit as an infeasible point, `layout_does_not_divide`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from pipeline.model.network.levels import adjusted_level_sizes, hierarchy_is_consistent
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.results import Layout
from pipeline.schema.errors import ConfigError
from pipeline.schema.section import Section, plain

DEGREES = ("dp", "tp_model", "tp_ff", "pp", "ep")
"""The five parallel degrees of a layout, in the spec's order (spec §5.1)."""
LAYOUT_KEYS = frozenset({"n_gpu", *DEGREES, "microbatches", "zero_bubble"})
INTEGER_MINIMUM = {"max_cluster_doublings": 0}
"""Integer options that may be 0; every other integer option must be positive."""
LAYOUT_PATH = "parallelism.layout"
PHYSICS_OWNED = frozenset({"activation_recompute", "memory_check", "whole_sequences"})
"""Option and quirk fields set from the physics group (`PhysicsSettings.search_options`)."""


def _read_fields(section: Section, cls: Any) -> dict[str, Any]:
    """Each field of dataclass ``cls`` read from ``section`` by its default's type."""
    values: dict[str, Any] = {}
    template = cls()
    for field in fields(cls):
        if field.name == "quirks" or field.name in PHYSICS_OWNED:
            continue
        default = getattr(template, field.name)
        if isinstance(default, bool):
            values[field.name] = section.boolean(field.name)
        elif isinstance(default, int):
            minimum = INTEGER_MINIMUM.get(field.name, 1)
            values[field.name] = section.integer(field.name, minimum=minimum)
        elif isinstance(default, float):
            values[field.name] = section.number(field.name, exclusive=False)
        else:  # a new field of another type needs a reader here
            raise TypeError(f"no config reader for {cls.__name__}.{field.name}")
    return values


def options_from_config(node: object, path: str = "parallelism") -> SearchOptions:
    """SearchOptions and Quirks of one parallelism node (spec §7, §9-§11, §14)."""
    option_keys = {f.name for f in fields(SearchOptions)} - PHYSICS_OWNED
    par = Section(plain(node, path), path, option_keys | {"name", "layout"})
    par.name("name")
    values = _read_fields(par, SearchOptions)
    if not (values["one_f_one_b"] or values["zero_bubble"]):
        raise ConfigError(
            par.key("one_f_one_b"), False, "one_f_one_b or zero_bubble must be true (no schedule)"
        )
    quirks = par.section("quirks", {f.name for f in fields(Quirks)} - PHYSICS_OWNED)
    return SearchOptions(**values, quirks=Quirks(**_read_fields(quirks, Quirks)))


def layout_from_config(node: object, path: str = "parallelism") -> Layout | None:
    """The fixed layout of a parallelism node, or None to search (``layout: null``).

    The returned Layout's ``pp_interleave`` and ``nanobatch_tokens`` are 0 placeholders:
    both depend on the model shape (v = L / N_PP for 1F1B, b = ⌊B_tok/(N_DP·m·S)⌋, spec
    §5.1, §7), which the evaluator derives for each model size.
    """
    par = plain(node, path)
    layout_node = par.get("layout") if isinstance(par, dict) else None
    if layout_node is None:
        return None
    lay = Section(layout_node, f"{path}.layout", LAYOUT_KEYS)
    n_gpu = lay.integer("n_gpu")
    factors = {degree: lay.integer_list(degree) for degree in DEGREES}
    lengths = {len(f) for f in factors.values()}
    if len(lengths) != 1:
        raise ConfigError(
            lay.path,
            {d: list(f) for d, f in factors.items()},
            "dp, tp_model, tp_ff, pp and ep must list the same number of levels",
        )
    return Layout(
        n_gpu=n_gpu,
        dp=factors["dp"],
        tp_model=factors["tp_model"],
        tp_ff=factors["tp_ff"],
        pp=factors["pp"],
        ep=factors["ep"],
        microbatches=lay.integer("microbatches"),
        zero_bubble=lay.boolean("zero_bubble"),
        pp_interleave=0,
        nanobatch_tokens=0,
        cp=tuple(1 for _ in factors["dp"]),  # a fixed layout has no context parallelism
    )


def check_layout_levels(
    layout: Layout, level_sizes: tuple[int, ...], path: str = LAYOUT_PATH
) -> None:
    """Raise ConfigError unless the layout fits the network hierarchy (spec §5.2).

    Every degree lists one factor per level (len(level_sizes) + 1); the five level-k
    factors multiply to the adjusted size of level k; all factors multiply to n_gpu;
    and n_gpu is divisible by the product of the first k sizes whenever it exceeds it
    (the original aborts otherwise).
    """
    n_levels = len(level_sizes) + 1
    for degree in DEGREES:
        factors = getattr(layout, degree)
        if len(factors) != n_levels:
            raise ConfigError(
                f"{path}.{degree}",
                list(factors),
                f"must list {n_levels} factors, one per network level "
                f"(len(hardware.network.level_sizes) + 1)",
            )
    if not hierarchy_is_consistent(level_sizes, layout.n_gpu):
        raise ConfigError(
            f"{path}.n_gpu",
            layout.n_gpu,
            f"must be divisible by each product of the first level sizes {list(level_sizes)} "
            "that it exceeds",
        )
    adjusted = adjusted_level_sizes(level_sizes, layout.n_gpu)
    for level, size in enumerate(adjusted):
        level_factors = [getattr(layout, degree)[level] for degree in DEGREES]
        if math.prod(level_factors) != size:
            raise ConfigError(
                f"{path}[level {level}]",
                dict(zip(DEGREES, level_factors, strict=True)),
                f"dp·tp_model·tp_ff·pp·ep at level {level} must equal the level size {size} "
                f"(hardware level sizes {list(level_sizes)} adjusted to n_gpu = {layout.n_gpu})",
            )
    total = math.prod(math.prod(getattr(layout, degree)) for degree in DEGREES)
    if total != layout.n_gpu:
        raise ConfigError(
            f"{path}.n_gpu",
            layout.n_gpu,
            f"must equal the product of all parallel factors, {total}",
        )
