"""Names in `pipeline/` and `hydra_plugins/` that nothing in the package calls, kept on purpose.

`make lint` runs `vulture pipeline hydra_plugins vulture_whitelist.py`: a public name that no
code of the package uses is reported unless it is listed here. Only the package is scanned, so a name that
only tests use is reported too: list it here only when a test is its purpose (an inspection
API, a documented oracle). tests/test_vulture_whitelist.py imports this file, so an entry whose
name no longer exists fails the tests: delete its line with the name.

Each entry is an attribute access or a name, which is all vulture needs to count a use.
"""

# ruff: noqa: B018  (the bare expressions are the point: each one is a use)

from rich.progress import ProgressColumn

import pipeline
from hydra_plugins.dmlimits import sweeper
from pipeline.app import api, execute
from pipeline.catalog import load, metrics
from pipeline.execute import settings
from pipeline.forecast import moving, observed, text, uncertainty
from pipeline.io import dataset, tables
from pipeline.model import caches, limits
from pipeline.model.records import run
from pipeline.model.runs import run_search, training_run
from pipeline.model.search import search
from pipeline.sources import http
from pipeline.trends import fit

# Called by Python, not by code.
pipeline.__getattr__  # PEP 562: `pipeline.run` imports the API on first access
sweeper.DmlimitsSweeper.setup  # Hydra's Sweeper interface: Hydra calls it
ProgressColumn.render  # rich draws the bar's times column with it (progress._times_column)

# Public API for users (docs/api.md, docs/schema.md), not used inside the package.
api.Result.summary  # docs/api.md: the text table `dmlimits` prints
dataset.read_points  # docs/schema.md: the dataset as one polars frame
dataset.read_thresholds  # docs/schema.md: the same for thresholds

# Chosen by a config value (execution.backend = threading), never named in code.
settings.Backend.THREADING

# Fields of records, read by whoever holds the record (users, tests, the printed report).
execute.RunReport.batches  # batches written, part of a run's report
load.Entry.release_source  # accelerators.csv's source column for the release date
metrics.Metric.description  # what a trend metric measures, for readers of METRICS
http.Response.attempts  # requests a fetch made

# Inspection APIs whose callers are tests and benchmarks by design.
fit.TrendFit.value_at  # the fitted curve at a year, checked against the fit's definition
search.optimal_layout  # the best layout at one fixed cluster size (spec §16.3-16.5 checks)
search.split_rows  # the splits a candidate set has, checked against the network tables
limits.latency_bound_params  # the paper's simple latency bound (§3), docs/model.md
run.RunCost.narayanan_flop_per_s_per_gpu  # Narayanan et al.'s FLOP count, validation
training_run.LayerBreakdown.total_s  # one layer's time, validation against Ivanov et al.
training_run.layer_breakdown  # time per operator class (docs/validation.md)
run_search.best_run_layout  # the fastest fitting layout: the budget property tests' oracle
tables.COMPLETION_MARKER  # the table written last in a batch: the registry's rule, tested
caches.registered  # the model's cache registry: its caches and bounds (docs/model.md)
caches.cache_counts  # hits, misses and entries per cache, for tests and benchmarks
caches.clear_caches  # every cache emptied, as in a fresh process (tests, bench/)

# Observed data: a frontier rule chosen by a config value; the fitted frontier's band.
observed.FrontierRule.TOP_N  # forecast.fitted.rule = top_n
observed.FrontierFit.flop_prediction_at  # the largest run's compute in a year (bench/results.py)
text.forecast_markdown  # the Markdown forecast table (bench/forecast_table.py)
moving.moving_year  # the one-line rule, the oracle `moving_years` is tested against
uncertainty.Distribution.UNIFORM  # forecast.uncertainty.inputs.<key>.distribution = uniform
