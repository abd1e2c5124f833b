"""The bottleneck model of Erdil & Schneider-Joseph (2024): pure numpy, no I/O.

Subpackages, by physical resource, each importing only those listed below it
(an import contract in pyproject.toml; docs/model.md, "Layout of the code"):
- series: which limits a series reports under its physics; its closed forms (spec §11-§12)
- limits: series thresholds and the closed forms T_crit, T_limit (spec §11-§12)
- runs: one concrete training run, its layout search and its row
- search: candidate layouts, the best layout at a cluster size, the smallest cluster, a series
- step: schedules and bubble, step time, training time and utilization; fixed layouts
- memory, network: bytes a GPU holds (and the paper's aggregate check); collectives,
  network levels and splits, ring attention, network-time tables
- compute: matmul roofline and efficiency, layer times, attention, memory-bound operators, FLOP
- records: frozen specs and results (hardware, scaling laws, options, physics switches)
- caches: the one registry of every cache above; `clear_caches` empties them all
"""
