"""kactor's version, defined once: the package's (pyproject.toml reads it from here), `kactor --version`'s, and the
one a trace's header names (a broker's trace writer, the synthetic trace generator)."""

__version__ = "0.1.0"
