"""The layout search (spec §10-§11): enumeration of candidates, their cached sets, the best
layout at a cluster size, the smallest cluster, a series."""
