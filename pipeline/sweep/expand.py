"""Scenario expansion: the composed config times the sweep's categorical choices and numeric axes.

conf/sweep/*.yaml fills the root `sweep` node:

    choices:      # config group -> options; each option re-composes the whole config
      batch: [critical, deepseek]
    axes:         # config field -> values (syntax in `pipeline.sweep.axes`)
      hardware.network.latency_us[*]: {start: 0.25, stop: 4, num: 5, log: true}
      hardware.network.level_sizes[0]: [8, 64, 256]

On the command line: `'+sweep.axes.hardware.hbm_bandwidth_gb_per_s=[2000,3352]'` (a nested
key is a dotted path) and `'+sweep.choices.batch=[critical,deepseek]'`.

A run evaluates the product. The order is fixed: choice groups as written, options as listed,
then axes as written, the last one changing fastest (itertools.product). Each combination is one
series. A choice re-composes the config with the run's own command-line overrides plus
`group=option` (`pipeline.schema.compose_config`), so an experiment or an override such as
`scaling.grid.max_d_model=...` applies to every option; a command line that picks the same group
itself is refused (narrow the sweep with `sweep.choices.batch=[deepseek]` instead). Options and
re-compositions use the running application's search path (`app_search_path`), so a preset of
the user's own (--config-dir, hydra.searchpath) is a valid choice.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf

from pipeline.identity import SeriesIds, canonical_json, jsonable
from pipeline.schema import Scenario, compose_config, load_scenario
from pipeline.schema.compose import app_search_path, group_options
from pipeline.schema.errors import ConfigError
from pipeline.schema.memo import SWEPT_NODES, UNSWEPT_READINGS, SectionMemo
from pipeline.schema.scenario import GROUPS
from pipeline.schema.section import Section, plain
from pipeline.sweep.axes import AXIS_ROOTS, MAX_SERIES, Axis, parse_axis
from pipeline.sweep.seen import SeenIds

SWEEP_KEYS = frozenset({"axes", "choices", "max_series"})
GPU_MEMORY_FIELDS = frozenset({("hardware", "hbm_bandwidth_gb_per_s"), ("hardware", "hbm_gb")})
"""Axes that change only the GPU's memory. Series that differ only in them share the model's
tables of everything else (each model's layouts and their layer traffic, the network's
collectives: docs/model.md §9.2), so one worker evaluating them together builds those once."""

Say = Callable[[str], None]
"""Told what the expansion does as it starts each step (a run's progress lines)."""


def _silent(text: str) -> None:
    """Says nothing."""


@dataclass(frozen=True, slots=True)
class SweepSeries:
    """One series of a run: its scenario, its id, and the sweep point that made it."""

    scenario: Scenario
    series_id: str
    """`pipeline.execute.series.series_id` of the scenario (and the run's whole_grid)."""
    sweep_point: str
    """Canonical JSON of this series' choices and axis values, in config units ("{}" if none)."""


@dataclass(frozen=True, slots=True)
class Sweep:
    """The validated `sweep` node: categorical choices and numeric axes, in expansion order."""

    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()
    axes: tuple[Axis, ...] = ()
    max_series: int = MAX_SERIES
    """`sweep.max_series`: the most series the product may hold."""

    @property
    def n_series(self) -> int:
        """Series in the product (before resumption skips any)."""
        return math.prod(len(o) for _, o in self.choices) * math.prod(
            len(a.values) for a in self.axes
        )

    @property
    def memory_block(self) -> int:
        """How many consecutive series differ only in the GPU's memory: the product of the
        lengths of the innermost axes over `GPU_MEMORY_FIELDS` (1 when the last is none)."""
        block = 1
        for axis in reversed(self.axes):
            if axis.index is not None or axis.path not in GPU_MEMORY_FIELDS:
                break
            block *= len(axis.values)
        return block


def sweep_from_config(cfg: DictConfig | Mapping[str, Any]) -> Sweep:
    """The sweep of a composed config (empty when it has no `sweep` node); ConfigError if bad."""
    node = cfg.get("sweep")
    if node is None:
        return Sweep()
    section = Section(plain(node, "sweep"), "sweep", SWEEP_KEYS)
    limit = section.integer("max_series") if section.has("max_series") else MAX_SERIES
    axes = tuple(parse_axis(k, v, limit) for k, v in _flat_axes(_mapping(section, "axes")))
    choices = tuple(_choice(str(g), o) for g, o in _mapping(section, "choices").items())
    if choices:
        search_path = app_search_path()
        for group, options in choices:
            _check_options(group, options, search_path)
    sweep = Sweep(choices, axes, limit)
    if sweep.n_series > limit:
        raise ConfigError(
            "sweep",
            {"choices": dict(choices), "axes": {a.key: len(a.values) for a in axes}},
            f"expands to {sweep.n_series} series, more than sweep.max_series = {limit}; "
            "narrow the sweep or raise sweep.max_series (e.g. +sweep.max_series=1000000)",
        )
    return sweep


def _mapping(section: Section, key: str) -> Mapping[str, Any]:
    """An optional mapping of the sweep node ({} when absent or null)."""
    value = section.raw(key, "") if section.has(key) else None
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(section.key(key), value, "must be a mapping (or {})")
    return value


def _flat_axes(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, values) of every axis; nested mappings that are not ranges are paths.

    So `{hardware: {sms: [100, 132]}}`, what `+sweep.axes.hardware.sms=[100,132]` makes on the
    command line, is the axis `hardware.sms`. A mapping with a start or stop is a range.
    """
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not {"start", "stop"} & set(value):
            yield from _flat_axes(value, f"{dotted}.")
        else:
            yield dotted, value


def _choice(group: str, options: Any) -> tuple[str, tuple[str, ...]]:
    where = f"sweep.choices.{group}"
    if group not in GROUPS:
        raise ConfigError(where, options, f"the group must be one of {', '.join(GROUPS)}")
    if not isinstance(options, list) or not options:
        raise ConfigError(where, options, f"must be a non-empty list of conf/{group}/ file names")
    if not all(isinstance(option, str) for option in options):
        raise ConfigError(where, options, f"must be a list of conf/{group}/ file names")
    if len(set(options)) != len(options):
        raise ConfigError(where, options, "options must be distinct")
    return group, tuple(options)


def _check_options(group: str, options: Sequence[str], search_path: Sequence[str]) -> None:
    """Every option names a preset of the group, built in or in the user's config directories."""
    known = group_options(group, search_path)
    for option in options:
        if option not in known:
            raise ConfigError(
                f"sweep.choices.{group}",
                list(options),
                f"{option!r} is not one of: {', '.join(known)}",
            )


def known_overrides(overrides: Sequence[str] | None) -> tuple[str, ...] | None:
    """The overrides the config was composed with: as given, else the running Hydra job's.

    None when neither is known. The job's overrides are read as written, not resolved: an
    override's value may be an interpolation (``hardware.sms=${hardware.cores}``).
    """
    if overrides is not None:
        return tuple(overrides)
    if HydraConfig.initialized():
        task = OmegaConf.to_container(HydraConfig.get().overrides.task, resolve=False)
        return tuple(str(o) for o in cast(list[Any], task))
    return None


def run_overrides(overrides: Sequence[str] | None) -> list[str]:
    """`known_overrides`, which must be known (a sweep choice re-composes the config)."""
    known = known_overrides(overrides)
    if known is None:
        raise ValueError(
            "sweep.choices re-composes the config: pass the overrides it was composed with"
        )
    return list(known)


def _choice_configs(
    cfg: DictConfig,
    sweep: Sweep,
    overrides: Sequence[str] | None,
    say: Say = _silent,
    composed: dict[tuple[str, ...], DictConfig] | None = None,
) -> Iterator[tuple[dict[str, str], DictConfig]]:
    """(choices made, composed config) for every combination of the sweep's choices, each
    composed as it is reached (`say` names it), or taken from `composed` (which keeps it)."""
    if not sweep.choices:
        yield {}, cfg
        return
    base = run_overrides(overrides)
    search_path = app_search_path()
    groups = [group for group, _ in sweep.choices]
    for parsed, text in zip(OverridesParser.create().parse_overrides(base), base, strict=True):
        if parsed.key_or_group in groups:
            raise ConfigError(
                f"sweep.choices.{parsed.key_or_group}",
                text,
                f"the run also chooses {parsed.key_or_group} ({text}: on the command line, or "
                f"an experiment's multirun job), which the sweep sweeps: choose it in one place "
                f"(sweep.choices.{parsed.key_or_group}=[...] alone, or, to narrow an "
                f"experiment's multirun, {parsed.key_or_group}=<option> on the command line)",
            )
    combinations = math.prod(len(o) for _, o in sweep.choices)
    for number, options in enumerate(itertools.product(*(o for _, o in sweep.choices)), 1):
        made = dict(zip(groups, options, strict=True))
        config = composed.get(options) if composed is not None else None
        if config is None:
            chosen = " ".join(f"{g}={o}" for g, o in made.items())
            say(f"sweep: composing choice {number}/{combinations} ({chosen})")
            try:
                config = compose_config(
                    [*base, *(f"{g}={o}" for g, o in made.items())], search_path=search_path
                )
            except HydraException as err:
                text = str(err).strip()
                reason = text.splitlines()[0] if text else type(err).__name__
                raise ConfigError("sweep.choices", made, f"does not compose: {reason}") from err
            if composed is not None:
                composed[options] = config
        yield made, config


def _has_interpolation(obj: Any) -> bool:
    if isinstance(obj, str):
        return "${" in obj
    if isinstance(obj, Mapping):
        return any(_has_interpolation(v) for v in obj.values())
    if isinstance(obj, list):
        return any(_has_interpolation(v) for v in obj)
    return False


class _Sections:
    """The scenario sections of sweep points, each distinct node made once and shared.

    A section no axis sets is the same object in every point, and equal ones of different
    choice combinations are one object (interned by their text); a section some axes set is
    made once per combination of those axes' values and kept (at most `max_swept`, least
    recently used first out). So `load_scenario` with one `SectionMemo` reads each distinct
    node once (`pipeline.schema.memo`), and a sweep point costs a few lookups.
    """

    def __init__(self, max_swept: int = SWEPT_NODES) -> None:
        self.max_swept = max_swept
        self._interned: dict[tuple[str, str], Any] = {}
        self._swept: dict[tuple[int, tuple[int, ...]], dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._swept)

    def intern(self, root: str, node: Any) -> Any:
        """One object for equal sections (same keys in the same order, same values)."""
        return self._interned.setdefault((root, json.dumps(node)), node)

    def swept(
        self, root: str, node: Any, axes: Sequence[tuple[Axis, int]], indices: tuple[int, ...]
    ) -> dict[str, Any]:
        """The interned section `node` with each axis set to its value at `indices`."""
        key = (id(node), indices)
        made = self._swept.pop(key, None)
        if made is None:
            config: dict[str, Any] = {root: node}
            for (axis, _), index in zip(axes, indices, strict=True):
                config = axis.applied(config, axis.values[index])
            made = config[root]
            if len(self._swept) >= self.max_swept:
                del self._swept[next(iter(self._swept))]
        self._swept[key] = made  # most recently used last
        return made


class ExpansionCaches:
    """What an expansion keeps while it walks a sweep: the swept sections (`_Sections`), their
    readings (`SectionMemo`) and the id texts of the fields they give (`SeriesIds`), each
    bounded by `swept_nodes` distinct swept nodes (`pipeline.schema.memo.SWEPT_NODES`), least
    recently used first out, so a sweep of any length keeps a bounded amount."""

    def __init__(self, whole_grid: bool, swept_nodes: int = SWEPT_NODES) -> None:
        self.sections = _Sections(swept_nodes)
        self.memo = SectionMemo(2 * swept_nodes + UNSWEPT_READINGS)
        self.ids = SeriesIds(whole_grid, max_entries=swept_nodes)

    def sizes(self) -> tuple[int, int, int]:
        """(swept sections, readings, id texts) kept now."""
        return len(self.sections), len(self.memo), self.ids.kept


def _points(
    config: DictConfig, axes: Sequence[Axis], made: Mapping[str, str], shared: _Sections
) -> Iterator[tuple[dict[str, Any], Mapping[str, Any], bool]]:
    """(sweep point, scenario sections with the axis values set, whether the sections are
    shared nodes) for each axis combination, in `itertools.product` order.

    The sections are plain dicts. Without interpolations they are shared nodes (`_Sections`);
    with them, each point's sections are re-resolved after its values are set, so a field
    that refers to a swept field follows it.
    """
    template = cast(dict[str, Any], OmegaConf.to_container(config, resolve=False))
    for axis in axes:
        axis.check_target(template)
    roots = {k: template[k] for k in AXIS_ROOTS if k in template}
    if _has_interpolation(roots):
        for values in itertools.product(*(a.values for a in axes)):
            point: dict[str, Any] = {**made}
            sections = dict(roots)  # the scenario is built from a copy, never the template
            for axis, value in zip(axes, values, strict=True):
                sections = axis.applied(sections, value)
                point[axis.key] = jsonable(value)
            node = OmegaConf.create(sections)
            yield point, {k: plain(node[k], k) for k in AXIS_ROOTS if k in node}, False
        return
    base = {k: shared.intern(k, v) for k, v in roots.items()}
    by_root: dict[str, list[tuple[Axis, int]]] = {}
    for position, axis in enumerate(axes):
        by_root.setdefault(axis.path[0], []).append((axis, position))
    texts = [[jsonable(v) for v in axis.values] for axis in axes]
    for indices in itertools.product(*(range(len(a.values)) for a in axes)):
        point = {**made}
        for axis, position, index in zip(axes, range(len(axes)), indices, strict=True):
            point[axis.key] = texts[position][index]
        sections = dict(base)
        for root, on_root in by_root.items():
            picked = tuple(indices[position] for _, position in on_root)
            sections[root] = shared.swept(root, base[root], on_root, picked)
        yield point, sections, True


def iter_sweep(
    cfg: DictConfig,
    *,
    whole_grid: bool = False,
    overrides: Sequence[str] | None = None,
    say: Say = _silent,
    firsts: bool = False,
    composed: dict[tuple[str, ...], DictConfig] | None = None,
    caches: ExpansionCaches | None = None,
) -> Iterator[SweepSeries]:
    """Every series of the run in expansion order (see the module docstring), lazily: a
    choice combination is composed when its first series is reached (`say` names it), and
    each distinct config node is read once (`pipeline.schema.memo`). With `firsts`, only the
    first series of each choice combination. `composed`, given, keeps each combination's
    config for the next expansion of the same sweep (`pipeline.sweep.stream`). `caches`, given,
    are what the walk keeps (`ExpansionCaches`; new ones by default)."""
    sweep = sweep_from_config(cfg)
    caches = caches or ExpansionCaches(whole_grid)
    if caches.ids.whole_grid != whole_grid:
        raise ValueError("the expansion's caches were made for the other whole_grid")
    memo, ids, shared = caches.memo, caches.ids, caches.sections
    for made, config in _choice_configs(cfg, sweep, overrides, say, composed):
        for point, sections, reuse in _points(config, sweep.axes, made, shared):
            text = canonical_json(point)
            try:
                scenario = load_scenario(sections, memo if reuse else None)
            except ConfigError as err:
                if not point:
                    raise
                raise ConfigError(
                    err.key, err.value, f"{err.allowed} (sweep point {text})"
                ) from err
            yield SweepSeries(scenario, ids(scenario), text)
            if firsts:
                break


def expand_sweep(
    cfg: DictConfig, *, whole_grid: bool = False, overrides: Sequence[str] | None = None
) -> list[SweepSeries]:
    """Every series of the run, in expansion order; ConfigError on a bad sweep.

    `overrides` are the command-line overrides `cfg` was composed with; they are needed only
    when the sweep has choices, and default to the running Hydra job's. Two sweep points that
    give the same scenario are refused: an axis that changes nothing is a mistake in the sweep.
    """
    return list(unique(iter_sweep(cfg, whole_grid=whole_grid, overrides=overrides)))


def unique(series: Iterable[SweepSeries]) -> Iterator[SweepSeries]:
    """The series as they come; ConfigError at the first whose scenario an earlier one has
    (two sweep points that give the same scenario: an axis or choice that changes nothing).
    Keeps the ids seen (about 8 bytes a series, `pipeline.sweep.seen`), not the series."""
    seen = SeenIds()
    for item in series:
        if item.series_id in seen:
            raise ConfigError(
                "sweep",
                json.loads(item.sweep_point),
                "this sweep point gives the same scenario as an earlier one; an axis or "
                "choice changes nothing",
            )
        seen.add(item.series_id)
        yield item


def expand_scenarios(cfg: DictConfig, overrides: Sequence[str] | None = None) -> list[Scenario]:
    """Every scenario of the run, in expansion order (`expand_sweep` without the metadata)."""
    return [s.scenario for s in expand_sweep(cfg, overrides=overrides)]
