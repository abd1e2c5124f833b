"""Hydra config package: conf/ of the repository, shipped in the wheel as `pipeline.conf`.

Hydra finds it as ``pkg://pipeline.conf`` (`pipeline.schema.compose`); a package needs this file.
"""
