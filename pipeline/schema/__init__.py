"""Typed config schema: the contract between conf/ and the model.

Config files hold human units in their key names (GB/s, us, MHz, MiB, months); this
package checks every value and converts it to SI once (`units`). Every rejection is a
`ConfigError` whose message is one line: ``<dotted key> = <value>: <what is allowed>``.

Modules, by config group:
- hardware: conf/hardware -> HardwareSpec (spec §3)
- scaling: conf/scaling and conf/batch -> ScalingLaws, duration, d_model grid (spec §1-§2)
- parallelism: conf/parallelism -> SearchOptions, Quirks, a fixed Layout (spec §5, §10, §14)
- closed_form: the root closed_form node -> Model B settings (spec §12)
- scenario: the whole composed config -> Scenario (`load_scenario`)
- compose: Hydra's compose API over pkg://pipeline.conf and user config dirs (`compose_config`)
- keys: the keys each root node may hold (`check_known_keys`)
- section, units, errors: checked reading, unit conversion, the error type
- memo: section readings remembered by node identity (a sweep reads each node once)
"""

from pipeline.model.records.closed_form import ClosedFormSettings
from pipeline.schema.compose import CONF_DIR, compose_config
from pipeline.schema.errors import ConfigError, InputError
from pipeline.schema.hardware import hardware_from_config
from pipeline.schema.scenario import Scenario, load_scenario

__all__ = [
    "CONF_DIR",
    "ClosedFormSettings",
    "ConfigError",
    "InputError",
    "Scenario",
    "compose_config",
    "hardware_from_config",
    "load_scenario",
]
