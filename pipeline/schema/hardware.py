"""A hardware node -> HardwareSpec: a GPU's own (`gpu`) or a catalog GPU projected (`projected`).

The one entry for the `hardware` group: conf/hardware/<gpu>.yaml holds a GPU's fields in human
units (`pipeline.schema.gpu`); conf/hardware/projected.yaml names a ``base`` GPU and a year
(`pipeline.schema.projected`, which reads its base through `gpu`, so neither imports this
module).
"""

from __future__ import annotations

from pipeline.model.records.hardware import HardwareSpec
from pipeline.schema.errors import UnknownKeyError
from pipeline.schema.gpu import HARDWARE_KEYS, gpu_from_config
from pipeline.schema.projected import PROJECTED_KEYS, projected_from_config
from pipeline.schema.section import plain


def hardware_from_config(node: object, path: str = "hardware") -> HardwareSpec:
    """The HardwareSpec of one hardware node (a DictConfig or a plain mapping): a projection
    when it has a ``base`` key (`projected_from_config`), else a GPU (`gpu_from_config`, whose
    docstring lists what is refused; a key of a projection, such as ``year``, says so).
    ``path`` is the node's dotted key, for error messages."""
    data = plain(node, path)
    if isinstance(data, dict) and "base" in data:
        return projected_from_config(data, path)
    try:
        return gpu_from_config(data, path)
    except UnknownKeyError as err:
        key = err.key.removeprefix(f"{path}.")
        if key not in PROJECTED_KEYS - HARDWARE_KEYS:
            raise
        hint = f"{key} is a key of hardware=projected (a catalog GPU moved to a year)"
        raise UnknownKeyError(err.key, err.value, err.allowed_keys, hint) from None
