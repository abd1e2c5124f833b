"""conf/scaling/*.yaml and conf/batch/*.yaml -> ScalingLaws, duration and model-size grid.

Spec §1-§2: shape, expert, data and batch laws; the training-time budget (spec §0); the
d_model grid (spec §2.2), either the paper's rule over a range or an explicit list.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from pipeline.model.records.scaling import BatchLaw, BatchLawKind, ScalingLaws, paper_d_model_grid
from pipeline.schema import bounds, units
from pipeline.schema.errors import ConfigError
from pipeline.schema.section import Section, plain

SCALING_KEYS = frozenset(
    {
        "name",
        "sparse",
        "ff_ratio",
        "depth",
        "experts",
        "tokens_per_param",
        "seq_len",
        "duration_months",
        "year_s",
        "grid",
    }
)
GRID_KINDS = ("paper", "list")
GRID_KEYS = frozenset({"kind", "min_d_model", "max_d_model", "d_models"})

BATCH_LAW_KEYS: dict[BatchLawKind, frozenset[str]] = {
    BatchLawKind.CRITICAL: frozenset({"reference_tokens", "reference_flop", "exponent"}),
    BatchLawKind.CONSTANT: frozenset({"reference_tokens"}),
    BatchLawKind.DEEPSEEK: frozenset({"coefficient", "exponent"}),
    BatchLawKind.ZHANG2024: frozenset({"coefficient", "exponent"}),
}
"""The constants each batch law reads (see `BatchLaw`); other BatchLaw fields keep defaults."""


@dataclass(frozen=True, slots=True)
class ScalingSettings:
    """The scaling group in SI units: laws (batch law still the default), budget, grid."""

    name: str
    laws: ScalingLaws
    duration_s: float
    year_s: float
    d_models: tuple[int, ...]


def scaling_from_config(node: object, path: str = "scaling") -> ScalingSettings:
    """The scaling laws, training-time budget and model-size grid of one scaling node.

    The budget is duration_months · year_s / 12 (quirk Q5: Model A's year is 3.154e7 s).
    """
    sc = Section(plain(node, path), path, SCALING_KEYS)
    name = sc.name("name")
    sparse = sc.boolean("sparse")
    ff_ratio = sc.integer("ff_ratio")
    depth = sc.section("depth", {"coefficient", "exponent"})
    experts = sc.section("experts", {"at_reference", "reference_d_model"})
    law = bounds.MAX_LAW_CONSTANT
    laws = ScalingLaws(
        sparse=sparse,
        ff_ratio=ff_ratio,
        depth_coefficient=depth.number("coefficient", maximum=law),
        depth_exponent=depth.number("exponent", maximum=bounds.MAX_EXPONENT),
        experts_at_reference=experts.number("at_reference", "experts", maximum=law),
        reference_d_model=experts.number("reference_d_model", maximum=float(bounds.MAX_INTEGER)),
        tokens_per_param=sc.number("tokens_per_param", "tokens per parameter", maximum=law),
        seq_len=sc.integer("seq_len"),
    )
    year_s = sc.number("year_s", "s", maximum=bounds.MAX_YEAR_S)
    duration_s = sc.si(
        "duration_months",
        "months",
        lambda months: units.months_to_s(months, year_s),
        bounds.MAX_DURATION_S,
        "s",
    )
    d_models = d_model_grid(sc.raw("grid", "must be a mapping"), sc.key("grid"))
    return ScalingSettings(name, laws, duration_s, year_s, d_models)


def d_model_grid(node: object, path: str = "scaling.grid") -> tuple[int, ...]:
    """The ascending d_model values of a grid node (spec §2.2).

    ``kind: paper`` takes every f · 2^i (f odd in 1..15, i in 11..21) within
    [min_d_model, max_d_model], and ``d_models`` must be null. ``kind: list`` takes
    ``d_models`` as given (min/max are then unused), which must be strictly ascending
    because a series stops at its first infeasible size (spec §11).
    """
    grid = Section(node, path, GRID_KEYS)
    kind = grid.choice("kind", GRID_KINDS)
    if kind == "list":
        d_models = grid.integer_list("d_models")
        if any(b <= a for a, b in itertools.pairwise(d_models)):
            raise ConfigError(
                grid.key("d_models"), list(d_models), "must be strictly ascending (no repeats)"
            )
        return d_models
    if grid.has("d_models") and grid.raw("d_models", "") is not None:
        raise ConfigError(
            grid.key("d_models"),
            grid.raw("d_models", ""),
            "must be null when kind is paper; set scaling.grid.kind=list to use a list",
        )
    smallest = grid.integer("min_d_model")
    largest = grid.integer("max_d_model")
    if smallest > largest:
        raise ConfigError(grid.key("min_d_model"), smallest, f"must be <= max_d_model = {largest}")
    d_models = tuple(paper_d_model_grid(smallest, largest))
    if not d_models:
        raise ConfigError(
            path,
            {"min_d_model": smallest, "max_d_model": largest},
            "range must hold at least one paper width f · 2^i (f odd in 1..15, i in 11..21)",
        )
    return d_models


def batch_law_from_config(node: object, path: str = "batch") -> tuple[str, BatchLaw]:
    """The batch law of one batch node, with its name (spec §2.4, `BatchLaw`)."""
    all_keys = {"name", "kind"}.union(*BATCH_LAW_KEYS.values())
    kind = BatchLawKind(
        Section(plain(node, path), path, all_keys).choice("kind", list(BatchLawKind))
    )
    batch = Section(plain(node, path), path, {"name", "kind"} | BATCH_LAW_KEYS[kind])
    name = batch.name("name")
    values: dict[str, float] = {}
    for key in sorted(BATCH_LAW_KEYS[kind]):
        if key == "exponent":
            limit = bounds.MAX_EXPONENT
            values[key] = batch.number(key, minimum=-limit, exclusive=False, maximum=limit)
        elif key == "reference_flop":
            values[key] = batch.number(key, "FLOP", maximum=bounds.MAX_FLOP)
        else:
            unit = "tokens" if key == "reference_tokens" else ""
            values[key] = batch.number(key, unit, maximum=bounds.MAX_LAW_CONSTANT)
    return name, BatchLaw(kind=kind, **values)
