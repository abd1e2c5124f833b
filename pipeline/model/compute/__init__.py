"""Time on one GPU's arithmetic and memory hierarchy: the matmul roofline (spec §4) and its
realistic efficiencies, per-layer times, the attention core, memory-bound operators, FLOP counts."""
