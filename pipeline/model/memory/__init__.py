"""Bytes the GPUs hold: the paper's cluster-wide check (spec §9) and per-GPU model state and
activations (realistic physics)."""
