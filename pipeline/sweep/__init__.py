"""Expand a composed config into the scenarios (series) of one run."""

from pipeline.sweep.expand import expand_scenarios

__all__ = ["expand_scenarios"]
