"""Whether a concrete run's layout is searched: `parallelism=search` chosen explicitly.

conf/config.yaml's default option is `parallelism=default`, which is `search` on the
scaling-law grid but evaluates a run (`run=...`) exactly as given. A run's layout is searched
when its own `run.layout_search` is true or when `search` is the chosen parallelism option:
on the command line or in API overrides, in an experiment or run file's defaults list
(`override /parallelism: search`), or as a sweep choice. Every parallelism file names itself
(`name:` equals the file name, as Hydra's `runtime.choices` records the choice), so the
composed config of each series says which option made it, however it was chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEARCH = "search"
"""The parallelism option that searches a run's layout when chosen explicitly."""


def chosen_parallelism(sections: Mapping[str, Any]) -> str | None:
    """The parallelism option a series' config was composed with (its `parallelism.name`)."""
    node = sections.get("parallelism")
    name = node.get("name") if isinstance(node, Mapping) else None
    return None if name is None else str(name)


def search_run_layout(sections: dict[str, Any]) -> None:
    """Set `run.layout_search` in scenario `sections` when `search` was chosen explicitly."""
    run = sections.get("run")
    if isinstance(run, dict) and chosen_parallelism(sections) == SEARCH:
        run["layout_search"] = True
