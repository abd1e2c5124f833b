"""The nodes the root config may hold, and the keys of those no reader checks: a misspelt key
(``+output.rot=x``, ``+outptu.root=x``) is an error naming it, never silently ignored.

`ROOT_NODES` is the declaration: a node whose value is None is checked key by key by its own
reader (the config groups by `pipeline.schema`, `sweep`, `forecast`, `execution` and
`closed_form` by theirs); a node with a set of keys is checked here. A new section is added by
declaring it here, with its keys unless its reader checks them.
"""

from __future__ import annotations

from collections.abc import Mapping

from omegaconf import DictConfig, OmegaConf

from pipeline.schema.errors import MISSING, UnknownKeyError

OUTPUT_KEYS = frozenset(
    {"root", "whole_grid", "resume", "series_per_part", "flush_s", "nightly_root", "run_date"}
)
"""The root `output` node (conf/config.yaml; docs/schema.md)."""

ROOT_NODES: Mapping[str, frozenset[str] | None] = {
    "hardware": None,  # pipeline.schema.hardware
    "scaling": None,  # pipeline.schema.scaling
    "batch": None,  # pipeline.schema.scaling
    "parallelism": None,  # pipeline.schema.parallelism
    "physics": None,  # pipeline.schema.physics (keys from the Physics and Efficiency fields)
    "run": None,  # pipeline.schema.run (keys from the TransformerShape and RunLayout fields)
    "closed_form": None,  # pipeline.schema.closed_form
    "power": None,  # pipeline.schema.power
    "constraints": None,  # pipeline.schema.power
    "sweep": None,  # pipeline.sweep.expand
    "forecast": None,  # pipeline.forecast.settings
    "sources": None,  # pipeline.sources.settings
    "execution": None,  # pipeline.execute.settings
    "output": OUTPUT_KEYS,
}
"""Every root node of a composed config (besides Hydra's own `hydra`) and its declared keys."""


def _shown(node: DictConfig | Mapping[str, object], key: str) -> object:
    """The value under ``key`` as written (interpolations unresolved), for the message."""
    if isinstance(node, DictConfig):
        value = OmegaConf.to_container(node, resolve=False).get(key, MISSING)  # type: ignore[union-attr]
        return value
    return node.get(key, MISSING)


def check_known_keys(cfg: DictConfig | Mapping[str, object]) -> None:
    """UnknownKeyError (a ConfigError) naming the first root node or declared node key that
    is not known."""
    for node in cfg:
        name = str(node)
        if name == "hydra":
            continue
        if name not in ROOT_NODES:
            raise UnknownKeyError(name, _shown(cfg, name), ROOT_NODES)
        keys = ROOT_NODES[name]
        value = cfg[name]
        if keys is None or not isinstance(value, Mapping | DictConfig):
            continue
        for key in value:
            if str(key) not in keys:
                raise UnknownKeyError(f"{name}.{key}", _shown(value, str(key)), keys)
