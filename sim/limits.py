"""The simulator's bounds and defaults that its commands show before they run it (argparse's defaults, help and
checks): here, apart from sim/run.py and sim/generate.py, so that ``kactor trace show`` or ``kactor sim --help`` does
not import the whole simulator, and with it every broker module, to print a number (0.5 s a command)."""

MIN_BROKERS, MAX_BROKERS = 3, 9  # `kactor sim`'s range (its topic has 3 replicas); 9 keeps a unit's ids in a decade
STEPS = 50  # a seed's steps, as `kactor sim` campaigns run them: crashes, restarts and partitions happen in most
SIM_LINES = 100_000  # `kactor trace generate`'s record lines simulated at most by default; the rest are tiles
