"""Frozen specs in SI units and what the model returns: hardware, scaling laws, search options,
physics switches, transformer and run records, results."""
