"""Time on the network: collectives per level (spec §6), level sizes and splits (spec §5.2),
ring attention, and network-time tables for the search."""
