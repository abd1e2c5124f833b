"""dmlimits: data-movement limits to frontier model training, as a scenario-sweep pipeline."""

__version__ = "0.1.0"
