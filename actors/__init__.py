"""The actors: thin shells that move messages and hand I/O to edges; decisions live in ``core``."""
