"""One concrete training run (conf/run/): its step, its layout search and its row."""
