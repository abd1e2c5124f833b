"""conf/scaling/*.yaml and conf/batch/*.yaml -> ScalingLaws, duration and model-size grid.

Spec §1-§2: shape, expert, data and batch laws; the training-time budget (spec §0) in
months, days or hours (exactly one of `duration_months`, `duration_days`, `duration_hours`);
the d_model grid (spec §2.2): the paper's rule over a range, the same rule without its lower
exponent bound (`fine`, for widths below 12288, down to about 1e22 FLOP), or an explicit list.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from pipeline import units
from pipeline.model.records.scaling import BatchLaw, BatchLawKind, ScalingLaws, paper_d_model_grid
from pipeline.schema import bounds
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
        "kv_heads",
        "dropout",
        *("duration_months", "duration_days", "duration_hours"),
        "year_s",
        "grid",
    }
)
DURATION_KEYS = ("duration_months", "duration_days", "duration_hours")
"""The training-time budget in one of three units: exactly one is a number, the others null."""
GRID_KINDS = ("paper", "fine", "list")
GRID_KEYS = frozenset({"kind", "min_d_model", "max_d_model", "d_models"})

BATCH_LAW_KEYS: dict[BatchLawKind, frozenset[str]] = {
    BatchLawKind.CRITICAL: frozenset({"reference_tokens", "reference_flop", "exponent"}),
    BatchLawKind.CONSTANT: frozenset({"reference_tokens"}),
    BatchLawKind.DEEPSEEK: frozenset({"coefficient", "exponent"}),
    BatchLawKind.ZHANG2024: frozenset({"coefficient", "exponent"}),
    BatchLawKind.OBSERVED: frozenset({"coefficient", "exponent"}),
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

    The budget is duration_months · year_s / 12 (quirk Q5: Model A's year is 3.154e7 s),
    or duration_days · 86,400 s, or duration_hours · 3,600 s (`duration_from_config`).
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
        kv_heads=kv_heads(sc),
        dropout=sc.boolean("dropout"),
    )
    year_s = sc.number("year_s", "s", maximum=bounds.MAX_YEAR_S)
    duration_s = duration_from_config(sc, year_s)
    d_models = d_model_grid(sc.raw("grid", "must be a mapping"), sc.key("grid"))
    return ScalingSettings(name, laws, duration_s, year_s, d_models)


def kv_heads(sc: Section) -> int | None:
    """K/V heads of the realistic physics' transformer (`ScalingLaws.kv_heads`): a positive
    integer, or null for as many as its heads (multi-head attention)."""
    if sc.raw("kv_heads", "must be a positive integer or null") is None:
        return None
    return sc.integer("kv_heads")


def duration_from_config(sc: Section, year_s: float) -> float:
    """The training-time budget in seconds from the one duration key that is not null.

    Months are year_s / 12 (Model A's year, quirk Q5); days 86,400 s; hours 3,600 s.
    """
    given = [key for key in DURATION_KEYS if sc.has(key) and sc.raw(key, "") is not None]
    if len(given) != 1:
        shown = {key: sc.raw(key, "") for key in DURATION_KEYS if sc.has(key)}
        raise ConfigError(
            sc.path,
            shown,
            "exactly one of duration_months, duration_days and duration_hours must be a number "
            "(set the others to null, e.g. scaling.duration_months=null scaling.duration_days=30)",
        )
    key = given[0]
    convert = {
        "duration_months": lambda months: units.months_to_s(months, year_s),
        "duration_days": units.days_to_s,
        "duration_hours": units.hours_to_s,
    }[key]
    return sc.si(key, key.removeprefix("duration_"), convert, bounds.MAX_DURATION_S, "s")


def d_model_grid(node: object, path: str = "scaling.grid") -> tuple[int, ...]:
    """The ascending d_model values of a grid node (spec §2.2).

    ``kind: paper`` takes every f · 2^i (f odd in 1..15, i in 11..21) within
    [min_d_model, max_d_model], and ``d_models`` must be null. ``kind: fine`` is the same rule
    with i from 7 (`fine_d_model_grid`): below 12288 the paper's rule thins out to steps of
    1.2-1.5x, the fine rule keeps eight widths per octave (steps at most 9/8, as the paper's
    grid has at its top) and d_head = 128 still divides every width. ``kind: list`` takes
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
    rule = paper_d_model_grid if kind == "paper" else fine_d_model_grid
    d_models = tuple(rule(smallest, largest))
    if not d_models:
        exponents = "11..21" if kind == "paper" else f">= {FINE_MIN_EXPONENT}"
        raise ConfigError(
            path,
            {"min_d_model": smallest, "max_d_model": largest},
            f"range must hold at least one {kind} width f · 2^i (f odd in 1..15, i {exponents})",
        )
    return d_models


FINE_MIN_EXPONENT = 7
"""The fine grid's smallest power of two: 2^7 = 128 = d_head divides every width."""


def fine_d_model_grid(smallest: int, largest: int) -> list[int]:
    """Every f · 2^i (f odd in 1..15, i >= 7) within [smallest, largest], ascending.

    In each octave [8·2^k, 16·2^k) these are 8, 9, ..., 15 times 2^k: steps of at most 9/8,
    the paper's steps at the top of its grid (spec §2.2), at every width.
    """
    values: set[int] = set()
    i = FINE_MIN_EXPONENT
    while 2**i <= largest:
        values.update(f * 2**i for f in range(1, 16, 2))
        i += 1
    return sorted(v for v in values if smallest <= v <= largest)


def _check_kind_keys(node: object, path: str, kind: BatchLawKind) -> None:
    """ConfigError where the node's law is not its preset's: a key of another batch law's
    kind (`batch=observed batch.kind=critical` keeps the observed law's keys), or a preset named
    as a law's kind with `kind` set to another (`batch=deepseek batch.kind=zhang2024` would
    apply one formula to the other's constants and file the rows under the first's name)."""
    if not isinstance(node, dict):
        return
    name = node.get("name")
    overridden = name in {k.value for k in BatchLawKind} and name != kind.value
    advice = (
        f"choose {path}={kind.value} instead of overriding {path}.kind" if overridden else "drop it"
    )
    for key in sorted(node):
        if key in {"name", "kind"} or key in BATCH_LAW_KEYS[kind]:
            continue
        kinds = [k.value for k, keys in BATCH_LAW_KEYS.items() if key in keys]
        if kinds:
            raise ConfigError(
                f"{path}.{key}",
                node[key],
                f"is a key of the {', '.join(kinds)} law{'s' if len(kinds) > 1 else ''}, "
                f"not of {path}.kind={kind.value}: {advice}",
            )
    if overridden:
        raise ConfigError(
            f"{path}.kind",
            kind.value,
            f"the {name} preset's law is {name}; its constants are not the {kind.value} law's: "
            f"choose {path}={kind.value} instead",
        )


def batch_law_from_config(node: object, path: str = "batch") -> tuple[str, BatchLaw]:
    """The batch law of one batch node, with its name (spec §2.4, `BatchLaw`)."""
    all_keys = {"name", "kind"}.union(*BATCH_LAW_KEYS.values())
    values_in = plain(node, path)
    kind = BatchLawKind(Section(values_in, path, all_keys).choice("kind", list(BatchLawKind)))
    _check_kind_keys(values_in, path, kind)
    batch = Section(values_in, path, {"name", "kind"} | BATCH_LAW_KEYS[kind])
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
