"""Visual report of a dataset: PNG charts (`charts`) and an HTML page (`page`); `main` is the CLI."""
