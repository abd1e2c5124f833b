"""`python -m pipeline` runs the `dmlimits` command."""

from pipeline.cli.main import main

main()
