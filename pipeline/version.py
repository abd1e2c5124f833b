"""This package's version: a leaf module, so a layer that records it imports nothing else."""

__version__ = "0.1.0"
