"""The application layer: plan, execute and write a run; what `dmlimits`, nightly and the API call.

- plan: a composed config -> a validated `RunPlan` (series, root, execution, resume)
- execute: `execute_plan` evaluates the plan's series and writes each as it finishes
- write: the row builders of every table (`series_rows`, `run_tables`), batches of series
  written one part per table, thresholds last
- resumed: the rows of series a resumed run skips, read back from their part files
- tally: what a run keeps of each finished series (every summary, or for a streamed sweep
  only what its summary prints: `RunTally`)
- summary: the text table a run prints
- api: `pipeline.run`, the Python entry point (docs/api.md)

docs/architecture.md gives the layer order; `lint-imports` enforces it.
"""
