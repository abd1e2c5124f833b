"""Whether a concrete run's layout is searched: `parallelism=search` chosen explicitly.

conf/config.yaml's default option is `parallelism=default`, which is `search` on the
scaling-law grid but evaluates a run (`run=...`) exactly as given. A run's layout is searched
when its own `run.layout_search` is true or when `search` is the chosen parallelism option:
on the command line or in API overrides, in an experiment or run file's defaults list
(`override /parallelism: search`), or as a sweep choice. The choice is Hydra's own record of
the composition (`hydra.runtime.choices`), so every way of choosing counts the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from pipeline.schema import compose_config
from pipeline.schema.compose import app_search_path

GROUP = "parallelism"
SEARCH = "search"
"""The option that searches a run's layout when chosen explicitly."""


def has_runs(cfg: DictConfig, choice_groups: Sequence[str]) -> bool:
    """Whether `cfg` or one of its sweep's choice groups gives a concrete run."""
    return cfg.get("run") is not None or "run" in choice_groups


def chosen_parallelism(overrides: Sequence[str] | None) -> str | None:
    """The parallelism option of the composition that `overrides` made; None when unknown.

    Inside a running Hydra app the job's own choice; else `overrides` composed again (with
    the app's search path) to read Hydra's record of the choices.
    """
    if overrides is None:
        if not HydraConfig.initialized():
            return None
        return _choice(HydraConfig.get().runtime.choices)
    composed = compose_config(
        list(overrides), return_hydra_config=True, search_path=app_search_path()
    )
    return _choice(composed.hydra.runtime.choices)


def _choice(choices: Mapping[str, Any]) -> str | None:
    value = choices.get(GROUP)
    return None if value is None else str(value)


def search_run_layout(sections: dict[str, Any], choice: str | None) -> None:
    """Set `run.layout_search` in scenario `sections` when `choice` is `search`."""
    run = sections.get("run")
    if choice == SEARCH and isinstance(run, dict):
        run["layout_search"] = True
