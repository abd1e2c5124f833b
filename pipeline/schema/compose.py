"""Compose conf/config.yaml with overrides through Hydra's compose API.

conf/ sits at the repository root, next to the `pipeline` package, and is found as
``Path(__file__).parents[2] / "conf"``. That holds for a source checkout and for the
editable install the README uses (``pip install -e .``); a non-editable wheel does not
ship conf/.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
"""The Hydra config directory: <repository root>/conf."""
CONFIG_NAME = "config"
VERSION_BASE = "1.3"
"""Hydra behaviour version; the CLI's @hydra.main must use the same."""


def compose_config(
    overrides: Sequence[str] = (), *, return_hydra_config: bool = False
) -> DictConfig:
    """The root config composed with Hydra command-line style overrides.

    E.g. ``compose_config(["hardware=a100_sxm", "scaling=sparse",
    "scaling.grid.max_d_model=24576"])``. Multirun sweeps (``a,b``) are not expanded.
    Safe to call inside a running Hydra app: the global Hydra state is restored after.
    """
    global_hydra = GlobalHydra.instance()
    outer = global_hydra.hydra if global_hydra.is_initialized() else None
    global_hydra.clear()
    try:
        with initialize_config_dir(
            config_dir=str(CONF_DIR), job_name="dmlimits", version_base=VERSION_BASE
        ):
            return compose(
                config_name=CONFIG_NAME,
                overrides=list(overrides),
                return_hydra_config=return_hydra_config,
            )
    finally:
        if outer is not None:
            GlobalHydra.instance().initialize(outer)
