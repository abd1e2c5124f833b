"""One optimizer step: pipeline schedules and bubble, step and training time, utilization,
the bound of a layout, and the evaluation of a fixed layout (spec §7-§8, §16.4)."""
