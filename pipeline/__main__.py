"""`python -m pipeline` runs the `dmlimits` command."""

from pipeline.cli.entry import main

main()
