"""Logging for kactor's processes: one line per record on stderr, quiet libraries."""

from __future__ import annotations

import logging
import sys


def setup_logging(level: str = "INFO", prefix: str = "") -> None:
    fmt = f"%(asctime)s %(levelname)-5s {prefix}[%(name)s] %(message)s"
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), format=fmt, stream=sys.stderr,
                        force=True)
    for noisy in ("kazoo", "Thespian", "py4j", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
