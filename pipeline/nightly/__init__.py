"""Nightly runs: each run a dated partition `run_date=YYYY-MM-DD` of one persistent root.

- settings: `output.nightly_root` and `output.run_date` -> NightlySettings
- partition: dated directories; stage a run, publish it with renames, clean what a killed run left
- changes: what moved since the previous date (thresholds, forecast years), as Markdown and JSON
- run: `run_nightly`, the `dmlimits +experiment=nightly` job

docs/nightly.md describes the layout, the guarantees and a cron line.
"""
