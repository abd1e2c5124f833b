"""Upper bounds on config values: far beyond any real hardware or plan, far below overflow.

A value typed in human units (`hbm_bandwidth_gb_per_s: 1e308`) can be finite yet overflow to
inf once converted to SI (× 1e9) or multiplied into a derived quantity (peak FLOP/s, training
compute). The schema converts each value once (`pipeline.units`) and then checks the SI
value against the bound here: finite and at most the bound, or a one-line `ConfigError`.
Each bound is orders of magnitude past today's hardware (H100 SXM in brackets) and small
enough that the model's products of them stay finite in float64 (max ~1.8e308).
docs/model.md lists them.
"""

from __future__ import annotations

MAX_INTEGER = 2**53
"""Any integer in the config (counts, sizes, layout degrees): integers up to 2^53 are exact in
float64, which the model uses for products such as n_gpu; it is also far inside int64."""

MAX_BANDWIDTH_BYTES_PER_S = 1e18
"""HBM, L2 and network bandwidth: 1 EB/s (H100 HBM 3.35e12 B/s). Network links may be inf."""
MAX_CLOCK_HZ = 1e12
"""Clock: 1 THz (H100 1.83e9 Hz)."""
MAX_FLOP_PER_CLOCK_PER_THREAD = 1e6
"""Arithmetic per clock per thread (H100: 32 for dense BF16)."""
MAX_FLOP_PER_S = 1e30
"""A GPU's peak rate, flop/clock/thread x 128 threads x SMs x clock (H100 9.9e14 FLOP/s)."""
MAX_MEMORY_BYTES = 1e18
"""HBM, L2 and register capacity per GPU: 1 EB (H100 HBM 8e10 bytes)."""
MAX_POWER_W = 1e15
"""A GPU's board power and a site's power budget: 1 PW (H100 700 W; a 5 GW site 5e9 W)."""
MAX_LATENCY_S = 3600.0
"""Matmul, network and Model B latencies: one hour per operation (H100 network 1.125e-6 s)."""
MAX_DURATION_S = 3.2e10
"""Training-time budgets (Model A and Model B): about 1,000 years (the paper's 7.885e6 s)."""
MAX_YEAR_S = 1e9
"""The length of a year used as the month unit (Model A: 3.154e7 s)."""
MAX_LAW_CONSTANT = 1e30
"""Scaling-law constants (tokens per parameter, experts, anchors, batch references in tokens)."""
MAX_FLOP = 1e60
"""Compute anchors (Model B's T0 = 3e23 FLOP, the critical batch's reference compute)."""
MAX_EXPONENT = 10.0
"""Magnitude of a scaling-law exponent (depth 0.3, batch 0.2 to 0.4)."""
MIN_YEAR = 1000.0
MAX_YEAR = 10000.0
"""The calendar year of the forecasts' base compute (2024)."""
MAX_GROWTH_PER_YEAR = 1e6
"""A compute growth factor per year (4 to 5 today)."""
