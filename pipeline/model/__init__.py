"""The bottleneck model of Erdil & Schneider-Joseph (2024): pure numpy, no I/O.

Modules, by physics:
- hardware: GPU and network record, derived rates (spec §3)
- scaling: shape, data and batch laws (spec §1-§2)
- matmul: single-GPU matmul time through the memory hierarchy (spec §4)
- network: collective and point-to-point costs over network levels (spec §6)
- layout: degrees, level sizes and per-level splits (spec §5)
- step: step time, training time and utilization of layouts, vectorized (spec §7-§9)
- comm_table: network times tabulated per degree group and split, for the search (spec §6, §10)
- search: best layout at a cluster size, smallest cluster, a series (spec §10-§11)
- limits: series thresholds and the closed forms T_crit, T_limit (spec §11-§12)
"""
